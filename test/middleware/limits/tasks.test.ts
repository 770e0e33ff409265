/**
 * limits() and tasks, over HTTP, memory and Redis: a tools/call answered with a task keeps its slot and is
 * charged its work when the task ends; tasks/get, tasks/update and tasks/cancel take no slot.
 */
import type Redis from 'ioredis';
import { type LimitsOptions, limits } from '../../../middleware/limits/index';
import { COMPLETED, type TaskApp, rpc, startTaskApp } from '../../support/task-app';
import { type RedisServer, connectRedis, redisDescribe, startRedis } from '../../support/redis';
import { until, userKey } from '../../support/limits-harness';

const OFF = { perUserRpm: 0, perUserConcurrency: 0, globalConcurrency: 0, costBudgetPerHour: 0 };
const quiet = { error: () => {}, warn: () => {} };

const apps: TaskApp[] = [];
afterEach(async () => {
  for (const a of apps.splice(0)) await a.close();
});

type Store = 'memory' | 'redis';
let server: RedisServer | undefined;
const clients: Redis[] = [];
const wantsRedis = redisDescribe();

async function open(store: Store, o: LimitsOptions) {
  const charges: [number, string][] = [];
  const storeOption =
    store === 'redis'
      ? {
          store: {
            redis: await client(),
            onOutage: 'fail-closed' as const,
            keyPrefix: server!.prefix('limits-tasks'),
            ...(o.store as object),
          },
        }
      : {};
  const mw = limits({
    ...OFF,
    logger: quiet,
    hooks: { onCharge: (ms, source) => charges.push([ms, source]) },
    ...o,
    ...storeOption,
  });
  const app = await startTaskApp({ after: [mw] });
  apps.push(app);
  return { mw, app, charges, prefix: (storeOption.store?.keyPrefix ?? '') as string };
}

async function client(): Promise<Redis> {
  const c = await connectRedis(server!.url);
  clients.push(c);
  return c;
}

