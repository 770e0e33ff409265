/**
 * Tasks (the `io.modelcontextprotocol/tasks` extension) across replicas: demo processes (examples/server.ts)
 * sharing one redis-server through REDIS_URL, with the same API keys. A `report` task created on A is polled and
 * cancelled through B; a task of alice's does not exist for bob (the unknown-task answer, identical); a worker
 * killed mid-task leaves its task `failed` with `task_worker_lost` once its lease (MCP_TASK_LEASE_MS) lapses.
 *
 * The requests are raw, as the conformance suite sends them (mcpware's McpTestClient, the extension declared in
 * each request's `_meta` client capabilities): the official SDK v2 client speaks the tasks of the 2025-11-25
 * revision, not the extension.
 */
import { createHash, randomBytes } from 'node:crypto';
import { TASKS_EXTENSION } from '../../lib/tasks';
import { McpTestClient } from '../../testing/index';
import { type DemoProcess, spawnDemo } from '../support/demo-process';
import { type RedisServer, redisDescribe, startRedis } from '../support/redis';

jest.setTimeout(90_000);

const sha = (s: string): string => createHash('sha256').update(s).digest('hex');
/** Users of this run's own: on a shared Redis (REDIS_URL) no other run's tasks or limits count against them. */
const RUN = randomBytes(6).toString('hex');
const KEYS = `alice-${RUN}:sha256:${sha('alice-token')}:users,bob-${RUN}:sha256:${sha('bob-token')}:users`;
/** Short enough that a lost worker shows within the test, long enough for a loaded machine to renew in time. */
const LEASE_MS = 3000;
const DECLARES = { extensions: { [TASKS_EXTENSION]: {} } };

type Json = Record<string, any>;

/** A client of `d` as `who`, declaring the tasks extension in every request. */
const as = (d: DemoProcess, who: 'alice' | 'bob'): McpTestClient =>
  new McpTestClient(d.url, {
    headers: { Authorization: `Bearer ${who}-token` },
    clientCapabilities: DECLARES,
    autoParamHeaders: false,
  });

/** `tasks/get`, `tasks/update` or `tasks/cancel` of `taskId`, with its Mcp-Name. */
async function task(c: McpTestClient, method: string, taskId: string, extra: Json = {}): Promise<Json> {
  const r = await c.request(method, { taskId, ...extra }, { headers: { 'Mcp-Name': taskId } });
  return r.body as Json;
}

/** A `report` task of `seconds`: its CreateTaskResult. */
async function startReport(c: McpTestClient, seconds: number): Promise<Json> {
  const r = await c.callTool('report', { seconds });
  expect(r.status).toBe(200);
  expect(r.body.result).toMatchObject({ resultType: 'task', status: 'working' });
  expect(typeof r.body.result.taskId).toBe('string');
  return r.body.result as Json;
}

/** Poll `tasks/get` on `c` until the task has ended (or `withinMs` passed): the last answer's result. */
async function untilEnded(c: McpTestClient, taskId: string, withinMs = 30_000): Promise<Json> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const got = await task(c, 'tasks/get', taskId);
    const status = got.result?.status;
    if (['completed', 'failed', 'cancelled'].includes(status) || Date.now() > deadline) return got.result;
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The empty acknowledgement of `tasks/cancel` and `tasks/update`: `resultType: "complete"`, no task fields. */
function expectAck(body: Json): void {
  expect(body.result?.resultType).toBe('complete');
  for (const k of ['taskId', 'status', 'result', 'error', 'inputRequests'])
    expect(body.result).not.toHaveProperty(k);
}

/** An error answer without its id, to compare two answers. */
const errorOf = (body: Json): Json => ({ error: body.error, hasResult: body.result !== undefined });

