/**
 * A task's work and its context, over HTTP: progress() sets the task's status message (written with the next
 * renewal), charge() adds to the creating request's chargedMs, a result over the caller's byte bound fails the
 * task `task_too_large`; and the `tasks` options are validated.
 */
import type { CallContext, TaskWork } from '../../../core/contract';
import { dispatch } from '../../../middleware/dispatch/index';
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

describe('dispatch() tasks: the work', () => {
  const release = gate();
  const works: Works = new Map<string, TaskWork>([
    [
      'reporting',
      async (ctx: CallContext) => {
        ctx.charge(25);
        ctx.progress!(1, 2, 'halfway there');
        await release.promise;
        return { content: [{ type: 'text', text: 'done' }] };
      },
    ],
    ['huge', () => ({ content: [{ type: 'text', text: 'x'.repeat(5000) }] })],
    [
      'twice',
      async (ctx: CallContext) => {
        ctx.charge(1);
        return { content: [] };
      },
    ],
  ]);
  let s: TaskServer;

  beforeAll(async () => {
    s = await taskServer(works, { leaseMs: 90, maxBytesPerPrincipal: 4096 });
  });
  afterAll(async () => {
    release.open();
    await s.close();
  });

  test('progress() becomes the statusMessage of the working task; charge() reaches the creating request', async () => {
    const t = await create(s.base, 'reporting');
    const working = await pollTask(s.base, t.taskId, (x) => x.statusMessage !== undefined);
    expect(working).toMatchObject({ status: 'working', statusMessage: 'halfway there' });
    const call = s.tracks.find((x) => x.task?.taskId === t.taskId);
    expect(call).toBeDefined();
    release.open();
    const done = await pollTask(s.base, t.taskId, terminal);
    expect(done.status).toBe('completed');
    expect(done).not.toHaveProperty('statusMessage');
    expect(call!.locals!.chargedMs).toBe(25);
  });

  test("a result over the caller's byte bound fails the task task_too_large", async () => {
    const t = await create(s.base, 'huge');
    const done = await pollTask(s.base, t.taskId, terminal);
    expect(done.status).toBe('failed');
    expect(done.error).toEqual({
      code: -32603,
      message: 'The task result is too large to keep',
      data: { reason: 'task_too_large' },
    });
  });

  test('tasks/get of an ended task keeps answering the same', async () => {
    const t = await create(s.base, 'twice');
    const first = await pollTask(s.base, t.taskId, terminal);
    const again = (await rpc(s.base, 'tasks/get', { taskId: t.taskId })).body.result!;
    expect(again).toEqual(first);
  });
});

describe('dispatch() tasks: options', () => {
  const base = { handlers: {}, serverInfo: { name: 'x', version: '1' } };

  test.each([
    [{ leasMs: 100 }, /unknown option tasks\."leasMs"; did you mean "leaseMs"\?/],
    [{ leaseMs: 5 }, /tasks\.leaseMs/],
    [{ ttlMs: 1.5 }, /tasks\.ttlMs/],
    [{ maxTasksPerPrincipal: 0 }, /tasks\.maxTasksPerPrincipal/],
    [{ maxBytesPerPrincipal: 10 }, /tasks\.maxBytesPerPrincipal/],
    [{ store: { get() {} } }, /tasks\.store/],
  ])('%j is refused with a TypeError naming it', (tasks, message) => {
    expect(() => dispatch({ ...base, tasks: tasks as never })).toThrow(TypeError);
    expect(() => dispatch({ ...base, tasks: tasks as never })).toThrow(message);
  });

  test('declaring the extension in capabilities without the tasks option is refused', () => {
    const capabilities = { extensions: { 'io.modelcontextprotocol/tasks': {} } };
    expect(() => dispatch({ ...base, capabilities })).toThrow(/capabilities\.extensions/);
    expect(() => dispatch({ ...base, capabilities, tasks: {} }).close()).not.toThrow();
  });

  test('tasks: {} is valid, and stats() counts the works running here', async () => {
    const mcp = dispatch({ ...base, anonymous: true, tasks: {} });
    expect(mcp.stats().tasksRunning).toBe(0);
    await mcp.close();
  });
});