function suite(store: Store): void {
  it('a task keeps its slot: a second tools/call waits for its end, its tasks/get|update|cancel go through', async () => {
    const { app, mw } = await open(store, { perUserConcurrency: 1 });
    const made = await rpc(app.port, 'alice', 'tools/call', { name: 'slow' });
    expect(made.status).toBe(200);
    expect(made.body.result).toMatchObject({ resultType: 'task', taskId: 'task-1' });
    expect(mw.stats().inflight.user).toBe(1);

    const second = await rpc(app.port, 'alice', 'tools/call', { name: 'slow' }, 2);
    expect(second.status).toBe(429);
    expect(second.body.error).toMatchObject({ code: 429, data: { limit: 'user_concurrent' } });
    for (const method of ['tasks/get', 'tasks/update', 'tasks/cancel'])
      expect((await rpc(app.port, 'alice', method, { taskId: 'task-1' })).status).toBe(200);
    // Another user is not held up.
    expect((await rpc(app.port, 'bob', 'tools/call', { name: 'slow' })).status).toBe(200);
    app.task('task-2').end(COMPLETED);

    app.task('task-1').end(COMPLETED);
    await until(() => mw.stats().inflight.user === 0, 'the slot given back');
    // In Redis the release lands a little after the local count drops: the next call is admitted once it has.
    let third = await rpc(app.port, 'alice', 'tools/call', { name: 'slow' }, 3);
    for (let i = 0; i < 100 && third.status === 429; i++) {
      await new Promise((r) => setTimeout(r, 20));
      third = await rpc(app.port, 'alice', 'tools/call', { name: 'slow' }, 3);
    }
    expect(third.status).toBe(200);
    app.task('task-3').end(COMPLETED);
  });

  it('the work the task charged goes to the budget when the task ends, not when the response closes', async () => {
    const { app, charges, prefix } = await open(store, { costBudgetPerHour: 100 });
    expect((await rpc(app.port, 'alice', 'tools/call', { name: 'slow' })).status).toBe(200);
    expect(charges).toEqual([]);
    app.task('task-1').charge(60);
    app.task('task-1').charge(90);
    app.task('task-1').end(COMPLETED);
    expect(charges).toEqual([[150, 'charged']]);
    if (store === 'redis') {
      const c = await client();
      const budget = `${prefix}:u:{${userKey('alice')}}:budget`;
      await until(async () => Number(await c.get(budget)) === 150, 'the charge in Redis');
    }
    const next = await rpc(app.port, 'alice', 'tools/call', { name: 'slow' }, 2);
    expect(next.status).toBe(429);
    expect(next.body.error).toMatchObject({ data: { limit: 'cost_budget' } });
  });

  it('without a charge, the work is the time from admission to the task end', async () => {
    const { app, charges } = await open(store, { costBudgetPerHour: 3_600_000 });
    const started = performance.now();
    expect((await rpc(app.port, 'alice', 'tools/call', { name: 'slow' })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 60));
    expect(charges).toEqual([]);
    app.task('task-1').end(COMPLETED);
    const elapsed = performance.now() - started;
    expect(charges).toHaveLength(1);
    expect(charges[0]![1]).toBe('wall_clock');
    expect(charges[0]![0]).toBeGreaterThanOrEqual(59);
    expect(charges[0]![0]).toBeLessThanOrEqual(Math.ceil(elapsed));
  });

  it('a task ended before its response closed is released at the close; a lost task read by tasks/get holds nothing', async () => {
    const { app, mw } = await open(store, { perUserConcurrency: 1, globalConcurrency: 4 });
    expect((await rpc(app.port, 'alice', 'tasks/get', { taskId: 'gone', lost: true })).status).toBe(200);
    expect(mw.stats().inflight).toEqual({ user: 0, global: 0 });
    expect((await rpc(app.port, 'alice', 'tools/call', { name: 'slow' })).status).toBe(200);
    app.task('task-1').end(COMPLETED);
    await until(() => mw.stats().inflight.user === 0, 'the slot given back');
    expect((await rpc(app.port, 'alice', 'tools/call', { name: 'slow' }, 2)).status).toBe(200);
    app.task('task-2').end(COMPLETED);
  });

  it('tasks/get counts in the minute', async () => {
    const { app } = await open(store, { perUserRpm: 2 });
    expect((await rpc(app.port, 'alice', 'tools/call', { name: 'slow' })).status).toBe(200);
    expect((await rpc(app.port, 'alice', 'tasks/get', { taskId: 'task-1' })).status).toBe(200);
    const third = await rpc(app.port, 'alice', 'tasks/get', { taskId: 'task-1' });
    expect(third.status).toBe(429);
    expect(third.body.error).toMatchObject({ data: { limit: 'rpm' } });
    app.task('task-1').end(COMPLETED);
  });
}

describe('limits and tasks (memory)', () => suite('memory'));

wantsRedis('limits and tasks (Redis)', () => {
  beforeAll(async () => {
    server = await startRedis();
  });
  afterAll(async () => {
    for (const c of clients) if (c.status !== 'end') c.disconnect();
    await server?.stop();
  });

  suite('redis');

  it("a task's slot keeps being renewed after its response closed, past the lease", async () => {
    const { app, mw, prefix } = await open('redis', {
      perUserConcurrency: 1,
      store: { slotLeaseMs: 1000 } as LimitsOptions['store'],
    });
    expect((await rpc(app.port, 'alice', 'tools/call', { name: 'slow' })).status).toBe(200);
    const c = await client();
    const slots = `${prefix}:u:{${userKey('alice')}}:slots`;
    const score = async (): Promise<number> => {
      const r = await c.zrange(slots, 0, -1, 'WITHSCORES');
      return r.length === 2 ? Number(r[1]) : 0;
    };
    const first = await score();
    expect(first).toBeGreaterThan(0);
    // Renewed (every third of the lease) until well past the lease the slot had when the response closed.
    await until(async () => (await score()) > first + 1000, 'the lease renewed past its first expiry');
    expect(mw.stats().redisSlots).toBe(1);
    const second = await rpc(app.port, 'alice', 'tools/call', { name: 'slow' }, 2);
    expect(second.status).toBe(429);
    expect(second.body.error).toMatchObject({ data: { limit: 'user_concurrent' } });

    app.task('task-1').end(COMPLETED);
    await until(async () => (await c.zcard(slots)) === 0, 'the slot released in Redis');
    expect(mw.stats().redisSlots).toBe(0);
    expect((await rpc(app.port, 'alice', 'tools/call', { name: 'slow' }, 3)).status).toBe(200);
    app.task('task-2').end(COMPLETED);
  }, 20_000);
});
