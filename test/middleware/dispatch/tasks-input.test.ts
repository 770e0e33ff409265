/**
 * A task's input rounds over HTTP: the work returns ctx.inputRequired(), tasks/get shows the requests under wire
 * keys unique for the task's life, tasks/update answers them (partly, or with keys the task never asked), and the
 * work is called again with the answers under its own keys.
 */
import type { CallContext, TaskWork } from '../../../core/contract';
import type { JsonObject } from '../../../lib/jsonrpc';
import {
  type TaskServer,
  type Works,
  create,
  pollTask,
  rpc,
  taskServer,
  terminal,
} from '../../support/tasks-harness';

const elicit = (message: string) => ({
  method: 'elicitation/create',
  params: { mode: 'form', message, requestedSchema: { type: 'object', properties: {} } },
});
const CAPS = { elicitation: {} };

describe('dispatch() tasks: input rounds', () => {
  const works: Works = new Map();
  const seen: (Readonly<Record<string, JsonObject>> | undefined)[] = [];
  let s: TaskServer;

  beforeAll(async () => {
    works.set('two', ((ctx: CallContext) => {
      seen.push(ctx.inputResponses);
      const r = ctx.inputResponses;
      if (r === undefined) return ctx.inputRequired!({ inputRequests: { a: elicit('A?'), b: elicit('B?') } });
      if (!Object.hasOwn(r, 'c')) return ctx.inputRequired!({ inputRequests: { c: elicit('C?') } });
      return { content: [{ type: 'text', text: `got ${Object.keys(r).join(',')}` }] };
    }) as TaskWork);
    s = await taskServer(works, {});
  });
  afterAll(() => s.close());

  test('a partial update keeps the rest outstanding; a full one resumes the work with its own keys', async () => {
    const t = await create(s.base, 'two', { caps: CAPS });
    const asked = await pollTask(s.base, t.taskId, (x) => x.status === 'input_required');
    expect(Object.keys(asked.inputRequests).sort()).toEqual(['1:a', '1:b']);
    expect(asked.inputRequests['1:a']).toEqual(elicit('A?'));

    const ack = await rpc(s.base, 'tasks/update', {
      taskId: t.taskId,
      inputResponses: { '1:a': { action: 'accept', content: { v: 1 } }, '9:zz': { action: 'accept' }, b: {} },
    });
    expect(ack.status).toBe(200);
    expect(ack.body.result).toMatchObject({ resultType: 'complete' });
    expect(Object.keys(ack.body.result!).sort()).toEqual(['_meta', 'resultType']);
    const partial = await rpc(s.base, 'tasks/get', { taskId: t.taskId });
    expect(partial.body.result!.status).toBe('input_required');
    expect(Object.keys(partial.body.result!.inputRequests)).toEqual(['1:b']);

    await rpc(s.base, 'tasks/update', {
      taskId: t.taskId,
      inputResponses: { '1:b': { action: 'accept', content: { v: 2 } } },
    });
    // The second round's key is new, though the handler named it as freely as the first.
    const second = await pollTask(
      s.base,
      t.taskId,
      (x) => x.status === 'input_required' && x.inputRequests['2:c'],
    );
    expect(Object.keys(second.inputRequests)).toEqual(['2:c']);
    expect(seen[1]).toEqual({
      a: { action: 'accept', content: { v: 1 } },
      b: { action: 'accept', content: { v: 2 } },
    });

    // An answer to the first round's key now is ignored: the task still waits for 2:c.
    await rpc(s.base, 'tasks/update', { taskId: t.taskId, inputResponses: { '1:a': { action: 'decline' } } });
    expect((await rpc(s.base, 'tasks/get', { taskId: t.taskId })).body.result!.status).toBe('input_required');

    await rpc(s.base, 'tasks/update', { taskId: t.taskId, inputResponses: { '2:c': { action: 'accept' } } });
    const done = await pollTask(s.base, t.taskId, terminal);
    expect(done).toMatchObject({
      status: 'completed',
      result: { content: [{ type: 'text', text: 'got c' }] },
    });
    expect(done).not.toHaveProperty('inputRequests');
  });

  test('tasks/update with params that are not an object of responses is -32602', async () => {
    const t = await create(s.base, 'two', { caps: CAPS });
    const a = await rpc(s.base, 'tasks/update', { taskId: t.taskId, inputResponses: [] as never });
    expect(a.body.error?.code).toBe(-32602);
    const b = await rpc(s.base, 'tasks/get', { taskId: 7 as never });
    expect(b.body.error?.code).toBe(-32602);
  });
});
