/**
 * audit() under a request trace (core/trace.ts): every record ends with `trace_id` and `span_id`, read from the
 * trace when the record is written (empty without one, and when the trace's ids are not in their W3C form); a
 * task_end record keeps the ids of the request that carried the task. Over HTTP.
 */
import { AUDIT_KEYS, audit } from '../../../middleware/audit/index';
import { dispatch } from '../../../middleware/dispatch/index';
import { type RequestTrace, TRACE } from '../../../core/trace';
import type { Middleware } from '../../../core/types';
import { type Stack, stack } from '../../support/dispatch-harness';
import { type HandTracing, handTracing } from '../../support/otel-hand-trace';
import { type TaskApp, rpc, startTaskApp } from '../../support/task-app';

type Rec = Record<string, unknown>;

function capture(): { logger: { log(l: string, m: string, meta: Rec): void }; records: Rec[] } {
  const records: Rec[] = [];
  return { records, logger: { log: (_l, _m, meta) => records.push({ ...meta }) } };
}

/** Wait for `n` records (each is written when its response closes, after the client has the answer). */
async function records(list: Rec[], n: number): Promise<Rec[]> {
  for (let i = 0; i < 2000 && list.length < n; i++) await new Promise((r) => setTimeout(r, 2));
  return list;
}

const SERVER_INFO = { name: 'audit-otel', version: '1.0.0' };
const tools = {
  list: () => ({ tools: [{ name: 'echo', inputSchema: { type: 'object' } }] }),
  call: () => ({ content: [{ type: 'text', text: 'hi' }] }),
};

let tracing: HandTracing;
beforeAll(() => {
  tracing = handTracing();
});
afterAll(() => tracing.close());

describe('audit() trace ids', () => {
  let s: Stack | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  test('trace_id and span_id end the keys, and carry the request span ids under a trace', async () => {
    expect(AUDIT_KEYS.slice(-2)).toEqual(['trace_id', 'span_id']);
    const { logger, records: list } = capture();
    s = await stack('node:http', [
      tracing.middleware,
      audit({ logger }),
      dispatch({ anonymous: true, handlers: { tools }, serverInfo: SERVER_INFO }),
    ]);
    const r = await s.client().callTool('echo');
    expect(r.status).toBe(200);
    const [rec] = (await records(list, 1)).filter((x) => x.method === 'tools/call');
    expect(rec!.trace_id).toMatch(/^[0-9a-f]{32}$/);
    const same = tracing.logs.find((l) => l.traceId === rec!.trace_id);
    expect(same?.req.method).toBe('POST');
    expect(rec!.span_id).toBe(same!.spanId);
    expect(Object.keys(rec!).slice(0, AUDIT_KEYS.length)).toEqual([...AUDIT_KEYS]);
  });

  test('a refused request under a trace carries its ids too', async () => {
    const { logger, records: list } = capture();
    s = await stack('node:http', [
      tracing.middleware,
      audit({ logger }),
      dispatch({ handlers: { tools }, serverInfo: SERVER_INFO, logger: { error() {}, warn() {} } }),
    ]);
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
    const r = await s.client().post(body);
    expect(r.status).toBe(500);
    const [rec] = await records(list, 1);
    expect(rec).toMatchObject({ reason: 'no_auth_decision' });
    expect(tracing.logs.at(-1)!.traceId).toBe(rec!.trace_id);
    expect(tracing.logs.at(-1)!.spanId).toBe(rec!.span_id);
  });

  test("without a trace, or with ids not in their W3C form, they are ''", async () => {
    const { logger, records: list } = capture();
    const odd: Middleware = (req, _res, next) => {
      if (req.headers['x-odd'] !== undefined) {
        const t = {
          traceId: 'X'.repeat(32) + '\n"',
          spanId: '0123456789abcdeF',
          run: <T>(fn: () => T): T => fn(),
          parsed: () => undefined,
          event: () => undefined,
          result: () => undefined,
          link: () => undefined,
          set: () => undefined,
          work: () => undefined,
        };
        (req.locals ??= {})[TRACE] = t as unknown as RequestTrace;
      }
      next();
    };
    s = await stack('node:http', [
      odd,
      audit({ logger }),
      dispatch({ anonymous: true, handlers: { tools }, serverInfo: SERVER_INFO }),
    ]);
    // Direct posts: no tools/list first.
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
    const plain = await s.client().post(body);
    const oddOne = await s.client().post(body, { 'x-odd': '1' });
    expect([plain.status, oddOne.status]).toEqual([200, 200]);
    const got = await records(list, 2);
    expect(got).toHaveLength(2);
    for (const rec of got) expect([rec.trace_id, rec.span_id]).toEqual(['', '']);
  });
});

describe('audit() trace ids of a task', () => {
  const apps: TaskApp[] = [];
  afterAll(async () => {
    for (const a of apps.splice(0)) await a.close();
  });

  test('a task_end record keeps the trace and span ids of the request that carried the task', async () => {
    const { logger, records: list } = capture();
    const app = await startTaskApp({ before: [tracing.middleware, audit({ logger })] });
    apps.push(app);
    const made = await rpc(app.port, 'alice', 'tools/call', { name: 'slow', arguments: {} });
    expect(made.status).toBe(200);
    const [created] = await records(list, 1);
    const carrying = tracing.logs.at(-1)!;
    expect(created).toMatchObject({
      result_type: 'task',
      trace_id: carrying.traceId,
      span_id: carrying.spanId,
    });
    // Another traced request in between: the task's end keeps the creating request's ids.
    await rpc(app.port, 'alice', 'tools/list', {});
    await records(list, 2);
    app.task(created!.task_id as string).end({ status: 'completed', outcome: 'ok', elapsedMs: 3 });
    const ended = (await records(list, 3)).find((r) => r.event === 'task_end');
    expect(ended).toMatchObject({ trace_id: carrying.traceId, span_id: carrying.spanId });
    expect(tracing.logs.at(-1)!.traceId).not.toBe(carrying.traceId);
  });
});
