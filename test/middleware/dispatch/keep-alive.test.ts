/**
 * Every SSE answer the dispatcher opens writes `: keep-alive` comment frames at the `keepAliveMs` interval, not
 * only listen streams: a tools/call answered as a stream (progress first, then a slow tool) stays busy on the
 * wire until its result, in both eras, so a proxy's idle timeout does not cut it. The timer stops with the
 * stream. The option is `streams.keepAliveMs`; its former flat names are refused, naming it.
 */
import { dispatch } from '../../../middleware/dispatch/index';
import { ToolRegistry, textResult } from '../../../handlers/tools/index';
import { PLATFORMS, type Stack, stack } from '../../support/dispatch-harness';
import { deferred, envelope, legacyHeaders, modernHeaders, openStream, until } from '../../support/streaming';

const SI = { name: 'keep-alive', version: '1' };
const COMMENT = ': keep-alive\n\n';

function call(era: 'modern' | 'legacy', id: number) {
  const meta = era === 'modern' ? envelope({}, { progressToken: 'p' }) : { progressToken: 'p' };
  return { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'slow', arguments: {}, _meta: meta } };
}

const headers = (era: 'modern' | 'legacy') =>
  era === 'modern' ? modernHeaders('tools/call', 'slow') : legacyHeaders();

describe.each(PLATFORMS)('keep-alive comments on request-scoped streams, %s', (platform) => {
  let s: Stack;
  let url: string;
  let gate = deferred();
  const tools = new ToolRegistry({
    tools: [
      {
        name: 'slow',
        description: 'one progress message, then silent until the test lets it finish',
        call: async (_a, ctx) => {
          ctx.progress!(1, 2, 'started');
          await gate.promise;
          return textResult('done');
        },
      },
    ],
  });
  const mcp = dispatch({ anonymous: true, handlers: { tools }, serverInfo: SI, streams: { keepAliveMs: 5 } });

  beforeAll(async () => {
    s = await stack(platform, [mcp]);
    url = `${s.base}/mcp`;
  });
  afterAll(() => s.close());
  beforeEach(() => {
    gate = deferred();
  });

  test.each(['modern', 'legacy'] as const)(
    '%s: comment frames arrive while the tool runs, before its result',
    async (era) => {
      const st = await openStream(url, call(era, 1), headers(era));
      expect(st.headers['content-type']).toMatch(/^text\/event-stream/);
      const progress = await st.next();
      expect(progress.method).toBe('notifications/progress');
      // The tool waits for the gate: a comment seen now was written while the stream had nothing else to say.
      await until(() => st.text().includes(COMMENT), 'a keep-alive comment before the result');
      gate.resolve();
      const final = await st.next();
      expect(final.id).toBe(1);
      await st.ended;
      const text = st.text();
      expect(text.indexOf(COMMENT)).toBeGreaterThan(text.indexOf('notifications/progress'));
      expect(text.indexOf(COMMENT)).toBeLessThan(text.indexOf('"result"'));
      // Nothing follows the final event: the timer stopped with the stream.
      expect(text.endsWith('\n\n')).toBe(true);
      expect(text.slice(text.lastIndexOf('event: message'))).toMatch(/"result"/);
    },
  );
});

describe('streams.keepAliveMs option', () => {
  const tools = new ToolRegistry({ tools: [] });
  const make = (o: object) => () => dispatch({ anonymous: true, handlers: { tools }, serverInfo: SI, ...o });
  test('is checked; the flat keepAliveMs and listenKeepAliveMs are refused, naming it', () => {
    expect(make({ streams: { keepAliveMs: 0 } })).not.toThrow();
    expect(make({ streams: { keepAliveMs: -1 } })).toThrow(/^dispatch: option "streams.keepAliveMs"/);
    expect(make({ streams: { keepAliveMS: 1 } })).toThrow(
      /^dispatch: unknown option streams."keepAliveMS"; did you mean "keepAliveMs"/,
    );
    for (const old of ['keepAliveMs', 'listenKeepAliveMs']) {
      expect(make({ [old]: 0 })).toThrow(
        new RegExp(`^dispatch: option "${old}" belongs at streams.keepAliveMs`),
      );
    }
  });
});
