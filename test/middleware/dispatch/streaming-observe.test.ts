/**
 * Redaction, audit and metrics see streamed answers: a notification's secret is masked on the wire and counted,
 * the audit record and the metrics describe the streamed call, and a cancelled stream is recorded as aborted.
 * Real winston (a stream transport into memory) and a real prom-client Registry.
 */
import { Writable } from 'node:stream';
import { Registry } from 'prom-client';
import winston from 'winston';
import { audit } from '../../../middleware/audit/index';
import { dispatch } from '../../../middleware/dispatch/index';
import { metrics } from '../../../middleware/metrics/index';
import { redact } from '../../../middleware/redact/index';
import { ToolRegistry, textResult } from '../../../handlers/tools/index';
import { PLATFORMS, type Stack, stack } from '../../support/dispatch-harness';
import { deferred, envelope, modernHeaders, openStream, post, until } from '../../support/streaming';

describe.each(PLATFORMS)('observing streamed answers on %s', (platform) => {
  let s: Stack;
  let url: string;
  const lines: Record<string, unknown>[] = [];
  const registry = new Registry();
  let aborted = deferred();
  const tools = new ToolRegistry({
    tools: [
      {
        name: 'chatty',
        description: 'progress with an email in it',
        call: (_a, ctx) => {
          ctx.progress!(1, 2, 'mailing bob@example.com');
          return textResult('sent');
        },
      },
      {
        name: 'slow',
        description: 'waits for the client to go away',
        call: async (_a, ctx) => {
          ctx.progress!(1);
          await new Promise<void>((r) => ctx.signal.addEventListener('abort', () => r(), { once: true }));
          aborted.resolve();
          return textResult('late');
        },
      },
    ],
  });

  beforeAll(async () => {
    const sink = new Writable({
      write(chunk: Buffer, _enc, cb) {
        lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
        cb();
      },
    });
    const logger = winston.createLogger({
      format: winston.format.json(),
      transports: [new winston.transports.Stream({ stream: sink })],
    });
    s = await stack(platform, [
      audit({ logger }),
      metrics({ registry, tools: ['chatty', 'slow'] }),
      redact(),
      dispatch({ anonymous: true, handlers: { tools }, serverInfo: { name: 'observe', version: '1' } }),
    ]);
    url = `${s.base}/mcp`;
  });
  afterAll(() => s.close());

  const call = (id: number, name: string) => ({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name, arguments: {}, _meta: envelope({}, { progressToken: 'p' }) },
  });

  test('a streamed call: masked notification, an audit record, metrics', async () => {
    const r = await post(url, call(1, 'chatty'), modernHeaders('tools/call', 'chatty'));
    expect(r.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(r.text).not.toContain('bob@example.com');
    expect(r.messages).toHaveLength(2);
    await until(() => lines.some((l) => l.rpc_id === '1'), 'the audit record');
    const rec = lines.find((l) => l.rpc_id === '1')!;
    expect(rec).toMatchObject({ method: 'tools/call', target: 'chatty', status: 200, outcome: 'ok' });
    expect(rec.redacted).toEqual(['email']);
    const text = await registry.metrics();
    expect(text).toMatch(/tool_calls_total\{tool="chatty",outcome="ok"\} 1/);
    expect(text).toMatch(/redactions_total\{rule="email"\} 1/);
  });

  test('a cancelled stream is recorded as aborted', async () => {
    aborted = deferred();
    const st = await openStream(url, call(2, 'slow'), modernHeaders('tools/call', 'slow'));
    await st.next();
    st.close();
    await aborted.promise;
    await until(() => lines.some((l) => l.rpc_id === '2'), 'the audit record');
    expect(lines.find((l) => l.rpc_id === '2')).toMatchObject({ method: 'tools/call', outcome: 'aborted' });
  });
});
