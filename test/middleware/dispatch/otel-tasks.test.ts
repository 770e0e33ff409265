/**
 * Tasks under `otel()` (real SDK): the work runs in a span of its own (INTERNAL, `tools/call {tool}`, a child of
 * the creating request's span, ended with the task and its outcome), handlers' spans nest under it in every round,
 * and `tasks/get`, `tasks/update`, `tasks/cancel` link to the creating span, on another replica too (the link
 * comes from the shared store).
 */
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { memoryTaskStore } from '../../../middleware/dispatch/index';
import type { TaskStore } from '../../../core/task-store';
import { elicitationRequest } from '../../../lib/mrtr';
import { textResult } from '../../../handlers/tools/index';
import { EXT, type Works, taskTools } from '../../support/tasks-harness';
import {
  type Sdk,
  type TracedServer,
  asContext,
  call,
  parentOf,
  spanOf,
  startSdk,
  tracedServer,
} from '../../support/otel-across';
import { until } from '../../support/streaming';

const CAPS = { extensions: { [EXT]: {} }, elicitation: {} };
const CLIENT_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const META = { traceparent: `00-${CLIENT_TRACE}-00f067aa0ba902b7-01` };

describe('tasks under otel()', () => {
  let sdk: Sdk;
  let store: TaskStore;
  let a: TracedServer;
  let b: TracedServer;
  const works: Works = new Map();

  beforeAll(async () => {
    sdk = startSdk();
    store = memoryTaskStore();
    // b's writes reach a's work at a's next renewal (a third of the lease).
    const tasks = { store, leaseMs: 1500 };
    const handlers = { tools: taskTools(works) as never };
    a = await tracedServer(sdk, { handlers, tasks });
    b = await tracedServer(sdk, { handlers, tasks });
  });
  afterAll(async () => {
    await a.close();
    await b.close();
    await sdk.close();
  });

  const work = (name: string) => (x: ReadableSpan) => x.name === name && x.kind === SpanKind.INTERNAL;

  /** Poll tasks/get on `url` until `done` holds for the task (a turn of the clock between polls). */
  async function poll(
    url: string,
    taskId: string,
    done: (t: Record<string, any>) => boolean,
  ): Promise<Record<string, any>> {
    for (;;) {
      const t = (await call(url, 'tasks/get', { taskId }, CAPS)).result!;
      if (done(t)) return t;
      await new Promise((r) => setTimeout(r, 5));
    }
  }
  const settled = (url: string, taskId: string) =>
    poll(url, taskId, (t) => ['completed', 'failed', 'cancelled'].includes(t.status as string));

  test('the work’s span is a child of the creating request’s, and handler spans nest under it across rounds', async () => {
    const tracer = sdk.provider.getTracer('handler');
    works.set('report', async (ctx) => {
      const round = ctx.inputResponses?.ok === undefined ? 1 : 2;
      tracer.startSpan(`given ${round}`, {}, asContext(ctx.otel)).end();
      tracer.startActiveSpan(`ambient ${round}`, (sp) => sp.end());
      if (round === 1)
        return ctx.inputRequired!({ inputRequests: { ok: elicitationRequest('Go?', { type: 'object' }) } });
      return textResult('done');
    });
    const created = await call(a.url, 'tools/call', { name: 'report', arguments: {} }, CAPS, META);
    expect(created.result?.resultType).toBe('task');
    const taskId = created.result!.taskId as string;
    await until(() => sdk.spans().some((x) => x.name === 'given 1'), 'the first round');
    const asked = await poll(a.url, taskId, (t) => t.status === 'input_required');
    const key = Object.keys(asked.inputRequests as object)[0]!;
    const upd = await call(
      b.url,
      'tasks/update',
      { taskId, inputResponses: { [key]: { action: 'accept', content: {} } } },
      CAPS,
    );
    expect(upd.result).toBeDefined();
    const done = await settled(a.url, taskId);
    expect(done.status).toBe('completed');

    const creating = await spanOf(sdk, created.id);
    const w = await sdk.span(work('tools/call report'), 'the work’s span');
    expect(creating.kind).toBe(SpanKind.SERVER);
    expect(parentOf(creating)).toBe('00f067aa0ba902b7');
    expect(w.spanContext().traceId).toBe(CLIENT_TRACE);
    expect(parentOf(w)).toBe(creating.spanContext().spanId);
    expect(w.attributes).toMatchObject({
      'mcp.method.name': 'tools/call',
      'gen_ai.tool.name': 'report',
      'gen_ai.operation.name': 'execute_tool',
      'mcpware.task.status': 'completed',
      'mcpware.task.outcome': 'ok',
    });
    expect(w.attributes).not.toHaveProperty('error.type');
    expect(w.status.code).toBe(SpanStatusCode.UNSET);
    // The work outlives its request: its span ends after the request's.
    expect(hr(w.endTime)).toBeGreaterThan(hr(creating.endTime));
    for (const n of ['given 1', 'ambient 1', 'given 2', 'ambient 2']) {
      const h = sdk.spans().find((x) => x.name === n)!;
      expect([n, parentOf(h)]).toEqual([n, w.spanContext().spanId]);
      expect(h.spanContext().traceId).toBe(CLIENT_TRACE);
    }
    // tasks/update on the other replica links to the creating request's span.
    const u = await spanOf(sdk, upd.id);
    expect(u.links.map((l) => [l.context.traceId, l.context.spanId, l.attributes])).toEqual([
      [CLIENT_TRACE, creating.spanContext().spanId, { 'mcpware.link': 'task' }],
    ]);
  });

  test('tasks/get and tasks/cancel on another replica link to the creating span; a cancelled task’s span is no error', async () => {
    works.set(
      'wait',
      (ctx) =>
        new Promise((resolve) => ctx.signal.addEventListener('abort', () => resolve(textResult('stopped')))),
    );
    const created = await call(a.url, 'tools/call', { name: 'wait', arguments: {} }, CAPS);
    const taskId = created.result!.taskId as string;
    const got = await call(b.url, 'tasks/get', { taskId }, CAPS);
    expect(got.result?.status).toBe('working');
    const cancelled = await call(b.url, 'tasks/cancel', { taskId }, CAPS);
    expect(cancelled.error).toBeUndefined();
    expect((await settled(a.url, taskId)).status).toBe('cancelled');

    const creating = await spanOf(sdk, created.id);
    const target = [creating.spanContext().traceId, creating.spanContext().spanId];
    for (const id of [got.id, cancelled.id]) {
      const s = await spanOf(sdk, id);
      expect(s.links.map((l) => [l.context.traceId, l.context.spanId])).toEqual([target]);
    }
    const w = await sdk.span(work('tools/call wait'), 'the work’s span');
    expect(parentOf(w)).toBe(creating.spanContext().spanId);
    expect(w.attributes).toMatchObject({
      'mcpware.task.status': 'cancelled',
      'mcpware.task.outcome': 'cancelled',
    });
    expect(w.status.code).toBe(SpanStatusCode.UNSET);
  });

  test('a work that throws ends its span with error.type and status ERROR; a tool error is tool_error', async () => {
    works.set('boom', () => {
      throw new Error('secret detail');
    });
    works.set('soft', () => ({ ...textResult('no'), isError: true }));
    const boom = await call(a.url, 'tools/call', { name: 'boom', arguments: {} }, CAPS);
    const soft = await call(a.url, 'tools/call', { name: 'soft', arguments: {} }, CAPS);
    expect((await settled(b.url, boom.result!.taskId as string)).status).toBe('failed');
    expect((await settled(b.url, soft.result!.taskId as string)).status).toBe('completed');
    const wb = await sdk.span(work('tools/call boom'), 'the failed work’s span');
    expect(wb.attributes).toMatchObject({ 'error.type': '-32603', 'rpc.response.status_code': '-32603' });
    expect(wb.status).toEqual({ code: SpanStatusCode.ERROR, message: 'Internal error' });
    const ws = await sdk.span(work('tools/call soft'), 'the tool error’s span');
    expect(ws.attributes).toMatchObject({ 'error.type': 'tool_error', 'mcpware.task.outcome': 'tool_error' });
    expect(ws.status.code).toBe(SpanStatusCode.ERROR);
  });
});

function hr(t: [number, number]): number {
  return t[0] * 1e9 + t[1];
}