redisDescribe()('tasks shared by demo processes on one Redis', () => {
  let redis: RedisServer;
  let a: DemoProcess;
  let b: DemoProcess;
  let env: Record<string, string>;
  beforeAll(async () => {
    redis = await startRedis();
    redis.ownKeys(`mcpware:limits*${RUN}*`);
    env = { REDIS_URL: redis.url, MCP_API_KEYS: KEYS, MCP_TASK_LEASE_MS: String(LEASE_MS) };
    [a, b] = await Promise.all([spawnDemo(env), spawnDemo(env)]);
  }, 90_000);
  afterAll(async () => {
    a?.kill();
    b?.kill();
    await redis?.stop();
  }, 30_000);

  test('both advertise the extension; report called without it answers directly', async () => {
    for (const d of [a, b]) {
      const discover = await as(d, 'alice').discover();
      expect(discover.body.result.capabilities.extensions).toMatchObject({ [TASKS_EXTENSION]: {} });
    }
    const plain = new McpTestClient(a.url, { headers: { Authorization: 'Bearer alice-token' } });
    const r = await plain.callTool('report', { seconds: 1 });
    expect(r.body.result).toMatchObject({
      resultType: 'complete',
      structuredContent: { report: 'done in 1 s' },
    });
    expect(JSON.parse(r.body.result.content[0].text)).toEqual({ report: 'done in 1 s' });
  });

  test('a report task created on A completes, read through B', async () => {
    const created = await startReport(as(a, 'alice'), 1);
    const ended = await untilEnded(as(b, 'alice'), created.taskId);
    expect(ended).toMatchObject({
      taskId: created.taskId,
      status: 'completed',
      result: { structuredContent: { report: 'done in 1 s' } },
    });
    expect(JSON.parse(ended.result.content[0].text)).toEqual({ report: 'done in 1 s' });
  });

  test('a report task created on A is polled and cancelled through B', async () => {
    const created = await startReport(as(a, 'alice'), 60);
    const onB = as(b, 'alice');
    const got = await task(onB, 'tasks/get', created.taskId);
    expect(got.result).toMatchObject({ resultType: 'complete', taskId: created.taskId, status: 'working' });
    expectAck(await task(onB, 'tasks/cancel', created.taskId));
    // The work on A sees the cancel at its next lease renewal, and ends the task.
    const ended = await untilEnded(onB, created.taskId);
    expect(ended.status).toBe('cancelled');
    expect(ended.result).toBeUndefined();
    // Idempotent on the ended task, from either replica.
    expectAck(await task(as(a, 'alice'), 'tasks/cancel', created.taskId));
  });

  test("a task of alice's does not exist for bob: the unknown-task answer, identical", async () => {
    const created = await startReport(as(a, 'alice'), 60);
    const bob = as(b, 'bob');
    const unknownId = 'A'.repeat(created.taskId.length);
    for (const [method, extra] of [
      ['tasks/get', {}],
      ['tasks/cancel', {}],
      ['tasks/update', { inputResponses: {} }],
    ] as const) {
      const theirs = await task(bob, method, created.taskId, extra);
      const unknown = await task(bob, method, unknownId, extra);
      expect(theirs.error?.code).toBe(-32602);
      expect(errorOf(theirs)).toEqual(errorOf(unknown));
    }
    // Bob's cancel did nothing: the task is alice's, still running.
    const alice = as(b, 'alice');
    expect((await task(alice, 'tasks/get', created.taskId)).result.status).toBe('working');
    await task(alice, 'tasks/cancel', created.taskId);
    expect((await untilEnded(alice, created.taskId)).status).toBe('cancelled');
  });

  test('a worker killed mid-task: the task ends failed with task_worker_lost once its lease lapses', async () => {
    const c = await spawnDemo(env);
    try {
      const created = await startReport(as(c, 'alice'), 60);
      const onB = as(b, 'alice');
      expect((await task(onB, 'tasks/get', created.taskId)).result.status).toBe('working');
      c.kill();
      await c.exited;
      const ended = await untilEnded(onB, created.taskId, LEASE_MS + 20_000);
      expect(ended).toMatchObject({ status: 'failed', error: { data: { reason: 'task_worker_lost' } } });
      expect(ended.result).toBeUndefined();
    } finally {
      c.kill();
    }
  });
});
