/**
 * The limits middleware with a real Redis (REDIS_URL, or a redis-server started on a random loopback port).
 */
import type Redis from 'ioredis';
import { type LimitsOptions, limits } from '../../../middleware/limits/index';
import { type RedisServer, connectRedis, redisDescribe, startRedis } from '../../support/redis';
import {
  KINDS,
  type Kind,
  type TestApp,
  abortable,
  inBatches,
  keepAlive,
  post,
  startApp,
  tally,
  until,
  userKey,
} from '../../support/limits-harness';

const OFF = { perUserRpm: 0, perUserConcurrency: 0, globalConcurrency: 0, costBudgetPerHour: 0 };

let server: RedisServer;
const clients: Redis[] = [];

async function client(): Promise<Redis> {
  const c = await connectRedis(server.url);
  clients.push(c);
  return c;
}

beforeAll(async () => {
  server = await startRedis();
});
afterAll(async () => {
  for (const c of clients) if (c.status !== 'end') c.disconnect(); // a second disconnect() leaves a 2 s timer
  await server?.stop();
});

const apps: TestApp[] = [];
afterEach(async () => {
  for (const a of apps.splice(0)) await a.close();
});

async function open(kind: Kind, o: LimitsOptions, prefix: string, redis?: Redis) {
  const mw = limits({
    ...OFF,
    logger: { error: () => {}, warn: () => {} },
    ...o,
    store: {
      redis: redis ?? (await client()),
      onOutage: 'fail-closed',
      keyPrefix: prefix,
      ...(o.store as object),
    },
  });
  const app = await startApp(mw, kind);
  apps.push(app);
  return { mw, app };
}

const newPrefix = () => server.prefix('limits');
const describeWithRedis = redisDescribe();

describeWithRedis.each(KINDS)('limits, Redis store (%s)', (kind: Kind) => {
  it('exact counts under concurrency: N allowed, M > N parallel → exactly N pass (rpm)', async () => {
    const prefix = newPrefix();
    const { app } = await open(kind, { perUserRpm: 7 }, prefix);
    const agent = keepAlive();
    const rs = await Promise.all(
      Array.from({ length: 40 }, (_, i) => post(app.port, { user: 'a', agent, id: i })),
    );
    agent.destroy();
    expect(tally(rs)).toEqual({ 200: 7, 429: 33 });
    const refused = rs.find((r) => r.status === 429)!;
    expect(refused.json().error).toMatchObject({ code: 429, data: { limit: 'rpm' } });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    const c = await client();
    expect(await c.keys(`${prefix}:*`)).toEqual([`${prefix}:u:{${userKey('a')}}:rpm`]);
  });

  it('exact counts under concurrency: user and global slots', async () => {
    const prefix = newPrefix();
    const { mw, app } = await open(kind, { perUserConcurrency: 4, globalConcurrency: 6 }, prefix);
    const pending = Array.from({ length: 30 }, (_, i) => post(app.port, { user: `u${i % 2}`, hold: 'gate' }));
    const reasons: string[] = [];
    pending.forEach((p) =>
      p.then((r) => r.status === 429 && reasons.push((r.json().error?.data as { limit: string }).limit)),
    );
    await until(() => app.admitted + reasons.length === 30, 'all decided');
    expect(app.admitted).toBe(6);
    const c = await client();
    expect(await c.zcard(`${prefix}:g:{all}:slots`)).toBe(6);
    expect(
      (await c.zcard(`${prefix}:u:{${userKey('u0')}}:slots`)) +
        (await c.zcard(`${prefix}:u:{${userKey('u1')}}:slots`)),
    ).toBe(6);
    expect(mw.stats()).toMatchObject({ inflight: { user: 6, global: 6 }, redisSlots: 12 });
    app.release();
    expect(tally(await Promise.all(pending))).toEqual({ 200: 6, 429: 24 });
    await until(async () => (await c.keys(`${prefix}:*:slots`)).length === 0, 'slot keys gone');
    expect(mw.stats().redisSlots).toBe(0);
  });

  it('a client that aborts a slow call frees its Redis slot at once', async () => {
    const prefix = newPrefix();
    const { mw, app } = await open(kind, { perUserConcurrency: 1 }, prefix);
    const c = await client();
    const slow = abortable(app.port, { user: 'a' });
    await until(() => app.admitted === 1, 'admitted');
    expect(await c.zcard(`${prefix}:u:{${userKey('a')}}:slots`)).toBe(1);
    expect((await post(app.port, { user: 'a' })).status).toBe(429);
    slow.abort();
    await until(
      async () => (await c.exists(`${prefix}:u:{${userKey('a')}}:slots`)) === 0,
      'slot removed from Redis',
    );
    expect(app.holding).toBe(1); // the handler still runs; the slot followed the client
    expect(mw.stats().redisSlots).toBe(0);
    const next = post(app.port, { user: 'a', hold: 'gate' });
    await until(() => app.admitted === 2, 'next admitted');
    app.release();
    expect((await next).status).toBe(200);
  });
});

