/**
 * Redis outages: killed and restarted, frozen (a black hole: connected but silent), or never reachable.
 * Every answer during an outage must come without waiting for Redis to return (the jest timeout is the bound:
 * a request that waited for Redis would never finish before the restart that follows it), and limiting must
 * resume in Redis by itself afterwards. They kill and freeze the server, so they need a redis-server of their
 * own (REDIS_URL does not serve them).
 */
import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import { type LimitsOptions, limits, redisClientOptions } from '../../../middleware/limits/index';
import { type RedisServer, connectRedis, redisDescribe, redisWanted, startRedis } from '../../support/redis';
import {
  KINDS,
  type Kind,
  type TestApp,
  abortable,
  inBatches,
  post,
  startApp,
  tally,
  until,
  userKey,
} from '../../support/limits-harness';

let server: RedisServer;
const clients: Redis[] = [];
const apps: TestApp[] = [];

async function client(): Promise<Redis> {
  // Reconnect every 50 ms so the test does not wait for ioredis's default back-off.
  const c = await connectRedis(server.url, { retryStrategy: () => 50 });
  clients.push(c);
  return c;
}

const ready = (c: Redis) => until(() => c.status === 'ready', 'client ready again');
// "Redis never reachable" runs without a server: its keys go nowhere, so any fresh prefix serves.
const newPrefix = () => server?.prefix('outage') ?? `o${randomBytes(6).toString('hex')}`;
const OWN_SERVER = { ownServer: true };
const describeWithRedis = redisDescribe(OWN_SERVER);

beforeAll(async () => {
  if (redisWanted(OWN_SERVER)) server = await startRedis(OWN_SERVER);
});
beforeEach(async () => {
  if (!server) return;
  if (!server.running) await server.restart();
  server.resume();
});
afterEach(async () => {
  server?.resume();
  for (const a of apps.splice(0)) await a.close();
});
afterAll(async () => {
  for (const c of clients) if (c.status !== 'end') c.disconnect();
  await server?.stop();
});

interface Seen {
  errors: string[];
  logs: string[];
}

async function open(
  kind: Kind,
  redis: Redis,
  o: Partial<LimitsOptions> & { onOutage: 'fail-open' | 'fail-closed'; timeoutMs?: number },
) {
  const seen: Seen = { errors: [], logs: [] };
  const prefix = newPrefix();
  const { onOutage, timeoutMs, ...rest } = o;
  const mw = limits({
    perUserRpm: 5,
    perUserConcurrency: 50,
    globalConcurrency: 50,
    costBudgetPerHour: 0,
    logger: { error: (m) => seen.logs.push(m), warn: (m) => seen.logs.push(m) },
    hooks: { onStoreError: (_e, outcome) => seen.errors.push(outcome) },
    ...rest,
    store: { redis, onOutage, keyPrefix: prefix, timeoutMs: timeoutMs ?? 300, retryIntervalMs: 100 },
  });
  const app = await startApp(mw, kind);
  apps.push(app);
  return { mw, app, seen, prefix };
}

const burst = (port: number, user: string, n = 8) =>
  Promise.all(Array.from({ length: n }, () => post(port, { user })));

describeWithRedis.each(KINDS)('Redis killed and restarted mid-run (%s)', (kind: Kind) => {
  it('fail-open: per-process limits during the outage, shared limits again after it', async () => {
    const c = await client();
    const { mw, app, seen, prefix } = await open(kind, c, { onOutage: 'fail-open' });

    expect(tally(await burst(app.port, 'a'))).toEqual({ 200: 5, 429: 3 });
    expect(await c.exists(`${prefix}:u:{${userKey('a')}}:rpm`)).toBe(1);
    // A request holding slots in Redis when it dies.
    const held = post(app.port, { user: 'h', hold: 'gate' });
    await until(() => app.admitted === 6, 'held request admitted');

    await server.kill();
    await until(() => c.status !== 'ready', 'client noticed');
    // The insurance limiter is fresh: exactly 5 pass again, and nobody waits for Redis.
    expect(tally(await burst(app.port, 'a'))).toEqual({ 200: 5, 429: 3 });
    expect(server.running).toBe(false); // all answered while Redis was still down
    expect(mw.stats().storeDown).toBe(true);
    expect(seen.errors.length).toBeGreaterThan(0);
    expect(seen.errors.every((o) => o === 'insurance' || o === 'dropped')).toBe(true);
    expect(seen.logs.filter((l) => /Redis unavailable, failing open/.test(l))).toHaveLength(1); // once per outage
    app.release(); // its Redis release is lost; the slot goes with the dead server's memory
    expect((await held).status).toBe(200);
    await until(() => mw.stats().inflight.user === 0, 'held slot released');

    await server.restart();
    await ready(c);
    await new Promise((r) => setTimeout(r, 150)); // past retryIntervalMs
    // 'a' spent its 5 on the insurance this minute: passes now can only come from the (empty) Redis.
    expect(tally(await burst(app.port, 'a'))).toEqual({ 200: 5, 429: 3 });
    expect(await c.get(`${prefix}:u:{${userKey('a')}}:rpm`)).toBe('8');
    expect(mw.stats()).toMatchObject({ storeDown: false, redisSlots: 0, memorySlotKeys: 0 });
    expect(seen.logs.some((l) => /Redis available again/.test(l))).toBe(true);
  });

  it('fail-closed: 503 with Retry-After and the id during the outage, limits again after it', async () => {
    const c = await client();
    const { app, seen, prefix } = await open(kind, c, { onOutage: 'fail-closed' });
    expect(tally(await burst(app.port, 'a', 3))).toEqual({ 200: 3 });

    await server.kill();
    await until(() => c.status !== 'ready', 'client noticed');
    const rs = await Promise.all(
      Array.from({ length: 6 }, (_, i) => post(app.port, { user: 'a', id: `r${i}` })),
    );
    expect(server.running).toBe(false);
    expect(tally(rs)).toEqual({ 503: 6 });
    for (const [i, r] of rs.entries()) {
      expect(r.headers['retry-after']).toBe('1');
      expect(r.json()).toEqual({
        jsonrpc: '2.0',
        id: `r${i}`,
        error: { code: 503, message: expect.any(String), data: { retryAfterSeconds: 1 } },
      });
    }
    expect(seen.errors.length).toBeGreaterThan(0);
    expect(seen.errors.every((o) => o === 'refused')).toBe(true);
    expect(seen.logs.filter((l) => /failing closed/.test(l))).toHaveLength(1);

    await server.restart();
    await ready(c);
    await until(async () => (await post(app.port, { user: 'a' })).status === 200, 'admitted again');
    // Redis restarted empty: one pass spent, four of the minute's five left, then refusals from Redis.
    expect(tally(await burst(app.port, 'a'))).toEqual({ 200: 4, 429: 4 });
    expect(await c.exists(`${prefix}:u:{${userKey('a')}}:rpm`)).toBe(1);
  });
});

