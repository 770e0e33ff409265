/**
 * A handler that throws is logged with what it belongs to: the method, and the tool, prompt or resource the
 * request named. Over HTTP, in both eras, with a real winston logger writing JSON lines.
 */
import { checkHeaders, classifyRevision, dispatch, ok, parse, ToolRegistry } from '../../index';
import { FORGED, jsonLogger, RAW_IN_JSON, strings, UNSAFE, type JsonLogger } from '../support/json-logger';
import { ERAS, PLATFORMS, stack, type Stack } from '../support/dispatch-harness';

const serverInfo = { name: 'failing', version: '1' };
const boom = (what: string) => {
  throw new Error(`${what} exploded`);
};

describe.each(PLATFORMS)('a failing handler on %s', (platform) => {
  let s: Stack;
  let log: JsonLogger;
  beforeAll(async () => {
    log = jsonLogger();
    const tools = new ToolRegistry({
      tools: [
        { name: 'fine', call: () => ok({}) },
        { name: 'weather', call: () => boom('weather') },
      ],
    });
    s = await stack(platform, [
      parse(),
      classifyRevision(),
      checkHeaders({ paramHeaders: tools.paramHeaders }),
      dispatch({
        anonymous: true,
        serverInfo,
        logger: log.logger,
        handlers: {
          tools,
          prompts: { list: () => ({ prompts: [] }), get: () => boom('prompt') },
          resources: { list: () => ({ resources: [] }), read: () => boom('resource') },
          custom: { run: () => boom('custom') },
        },
      }),
    ]);
  });
  afterAll(() => s.close());
  beforeEach(() => {
    log.lines.length = 0;
  });

  const failure = (method: string) => {
    const records = log.records(`dispatch: handler for ${method}`);
    expect(records).toHaveLength(1);
    return records[0]!;
  };

  describe.each(ERAS)('%s', (era) => {
    test('a tool: the line names the method and the tool', async () => {
      const r = await s.client({ era }).callTool('weather', {});
      expect(r.body.error?.code).toBe(-32603);
      const rec = failure('tools/call');
      expect(rec).toMatchObject({ level: 'error', method: 'tools/call', tool: 'weather' });
      expect(rec.message).toContain('"weather"');
      expect((rec.error as { message: string }).message).toBe('weather exploded');
    });

    test('a prompt: the line names the method and the prompt', async () => {
      const r = await s.client({ era }).getPrompt('summary');
      expect(r.body.error?.code).toBe(-32603);
      const rec = failure('prompts/get');
      expect(rec).toMatchObject({ method: 'prompts/get', prompt: 'summary' });
      expect(rec.message).toContain('"summary"');
    });

    test('a resource: the line names the method and the URI', async () => {
      const r = await s.client({ era }).readResource('mem://notes/1');
      expect(r.body.error?.code).toBe(-32603);
      const rec = failure('resources/read');
      expect(rec).toMatchObject({ method: 'resources/read', uri: 'mem://notes/1' });
      expect(rec.message).toContain('"mem://notes/1"');
    });

    test('another method: the line names the method only', async () => {
      const r = await s.client({ era }).request('custom/run', { name: 'not-a-tool' });
      expect(r.body.error?.code).toBe(-32603);
      const rec = failure('custom/run');
      expect(rec.method).toBe('custom/run');
      expect(rec).not.toHaveProperty('tool');
      expect(rec).not.toHaveProperty('prompt');
    });

    test('a long name is clipped in the line', async () => {
      const name = 'p'.repeat(1000);
      const r = await s.client({ era }).getPrompt(name);
      expect(r.body.error?.code).toBe(-32603);
      const rec = failure('prompts/get');
      expect(rec.prompt).toBe(`${'p'.repeat(128)}…`);
    });

    test('a name carrying forgery material is sanitized in the message and the metadata', async () => {
      const r = await s.client({ era }).getPrompt(`bad${FORGED}name`);
      expect(r.body.error?.code).toBe(-32603);
      const rec = failure('prompts/get');
      expect(rec.prompt).toMatch(/^bad.*name$/su);
      for (const str of strings(rec)) expect(str).not.toMatch(UNSAFE);
      for (const line of log.lines) expect(line.trimEnd()).not.toMatch(RAW_IN_JSON);
    });
  });
});