describeWithRedis('limits, Redis store: replicas and leases', () => {
  it('two middleware instances on one Redis enforce one set of limits', async () => {
    const prefix = newPrefix();
    const a = await open('bare', { perUserRpm: 9, perUserConcurrency: 3 }, prefix);
    const b = await open('express', { perUserRpm: 9, perUserConcurrency: 3 }, prefix);
    const held = Array.from({ length: 10 }, (_, i) =>
      post(i % 2 ? a.app.port : b.app.port, { user: 'x', hold: 'gate' }),
    );
    let refused = 0;
    held.forEach((p) => p.then((r) => r.status === 429 && refused++));
    await until(() => a.app.admitted + b.app.admitted + refused === 10, 'decided');
    expect(a.app.admitted + b.app.admitted).toBe(3);
    a.app.release();
    b.app.release();
    await Promise.all(held);
    // 3 of the 9 requests of the minute are spent; 20 more, alternating replicas → exactly 6 pass. One at a time,
    // so the concurrency limit of 3 is never what refuses them.
    const more = await inBatches(20, 1, (i) => post(i % 2 ? a.app.port : b.app.port, { user: 'x' }));
    expect(tally(more)).toEqual({ 200: 6, 429: 14 });
    expect(
      more
        .filter((r) => r.status === 429)
        .every((r) => (r.json().error?.data as { limit: string }).limit === 'rpm'),
    ).toBe(true);
  });

  it('renews the lease of a slot whose request outlives it', async () => {
    const prefix = newPrefix();
    const { app } = await open(
      'bare',
      { perUserConcurrency: 1, store: { slotLeaseMs: 1000 } as never },
      prefix,
    );
    const c = await client();
    const long = post(app.port, { user: 'a', hold: 'gate' });
    await until(() => app.admitted === 1, 'admitted');
    await new Promise((r) => setTimeout(r, 2500)); // two and a half leases
    expect(await c.zcard(`${prefix}:u:{${userKey('a')}}:slots`)).toBe(1);
    expect((await post(app.port, { user: 'a' })).status).toBe(429);
    app.release();
    expect((await long).status).toBe(200);
  });

  it('slots of a replica that stops renewing lapse after the lease', async () => {
    const prefix = newPrefix();
    const lost = await client();
    const a = await open(
      'bare',
      { perUserConcurrency: 2, store: { slotLeaseMs: 1000 } as never },
      prefix,
      lost,
    );
    const b = await open('bare', { perUserConcurrency: 2 }, prefix);
    const held = [
      post(a.app.port, { user: 'a', hold: 'gate' }),
      post(a.app.port, { user: 'a', hold: 'gate' }),
    ];
    await until(() => a.app.admitted === 2, 'a holds both slots');
    expect((await post(b.app.port, { user: 'a' })).status).toBe(429);
    lost.disconnect(); // replica a can no longer renew (nor release) its slots
    await until(async () => (await post(b.app.port, { user: 'a' })).status === 200, 'lapsed slots freed');
    a.app.release();
    await Promise.all(held);
  });

  it('the work budget is shared and fixed-window: charged work refuses later requests', async () => {
    const prefix = newPrefix();
    const charges: number[] = [];
    const { app } = await open(
      'bare',
      { costBudgetPerHour: 100, hooks: { onCharge: (ms) => charges.push(ms) } },
      prefix,
    );
    const c = await client();
    expect((await post(app.port, { user: 'a', charge: '70' })).status).toBe(200);
    await until(
      async () => (await c.get(`${prefix}:u:{${userKey('a')}}:budget`)) === '70',
      'charge recorded in Redis',
    );
    const ttl = await c.pttl(`${prefix}:u:{${userKey('a')}}:budget`);
    expect(ttl).toBeGreaterThan(3_500_000);
    expect(ttl).toBeLessThanOrEqual(3_600_000);
    expect((await post(app.port, { user: 'a', charge: '40' })).status).toBe(200);
    await until(async () => (await c.get(`${prefix}:u:{${userKey('a')}}:budget`)) === '110', 'second charge');
    const r = await post(app.port, { user: 'a', id: 'x' });
    expect(r.json()).toMatchObject({ id: 'x', error: { data: { limit: 'cost_budget' } } });
    expect(Number(r.headers['retry-after'])).toBeGreaterThan(3500);
  });

  it('10,000 requests leave no slot behind in Redis or in the process', async () => {
    const prefix = newPrefix();
    const { mw, app } = await open(
      'bare',
      {
        perUserRpm: 1_000_000,
        perUserConcurrency: 32,
        globalConcurrency: 128,
        costBudgetPerHour: 100_000_000,
      },
      prefix,
    );
    const agent = keepAlive();
    const statuses = await inBatches(
      10_000,
      40,
      async (i) => (await post(app.port, { user: `u${i % 20}`, agent })).status,
    );
    agent.destroy();
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    const c = await client();
    await until(async () => (await c.keys(`${prefix}:*:slots`)).length === 0, 'no slot keys');
    expect(mw.stats()).toEqual({
      inflight: { user: 0, global: 0 },
      memorySlotKeys: 0,
      redisSlots: 0,
      storeDown: false,
    });
    // Only the 20 users' minute windows and budgets remain, each with an expiry.
    const keys = await c.keys(`${prefix}:*`);
    expect(keys).toHaveLength(40);
    for (const k of keys) expect(await c.pttl(k)).toBeGreaterThan(0);
  }, 90_000);
});