describeWithRedis('Redis frozen (connected, never answers)', () => {
  it('fail-open: answers after the timeout from the insurance; late grants are given back; Redis resumes', async () => {
    const c = await client();
    // Slots are taken (limit 50) but never the reason for a refusal: the requests fall back at about the same time.
    const { mw, app, seen, prefix } = await open('bare', c, { onOutage: 'fail-open', timeoutMs: 200 });
    server.pause();
    const rs = await inBatches(8, 8, () => post(app.port, { user: 'f' }));
    expect(tally(rs)).toEqual({ 200: 5, 429: 3 }); // rpm 5 on the insurance
    expect(seen.errors).toContain('insurance');
    expect(mw.stats().storeDown).toBe(true);

    server.resume();
    // Redis now runs the acquires it had queued: each was given up on and released behind, so no slot stays.
    await until(
      async () => (await c.keys(`${prefix}:*:slots`)).length === 0 && (await c.ping()) === 'PONG',
      'no slot left',
    );
    expect(mw.stats().redisSlots).toBe(0);
    await new Promise((r) => setTimeout(r, 150));
    expect((await post(app.port, { user: 'g' })).status).toBe(200);
    expect(await c.exists(`${prefix}:u:{${userKey('g')}}:rpm`)).toBe(1);
    expect(mw.stats().storeDown).toBe(false);
  });

  it('a client that gives up while the limiter waits for Redis holds nothing and reaches no handler', async () => {
    const c = await client();
    const seen: number[] = [];
    const { mw, app } = await open('bare', c, {
      onOutage: 'fail-open',
      timeoutMs: 300,
      perUserConcurrency: 2,
      hooks: { onInflight: (_s, v) => seen.push(v) },
    });
    server.pause();
    const gone = abortable(app.port, { user: 'q', hold: 'gate' });
    await new Promise((r) => setTimeout(r, 50)); // the limiter is now waiting for the frozen Redis
    gone.abort();
    await gone.done;
    await until(() => mw.stats().storeDown, 'timed out and fell back');
    await until(() => mw.stats().inflight.user === 0 && mw.stats().inflight.global === 0, 'nothing held');
    expect(app.admitted).toBe(0);
    expect(mw.stats().memorySlotKeys).toBe(0);
    expect(seen.every((v) => v >= 0)).toBe(true);
    server.resume();
    await until(async () => (await c.keys('*:slots')).length === 0, 'no Redis slot left');
  });

  it('fail-closed: 503 after the timeout, not a hang', async () => {
    const c = await client();
    const { app } = await open('bare', c, { onOutage: 'fail-closed', timeoutMs: 200 });
    server.pause();
    const rs = await inBatches(4, 4, () => post(app.port, { user: 'f' }));
    expect(tally(rs)).toEqual({ 503: 4 });
    server.resume();
    await until(async () => (await post(app.port, { user: 'f' })).status === 200, 'admitted again');
  });
});

describe('Redis never reachable', () => {
  it.each([
    ['fail-open', 200],
    ['fail-closed', 503],
  ] as const)('%s answers %d at once', async (onOutage, status) => {
    const c = new Redis(1, '127.0.0.1', {
      ...redisClientOptions,
      retryStrategy: () => 1000,
      disconnectTimeout: 10,
    });
    c.on('error', () => {});
    clients.push(c);
    const { app } = await open('bare', c, { onOutage });
    expect((await post(app.port, { user: 'n' })).status).toBe(status);
  });
});
