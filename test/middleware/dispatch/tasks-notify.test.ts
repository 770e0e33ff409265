/**
 * notifications/tasks on subscriptions/listen streams over HTTP: the acknowledgement names only the caller's own
 * tasks, each status change arrives as the full DetailedTask (identical to tasks/get), another caller's task is
 * neither acknowledged nor notified, a client not declaring the extension gets -32021, the ids are bounded, a
 * closed stream is forgotten, and a stream on one replica hears a task run on another.
 */
import type { CallContext, TaskWork } from '../../../core/contract';
import { memoryTaskStore } from '../../../core/task-store';
import type { JsonObject } from '../../../lib/jsonrpc';
import { type Stream, envelope, modernHeaders, openStream, until } from '../../support/streaming';
import {
  EXT,
  KEYS,
  type TaskServer,
  type Who,
  type Works,
  create,
  gate,
  rpc,
  taskServer,
} from '../../support/tasks-harness';

const SUB = 'io.modelcontextprotocol/subscriptionId';
const ACK = 'notifications/subscriptions/acknowledged';
const elicit = {
  method: 'elicitation/create',
  params: { mode: 'form', message: 'Go on?', requestedSchema: { type: 'object', properties: {} } },
};

let nextId = 1000;

/** Open a listen stream of `who` naming `taskIds` (the client declares the extension unless `declare` is false). */
async function listen(
  base: string,
  taskIds: unknown,
  opts: { who?: Who; declare?: boolean } = {},
): Promise<Stream> {
  const caps = opts.declare === false ? {} : { extensions: { [EXT]: {} } };
  const message = {
    jsonrpc: '2.0',
    id: `sub-${nextId++}`,
    method: 'subscriptions/listen',
    params: { notifications: { taskIds }, _meta: envelope(caps) },
  };
  const headers = {
    ...modernHeaders('subscriptions/listen'),
    Authorization: `Bearer ${KEYS[opts.who ?? 'alice']}`,
  };
  return openStream(base, message, headers);
}

/** The acknowledged task ids (the first message must be the acknowledgement). */
async function acked(st: Stream): Promise<unknown> {
  const m = await st.next();
  expect(m.method).toBe(ACK);
  return ((m.params as JsonObject).notifications as JsonObject).taskIds;
}

/** The next notifications/tasks of a stream, without its _meta (checked to carry the subscription id). */
async function nextTask(st: Stream): Promise<Record<string, any>> {
  const m = await st.next();
  expect(m.method).toBe('notifications/tasks');
  const { _meta, ...task } = m.params as Record<string, any>;
  expect(Object.keys(_meta as JsonObject)).toEqual([SUB]);
  return task;
}

/** tasks/get's answer as a notification carries it (without resultType and _meta). */
async function got(base: string, taskId: string, who: Who = 'alice'): Promise<Record<string, any>> {
  const a = await rpc(base, 'tasks/get', { taskId }, { who });
  const { resultType: _r, _meta: _m, ...task } = a.body.result!;
  return task;
}

