/**
 * limits() in front of dispatch({ tasks }), over HTTP: a task's slot holds until the task ends (while its
 * tasks/get still goes through), and the work its ctx.charge reports is charged at its end.
 */
import type { TaskWork } from '../../../core/contract';
import { create, gate, pollTask, rpc, terminal, type Works } from '../../support/tasks-harness';
import { type TaskStack, eventually, taskStack } from '../../support/task-stack';

const text = (t: string) => ({ content: [{ type: 'text', text: t }] });

describe('limits and dispatch() tasks', () => {
  let s: TaskStack | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  it("with perUserConcurrency 1, a running task blocks the user's next tools/call, not its tasks/get", async () => {
    const release = gate();
    const works: Works = new Map<string, TaskWork>([
      [
        'held',
        async () => {
          await release.promise;
          return text('done');
        },
      ],
    ]);
    s = await taskStack(works, { perUserConcurrency: 1 });
    const t = await create(s.base, 'held');
    const second = await rpc(s.base, 'tools/call', { name: 'held', arguments: {} });
    expect(second.status).toBe(429);
    expect(second.body.error).toMatchObject({ code: 429, data: { limit: 'user_concurrent' } });
    const polled = await rpc(s.base, 'tasks/get', { taskId: t.taskId });
    expect(polled.status).toBe(200);
    expect(polled.body.result).toMatchObject({ status: 'working' });
    // Another user is not held up.
    expect((await rpc(s.base, 'tools/call', { name: 'held', arguments: {} }, { who: 'bob' })).status).toBe(
      200,
    );

    release.open();
    await pollTask(s.base, t.taskId, terminal);
    const stack = s;
    await eventually(() => stack.limiter.stats().inflight.user === 0, 'the slots given back');
    expect((await rpc(s.base, 'tools/call', { name: 'held', arguments: {} })).body.result).toMatchObject({
      resultType: 'task',
    });
  });

  it("the task's ctx.charge is charged at its end", async () => {
    const works: Works = new Map<string, TaskWork>([
      [
        'costly',
        (ctx) => {
          ctx.charge(150);
          return text('done');
        },
      ],
    ]);
    s = await taskStack(works, { costBudgetPerHour: 100 });
    await create(s.base, 'costly');
    // The charge lands at the task's end (its tasks/get is not refused for the budget: tasks-budget.test.ts).
    const stack = s;
    await eventually(() => stack.charges.some(([ms]) => ms === 150), 'the charge');
    expect(s.charges.find(([ms]) => ms === 150)).toEqual([150, 'charged']);
    const next = await rpc(s.base, 'tools/call', { name: 'costly', arguments: {} });
    expect(next.status).toBe(429);
    expect(next.body.error).toMatchObject({ data: { limit: 'cost_budget' } });
  });
});
