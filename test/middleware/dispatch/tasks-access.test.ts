/**
 * Who reaches a task, over HTTP behind a real apiKeyAuth: a task is its creator's (another caller gets exactly
 * the unknown-task answer), the tasks methods need the declared extension and a modern request, and each caller's
 * live tasks are bounded. The extension is advertised by server/discover only when tasks are configured.
 */
import type { TaskWork } from '../../../core/contract';
import {
  EXT,
  type TaskServer,
  type Works,
  create,
  legacyRpc,
  rpc,
  taskServer,
} from '../../support/tasks-harness';

const never: TaskWork = () => new Promise(() => {});

describe('dispatch() tasks: access', () => {
  const works: Works = new Map([['never', never]]);
  let s: TaskServer;
  let off: TaskServer;

  beforeAll(async () => {
    s = await taskServer(works, { maxTasksPerPrincipal: 3 });
    off = await taskServer(works, undefined);
  });
  afterAll(async () => {
    await s.close();
    await off.close();
  });

  test("another caller's task, an unknown id and an over-long id get the same -32602", async () => {
    const t = await create(s.base, 'never', { who: 'alice' });
    expect((await rpc(s.base, 'tasks/get', { taskId: t.taskId }, { who: 'alice' })).body.result?.status).toBe(
      'working',
    );
    const answers = [];
    for (const method of ['tasks/get', 'tasks/update', 'tasks/cancel']) {
      const params = method === 'tasks/update' ? { inputResponses: {} } : {};
      for (const [taskId, who] of [
        [t.taskId, 'bob'],
        ['no-such-task', 'alice'],
        ['x'.repeat(200), 'alice'],
      ] as const) {
        const a = await rpc(s.base, method, { taskId, ...params }, { who });
        answers.push({ status: a.status, error: a.body.error });
      }
    }
    for (const a of answers)
      expect(a).toEqual({
        status: 200,
        error: { code: -32602, message: 'Failed to retrieve task: Task not found' },
      });
    // Bob's cancel did not reach alice's task.
    expect((await rpc(s.base, 'tasks/get', { taskId: t.taskId })).body.result?.status).toBe('working');
  });

  test('a request that does not declare the extension gets -32021 naming it, before its params are read', async () => {
    for (const method of ['tasks/get', 'tasks/update', 'tasks/cancel']) {
      const a = await rpc(s.base, method, { taskId: 'gate-test', inputResponses: {} }, { declare: false });
      expect(a.status).toBe(400);
      expect(a.body.error).toMatchObject({
        code: -32021,
        data: { requiredCapabilities: { extensions: { [EXT]: {} } } },
      });
    }
  });

  test('legacy requests, tasks/list and tasks/result are -32601; so are the methods when tasks are off', async () => {
    for (const method of ['tasks/get', 'tasks/cancel']) {
      const a = await legacyRpc(s.base, method, { taskId: 'x' });
      expect(a.body.error?.code).toBe(-32601);
    }
    for (const method of ['tasks/list', 'tasks/result']) {
      const a = await rpc(s.base, method, { taskId: 'x' });
      expect([a.status, a.body.error?.code]).toEqual([404, -32601]);
    }
    const a = await rpc(off.base, 'tasks/get', { taskId: 'x' });
    expect([a.status, a.body.error?.code]).toEqual([404, -32601]);
  });

  test('server/discover advertises the extension only with tasks; a legacy initialize never names it', async () => {
    const d = await rpc(s.base, 'server/discover', {});
    expect(d.body.result!.capabilities.extensions).toEqual({ [EXT]: {} });
    const none = await rpc(off.base, 'server/discover', {});
    expect(none.body.result!.capabilities.extensions).toBeUndefined();
    const init = await legacyRpc(s.base, 'initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'x', version: '1' },
    });
    expect(init.body.result!.capabilities).not.toHaveProperty('extensions');
  });

  test("a caller's live tasks are bounded: one more is 429 task_limit, another caller is not affected", async () => {
    const fresh = await taskServer(works, { maxTasksPerPrincipal: 2 });
    try {
      await create(fresh.base, 'never');
      await create(fresh.base, 'never');
      const a = await rpc(fresh.base, 'tools/call', { name: 'never', arguments: {} });
      expect(a.status).toBe(429);
      expect(a.body.error).toMatchObject({ code: 429, data: { limit: 'tasks_per_principal', max: 2 } });
      await create(fresh.base, 'never', { who: 'bob' });
    } finally {
      await fresh.close();
    }
  });
});
