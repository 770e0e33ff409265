/**
 * The Redis store's keys as the admission script leaves them, read back from a real redis-server: a slot key
 * outlives every slot in it, lapsed slots are dropped once the set is full and never let it grow past its limit,
 * and a minute window always ends.
 */
import type Redis from 'ioredis';
import { type RedisStore, createRedisStore } from '../../../middleware/limits/redis-store';
import type { StoreLimits } from '../../../middleware/limits/store';
import { type RedisServer, connectRedis, redisDescribe, startRedis } from '../../support/redis';

const LEASE = 10_000;

let server: RedisServer;
let c: Redis;
let n = 0;

beforeAll(async () => {
  server = await startRedis();
  c = await connectRedis(server.url);
});
afterAll(async () => {
  c?.disconnect();
  await server?.stop();
});

/** A store under a prefix of its own, and the names of its keys for user `u`. */
function open(limits: StoreLimits): { store: RedisStore; slots: string; global: string; rpm: string } {
  const keyPrefix = server.prefix(`keys${++n}`);
  const store = createRedisStore({
    client: c,
    keyPrefix,
    limits,
    leaseMs: LEASE,
    onRenewError: (e) => {
      throw e;
    },
    logger: { error: () => {}, warn: () => {} },
  });
  return {
    store,
    slots: `${keyPrefix}:u:{u}:slots`,
    global: `${keyPrefix}:g:{all}:slots`,
    rpm: `${keyPrefix}:u:{u}:rpm`,
  };
}

/** Redis server time in ms. */
async function redisNow(): Promise<number> {
  const [s, us] = await c.time();
  return Number(s) * 1000 + Math.floor(Number(us) / 1000);
}

redisDescribe()('limits, Redis store: the keys the admission leaves', () => {
  it.each([
    ['user', { userSlots: 4, globalSlots: 0 }, 'slots'],
    ['global', { userSlots: 0, globalSlots: 4 }, 'global'],
  ] as const)(
    'a %s slot key expires no earlier than its latest slot, and no later than two leases on',
    async (_, limits, which) => {
      const k = open(limits);
      for (const token of ['t1', 't2']) {
        const r = await k.store.admit('u', token, true);
        expect(r.ok).toBe(true);
        const key = k[which];
        const [now, ttl, score] = [await redisNow(), await c.pttl(key), Number(await c.zscore(key, token))];
        expect(score).toBeGreaterThan(now);
        expect(now + ttl).toBeGreaterThanOrEqual(score);
        expect(ttl).toBeLessThanOrEqual(2 * LEASE);
      }
      for (const token of ['t1', 't2'])
        await k.store.release('u', token, { user: limits.userSlots > 0, global: limits.globalSlots > 0 }, 0);
      expect(await c.exists(k[which])).toBe(0);
    },
  );

  it("does not shorten a key that another replica's longer lease keeps", async () => {
    const k = open({ userSlots: 4, globalSlots: 0 });
    const later = (await redisNow()) + 10 * LEASE;
    await c.zadd(k.slots, later, 'theirs');
    await c.pexpireat(k.slots, later);
    expect((await k.store.admit('u', 'ours', true)).ok).toBe(true);
    expect(await c.pttl(k.slots)).toBeGreaterThan(9 * LEASE);
    await k.store.release('u', 'ours', { user: true, global: false }, 0);
    expect(await c.zrange(k.slots, 0, -1)).toEqual(['theirs']);
  });

  it('counts lapsed slots until the set is full, then drops them: the set never holds more than its limit', async () => {
    const k = open({ userSlots: 3, globalSlots: 0 });
    const past = (await redisNow()) - 1000;
    await c.zadd(k.slots, past, 'lapsed1', past, 'lapsed2');
    await c.pexpire(k.slots, LEASE);
    // Two lapsed and a live one fill the set; the next admission drops the lapsed two and takes a slot.
    expect((await k.store.admit('u', 'a', true)).ok).toBe(true);
    expect(await c.zcard(k.slots)).toBe(3);
    expect((await k.store.admit('u', 'b', true)).ok).toBe(true);
    expect((await c.zrange(k.slots, 0, -1)).sort()).toEqual(['a', 'b']);
    expect((await k.store.admit('u', 'c', true)).ok).toBe(true);
    expect(await k.store.admit('u', 'd', true)).toEqual({ ok: false, reason: 'user_concurrent', waitMs: 0 });
    expect(await c.zcard(k.slots)).toBe(3);
    for (const t of ['a', 'b', 'c']) await k.store.release('u', t, { user: true, global: false }, 0);
    expect(await c.exists(k.slots)).toBe(0);
  });

  it('the request that opens a minute window gives it the window; a refusal mends a window without one', async () => {
    const k = open({ userSlots: 0, globalSlots: 0, rpm: { limit: 2, seconds: 60 } });
    expect((await k.store.admit('u', 'a', false)).ok).toBe(true);
    const opened = await c.pttl(k.rpm);
    expect(opened).toBeGreaterThan(55_000);
    expect(opened).toBeLessThanOrEqual(60_000);
    expect((await k.store.admit('u', 'b', false)).ok).toBe(true);
    await c.persist(k.rpm); // a window that lost its expiry would otherwise refuse for ever
    const refused = await k.store.admit('u', 'c', false);
    expect(refused).toEqual({ ok: false, reason: 'rpm', waitMs: 60_000 });
    expect(await c.pttl(k.rpm)).toBeGreaterThan(55_000);
    const again = await k.store.admit('u', 'd', false);
    expect(again.ok).toBe(false);
    expect(again.ok === false && again.waitMs).toBeLessThanOrEqual(60_000);
  });
});