describe('dispatch() tasks: notifications/tasks on listen streams', () => {
  const works: Works = new Map();
  const gates = new Map<string, { promise: Promise<void>; open: (v: void) => void }>();
  const open: Stream[] = [];
  let s: TaskServer;

  /** A work that waits for gate `<name>:<round>` in each round; round 1 asks for input, round 2 completes. */
  const stepped =
    (name: string): TaskWork =>
    async (ctx: CallContext) => {
      const round = ctx.inputResponses === undefined ? 1 : 2;
      const g = gate();
      gates.set(`${name}:${round}`, g);
      await g.promise;
      if (round === 1) return ctx.inputRequired!({ inputRequests: { go: elicit } });
      return { content: [{ type: 'text', text: `${name} done` }] };
    };
  const pass = async (key: string): Promise<void> => {
    await until(() => gates.has(key), `gate ${key}`);
    gates.get(key)!.open();
  };

  beforeAll(async () => {
    works.set('a', stepped('a'));
    works.set('b', stepped('b'));
    works.set('c', stepped('c'));
    works.set(
      'stuck',
      ((ctx: CallContext) => new Promise((r) => ctx.signal.addEventListener('abort', r))) as TaskWork,
    );
    s = await taskServer(works, {});
  });
  afterEach(async () => {
    for (const st of open.splice(0)) st.close();
    await until(() => s.mcp.stats().listenStreams === 0, 'every listen stream to be gone');
  });
  afterAll(() => s.close());

  const start = async (taskIds: unknown, opts: { who?: Who; declare?: boolean } = {}) => {
    const st = await listen(s.base, taskIds, opts);
    open.push(st);
    return st;
  };

  test('working → input_required → working → completed, each the task as tasks/get answers it', async () => {
    const t = await create(s.base, 'a', { caps: { elicitation: {} } });
    const st = await start([t.taskId, 'no-such-task']);
    expect(st.status).toBe(200);
    expect(await acked(st)).toEqual([t.taskId]);
    // The current state once, right after the acknowledgement.
    expect(await nextTask(st)).toMatchObject({ taskId: t.taskId, status: 'working' });

    await pass('a:1');
    const asking = await nextTask(st);
    expect(asking).toMatchObject({ taskId: t.taskId, status: 'input_required' });
    expect(asking.inputRequests).toEqual({ '1:go': elicit });
    expect(asking).toEqual(await got(s.base, t.taskId));

    await rpc(s.base, 'tasks/update', { taskId: t.taskId, inputResponses: { '1:go': { action: 'accept' } } });
    const again = await nextTask(st);
    expect(again).toMatchObject({ taskId: t.taskId, status: 'working' });
    expect(again.inputRequests).toBeUndefined();

    await pass('a:2');
    const done = await nextTask(st);
    expect(done).toMatchObject({
      taskId: t.taskId,
      status: 'completed',
      result: { content: [{ type: 'text', text: 'a done' }] },
    });
    expect(Object.keys(done).sort()).toEqual(
      ['createdAt', 'lastUpdatedAt', 'pollIntervalMs', 'result', 'status', 'taskId', 'ttlMs'].sort(),
    );
    expect(done).toEqual(await got(s.base, t.taskId));
    // An ended task is no longer watched.
    await until(() => s.mcp.stats().listenTaskIds === 0, 'the ended task to be forgotten');
  });

  test('a cancelled task arrives cancelled; an already ended task is sent once, at once', async () => {
    const t = await create(s.base, 'stuck');
    const st = await start([t.taskId]);
    expect(await acked(st)).toEqual([t.taskId]);
    expect(await nextTask(st)).toMatchObject({ status: 'working' });
    await rpc(s.base, 'tasks/cancel', { taskId: t.taskId });
    const cancelled = await nextTask(st);
    expect(cancelled).toMatchObject({ taskId: t.taskId, status: 'cancelled' });
    expect(cancelled).toEqual(await got(s.base, t.taskId));

    const late = await start([t.taskId]);
    expect(await acked(late)).toEqual([t.taskId]);
    expect(await nextTask(late)).toEqual(cancelled);
  });

  test("another caller's task is neither acknowledged nor notified", async () => {
    const mine = await create(s.base, 'b', { who: 'bob', caps: { elicitation: {} } });
    const alices = await create(s.base, 'c', { caps: { elicitation: {} } });
    const bob = await start([alices.taskId, mine.taskId], { who: 'bob' });
    expect(await acked(bob)).toEqual([mine.taskId]);
    expect(await nextTask(bob)).toMatchObject({ taskId: mine.taskId, status: 'working' });
    const alice = await start([alices.taskId]);
    expect(await acked(alice)).toEqual([alices.taskId]);
    expect(await nextTask(alice)).toMatchObject({ status: 'working' });

    // Alice's task changes (her stream hears it), then Bob's: Bob's next message is his own task.
    await pass('c:1');
    expect(await nextTask(alice)).toMatchObject({ taskId: alices.taskId, status: 'input_required' });
    await pass('b:1');
    expect(await nextTask(bob)).toMatchObject({ taskId: mine.taskId, status: 'input_required' });
    expect(bob.text()).not.toContain(alices.taskId);
    // Bob's tasks/get of Alice's task is the unknown answer too.
    expect(
      (await rpc(s.base, 'tasks/get', { taskId: alices.taskId }, { who: 'bob' })).body.error,
    ).toMatchObject({
      code: -32602,
    });
  });

  test('a client not declaring the extension → -32021 naming it; taskIds not an array → -32602', async () => {
    const st = await start(['x'], { declare: false });
    expect(st.status).toBe(400);
    const m = await st.next();
    expect(m.error).toMatchObject({
      code: -32021,
      data: { requiredCapabilities: { extensions: { [EXT]: {} } } },
    });
    const bad = await start('x');
    expect(bad.status).toBe(200);
    expect((await bad.next()).error).toMatchObject({ code: -32602 });
    expect(s.mcp.stats().listenTaskIds).toBe(0);
  });

  test('bounds: the first 100 distinct ids are looked up, an id over 128 characters never is', async () => {
    const t = await create(s.base, 'stuck');
    const fakes = Array.from({ length: 120 }, (_, i) => `fake-${i}`);
    const first = await start([t.taskId, t.taskId, ...fakes]);
    expect(await acked(first)).toEqual([t.taskId]);
    const past = await start([...fakes.slice(0, 100), t.taskId]);
    expect(await acked(past)).toEqual([]);
    const long = await start([`${t.taskId}${'x'.repeat(129)}`, 42, '']);
    expect(await acked(long)).toEqual([]);
    await rpc(s.base, 'tasks/cancel', { taskId: t.taskId });
  });

  test('a closed stream is forgotten: no task id stays watched', async () => {
    const t = await create(s.base, 'stuck');
    const st = await start([t.taskId]);
    expect(await acked(st)).toEqual([t.taskId]);
    expect(s.mcp.stats().listenTaskIds).toBe(1);
    st.close();
    await until(() => s.mcp.stats().listenStreams === 0, 'the stream to close');
    expect(s.mcp.stats().listenTaskIds).toBe(0);
    await rpc(s.base, 'tasks/cancel', { taskId: t.taskId });
  });
});

describe('dispatch() tasks: notifications/tasks across replicas', () => {
  const works: Works = new Map();
  const go = gate();
  let a: TaskServer;
  let b: TaskServer;

  beforeAll(async () => {
    works.set('slow', (async () => {
      await go.promise;
      return { content: [{ type: 'text', text: 'slow done' }] };
    }) as TaskWork);
    const store = memoryTaskStore();
    a = await taskServer(works, { store, pollIntervalMs: 10 });
    b = await taskServer(works, { store, pollIntervalMs: 10 });
  });
  afterAll(async () => {
    await a.close();
    await b.close();
  });

  test('a stream on B hears the end of a task run on A (B reads it again every pollIntervalMs)', async () => {
    const t = await create(a.base, 'slow');
    const st = await listen(b.base, [t.taskId]);
    try {
      expect(await acked(st)).toEqual([t.taskId]);
      expect(await nextTask(st)).toMatchObject({ status: 'working' });
      go.open();
      const done = await nextTask(st);
      expect(done).toMatchObject({ taskId: t.taskId, status: 'completed' });
      expect(done).toEqual(await got(b.base, t.taskId));
    } finally {
      st.close();
    }
  });
});
