/**
 * Tasks across replicas: two dispatchers on one task store. A task created on A is read, updated and cancelled
 * through B, and A's work sees the update or the cancel at its next lease renewal; a replica that stops renewing
 * (its store writes fail) has its task failed `task_worker_lost` by B's next read; a replica's close() ends its
 * running tasks `failed` `task_interrupted`.
 */
import type { CallContext, TaskWork } from '../../../core/contract';
import { type TaskStore, memoryTaskStore } from '../../../middleware/dispatch/index';
import {
  type TaskServer,
  type Works,
  create,
  gate,
  pollTask,
  rpc,
  taskServer,
  terminal,
} from '../../support/tasks-harness';

const LEASE = 300;
const elicit = {
  method: 'elicitation/create',
  params: { mode: 'form', message: 'ok?', requestedSchema: { type: 'object', properties: {} } },
};

/** The store with its writes failing while `broken` holds (a replica that can no longer reach it). */
function breakable(inner: TaskStore): TaskStore & { broken: boolean } {
  const s = {
    broken: false,
    create: (t: Parameters<TaskStore['create']>[0], b: Parameters<TaskStore['create']>[1]) =>
      inner.create(t, b),
    get: (owner: string, id: string) => inner.get(owner, id),
    replace: (t: Parameters<TaskStore['replace']>[0], b: Parameters<TaskStore['replace']>[1]) =>
      s.broken ? Promise.reject(new Error('store unreachable')) : inner.replace(t, b),
  };
  return s;
}

describe('dispatch() tasks: two replicas on one store', () => {
  const store = memoryTaskStore();
  const aStore = breakable(store);
  const signals = new Map<string, AbortSignal>();
  const started = gate();
  const works: Works = new Map<string, TaskWork>([
    [
      'ask',
      (ctx: CallContext) =>
        ctx.inputResponses === undefined
          ? ctx.inputRequired!({ inputRequests: { ok: elicit } })
          : { content: [{ type: 'text', text: `answered ${JSON.stringify(ctx.inputResponses.ok)}` }] },
    ],
    [
      'endless',
      (ctx: CallContext) => {
        signals.set(ctx.taskId!, ctx.signal);
        started.open();
        return new Promise(() => {});
      },
    ],
  ]);
  let a: TaskServer;
  let b: TaskServer;

  beforeAll(async () => {
    a = await taskServer(works, { store: aStore, leaseMs: LEASE });
    b = await taskServer(works, { store, leaseMs: LEASE });
  });
  afterAll(async () => {
    aStore.broken = false;
    await a.close();
    await b.close();
    await store.close?.();
  });

  test('created on A, answered through B: the work on A resumes with the answer', async () => {
    const t = await create(a.base, 'ask', { caps: { elicitation: {} } });
    const onB = await pollTask(b.base, t.taskId, (x) => x.status === 'input_required');
    expect(Object.keys(onB.inputRequests)).toEqual(['1:ok']);
    const ack = await rpc(b.base, 'tasks/update', {
      taskId: t.taskId,
      inputResponses: { '1:ok': { action: 'accept' } },
    });
    expect(ack.body.result?.resultType).toBe('complete');
    const done = await pollTask(b.base, t.taskId, terminal);
    expect(done.result).toEqual({ content: [{ type: 'text', text: 'answered {"action":"accept"}' }] });
  });

  test("cancelled through B: A's work is aborted and the task ends cancelled", async () => {
    const t = await create(a.base, 'endless');
    await pollTask(b.base, t.taskId, () => signals.has(t.taskId));
    expect((await rpc(b.base, 'tasks/cancel', { taskId: t.taskId })).body.result?.resultType).toBe(
      'complete',
    );
    const done = await pollTask(b.base, t.taskId, terminal);
    expect(done.status).toBe('cancelled');
    expect(signals.get(t.taskId)!.aborted).toBe(true);
    expect(a.mcp.stats().tasksRunning).toBe(0);
  });

  test('a replica that stops renewing loses its task: the next read fails it task_worker_lost', async () => {
    const t = await create(a.base, 'endless');
    await pollTask(b.base, t.taskId, () => signals.has(t.taskId));
    aStore.broken = true;
    const done = await pollTask(b.base, t.taskId, terminal);
    expect(done.status).toBe('failed');
    expect(done.error).toEqual({
      code: -32603,
      message: 'The task stopped: the server running it went away',
      data: { reason: 'task_worker_lost' },
    });
    const lost = b.tracks.find((x) => x.method === 'tasks/get' && x.task?.taskId === t.taskId)?.task;
    expect(lost?.ended).toMatchObject({ status: 'failed', outcome: 'lost', code: -32603 });
    expect(lost?.ended?.elsewhere).toBeUndefined();
    aStore.broken = false;
    // A, back in touch with the store, sees the task ended and stops its work.
    await pollTask(a.base, t.taskId, () => signals.get(t.taskId)!.aborted);
    const track = a.tracks.find((x) => x.method === 'tools/call' && x.task?.taskId === t.taskId)!.task!;
    await pollTask(a.base, t.taskId, () => track.ended !== undefined);
    // B's read recorded the end; A's track says so, so that audit and metrics count the task once.
    expect(track.ended).toMatchObject({ status: 'failed', outcome: 'lost', elsewhere: true });
  });

  test('a cancel that finds the lease lapsed ends the task itself, and its request carries the end', async () => {
    const t = await create(a.base, 'endless');
    await pollTask(b.base, t.taskId, () => signals.has(t.taskId));
    aStore.broken = true;
    await new Promise((r) => setTimeout(r, LEASE + 50));
    expect((await rpc(b.base, 'tasks/cancel', { taskId: t.taskId })).body.result?.resultType).toBe(
      'complete',
    );
    const cancel = b.tracks.find((x) => x.method === 'tasks/cancel' && x.task?.taskId === t.taskId)?.task;
    expect(cancel?.ended).toMatchObject({ status: 'cancelled', outcome: 'cancelled' });
    expect(cancel?.ended?.elsewhere).toBeUndefined();
    aStore.broken = false;
    const track = a.tracks.find((x) => x.method === 'tools/call' && x.task?.taskId === t.taskId)!.task!;
    await pollTask(a.base, t.taskId, () => track.ended !== undefined);
    expect(track.ended).toMatchObject({ status: 'cancelled', elsewhere: true });
  });

  test("close() ends the replica's running tasks failed task_interrupted", async () => {
    const c = await taskServer(works, { store, leaseMs: LEASE });
    const t = await create(c.base, 'endless');
    await pollTask(b.base, t.taskId, () => signals.has(t.taskId));
    expect(c.mcp.stats().tasksRunning).toBe(1);
    const track = c.tracks.find((x) => x.task?.taskId === t.taskId)!.task!;
    await c.close();
    expect(signals.get(t.taskId)!.aborted).toBe(true);
    expect(c.mcp.stats().tasksRunning).toBe(0);
    expect(track.ended).toMatchObject({ status: 'failed', outcome: 'error', code: -32603 });
    const done = (await rpc(b.base, 'tasks/get', { taskId: t.taskId })).body.result!;
    expect(done.status).toBe('failed');
    expect(done.error.data).toEqual({ reason: 'task_interrupted' });
  });
});
