/**
 * dispatch()'s tasks over HTTP, as a declaring modern client sees them: a task is stored before its
 * CreateTaskResult is answered, and tasks/get shows it working, then completed with the result inlined (a tool
 * error too), or failed with the JSON-RPC error of its work; tasks/cancel stops it.
 */
import { ErrorCode, McpError } from '../../../lib/errors';
import type { TaskWork } from '../../../core/contract';
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

const text = (t: string) => ({ content: [{ type: 'text', text: t }] });

describe('dispatch() tasks: lifecycle', () => {
  const works: Works = new Map();
  let s: TaskServer;
  const release = gate();
  let sawSignal: AbortSignal | undefined;

  beforeAll(async () => {
    works.set('greet', () => text('Hello'));
    works.set('held', async () => {
      await release.promise;
      return text('released');
    });
    works.set('failing', () => ({ ...text('it broke'), isError: true }));
    works.set('protocol', () => {
      throw new McpError(ErrorCode.InvalidParams, 'Bad job', { job: 7 });
    });
    works.set('crash', () => {
      throw new Error('secret detail');
    });
    works.set('endless', ((ctx) => {
      sawSignal = ctx.signal;
      return new Promise(() => {});
    }) as TaskWork);
    s = await taskServer(works, {});
  });
  afterAll(async () => {
    release.open();
    await s.close();
  });

  test('the CreateTaskResult is flat, and tasks/get right after it finds the task working', async () => {
    const a = await rpc(s.base, 'tools/call', { name: 'held', arguments: {} });
    expect(a.status).toBe(200);
    const r = a.body.result!;
    expect(r).toMatchObject({
      resultType: 'task',
      status: 'working',
      ttlMs: 3_600_000,
      pollIntervalMs: 1000,
    });
    expect(typeof r.taskId).toBe('string');
    expect(r.taskId.length).toBeGreaterThanOrEqual(22);
    expect(Date.parse(r.createdAt)).not.toBeNaN();
    expect(r).not.toHaveProperty('result');
    const got = await rpc(s.base, 'tasks/get', { taskId: r.taskId });
    expect(got.body.result).toMatchObject({
      resultType: 'complete',
      taskId: r.taskId,
      status: 'working',
      ttlMs: 3_600_000,
    });
    release.open();
    const done = await pollTask(s.base, r.taskId, terminal);
    expect(done).toMatchObject({ status: 'completed', result: text('released') });
    expect(done.result).not.toHaveProperty('resultType');
  });

  test('a client that does not declare the extension is answered directly', async () => {
    const a = await rpc(s.base, 'tools/call', { name: 'greet', arguments: {} }, { declare: false });
    expect(a.body.result).toMatchObject({ resultType: 'complete', ...text('Hello') });
    expect(a.body.result).not.toHaveProperty('taskId');
  });

  test('a tool error is still completed, with isError in the result', async () => {
    const t = await create(s.base, 'failing');
    const done = await pollTask(s.base, t.taskId, terminal);
    expect(done).toMatchObject({ status: 'completed', result: { isError: true, ...text('it broke') } });
  });

  test('an McpError fails the task with its code, message and data', async () => {
    const t = await create(s.base, 'protocol');
    const done = await pollTask(s.base, t.taskId, terminal);
    expect(done.status).toBe('failed');
    expect(done.error).toEqual({ code: -32602, message: 'Bad job', data: { job: 7 } });
    expect(done).not.toHaveProperty('result');
  });

  test('any other throw fails the task with a generic -32603', async () => {
    const t = await create(s.base, 'crash');
    const done = await pollTask(s.base, t.taskId, terminal);
    expect(done.status).toBe('failed');
    expect(done.error).toEqual({ code: -32603, message: 'Internal error' });
    expect(JSON.stringify(done)).not.toContain('secret detail');
  });

  test('tasks/cancel ends a running task cancelled and aborts its signal; again on the ended task, the same ack', async () => {
    const t = await create(s.base, 'endless');
    await pollTask(s.base, t.taskId, () => sawSignal !== undefined);
    const ack = await rpc(s.base, 'tasks/cancel', { taskId: t.taskId });
    expect(ack.body.result).toEqual({ resultType: 'complete', _meta: expect.any(Object) });
    const done = await pollTask(s.base, t.taskId, terminal);
    expect(done.status).toBe('cancelled');
    expect(sawSignal!.aborted).toBe(true);
    const again = await rpc(s.base, 'tasks/cancel', { taskId: t.taskId });
    expect(again.status).toBe(200);
    expect(again.body.result?.resultType).toBe('complete');
    expect((await rpc(s.base, 'tasks/get', { taskId: t.taskId })).body.result?.status).toBe('cancelled');
  });

  test('the creating request carries a TaskTrack that ends with the task', async () => {
    const t = await create(s.base, 'greet');
    await pollTask(s.base, t.taskId, terminal);
    const track = s.tracks.find((x) => x.task?.taskId === t.taskId)!.task!;
    const end = await new Promise((r) => track.onEnd(r));
    expect(end).toMatchObject({ status: 'completed', outcome: 'ok' });
    expect(track.tool).toBe('greet');
  });
});
