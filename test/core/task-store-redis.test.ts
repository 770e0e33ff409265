/**
 * The Redis task store against the shared task store suite, on a real Redis (REDIS_URL, or a redis-server
 * started on a random loopback port), and what is particular to it: its keys, their expiries, two replicas on
 * one Redis, scripts reloaded after a SCRIPT FLUSH, and its options.
 */
import type Redis from 'ioredis';
import { redisTaskStore } from '../../core/task-store-redis';
import { newTask } from '../../lib/tasks';
import { type RedisServer, connectRedis, redisDescribe, startRedis } from '../support/redis';
import { runTaskStoreSuite } from './task-store.suite';

let server: RedisServer;
let client: Redis;
const WIDE = { maxTasks: 100, maxBytes: 1 << 20 };
const quiet = { error: () => {}, warn: () => {} };
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

const task = (owner: string, id: string, ttlMs = 60_000) =>
  newTask({ id, owner, now: Date.now(), ttlMs, pollIntervalMs: 1000, worker: 'w', leaseMs: 15_000 });

redisDescribe()('Redis task store', () => {
  beforeAll(async () => {
    server = await startRedis();
    client = await connectRedis(server.url);
  });
  afterAll(async () => {
    client?.disconnect();
    await server?.stop();
  });

  runTaskStoreSuite({
    newStore: async () => redisTaskStore({ client, keyPrefix: server.prefix('tasks'), logger: quiet }),
    now: Date.now,
    elapse: sleep,
    shortTtlMs: 100,
  });

  it("keeps an owner's keys under one hash tag, each expiring no earlier than the owner's last task", async () => {
    const keyPrefix = server.prefix('keys');
    const store = redisTaskStore({ client, keyPrefix, logger: quiet });
    await store.create(task('apikey:alice', 'a1', 60_000), WIDE);
    await store.create(task('apikey:alice', 'a2', 120_000), WIDE);
    await store.create(task('apikey:bob', 'b1', 60_000), WIDE);
    const keys = (await client.keys(`${keyPrefix}*`)).sort();
    expect(keys).toHaveLength(7); // alice: two tasks and two index keys; bob: one and two
    const tags = new Set(keys.map((k) => /^[^{]*\{([A-Za-z0-9_-]{22})\}:/.exec(k)?.[1]));
    expect(tags.size).toBe(2);
    expect(keys.some((k) => k.includes('apikey'))).toBe(false); // the owner is hashed, never in a key
    const alice = keys.filter((k) => k.endsWith(':t:a1') || k.endsWith(':t:a2'));
    const aliceTag = alice[0]!.slice(0, alice[0]!.indexOf('}') + 1);
    const ttl = async (suffix: string) => client.pttl(`${aliceTag}:${suffix}`);
    expect(await ttl('t:a1')).toBeGreaterThan(0);
    expect(await ttl('t:a1')).toBeLessThanOrEqual(60_000);
    expect(await ttl('t:a2')).toBeGreaterThan(60_000);
    expect(await ttl('idx')).toBeGreaterThanOrEqual(await ttl('t:a2'));
    expect(await ttl('bytes')).toBeGreaterThanOrEqual(await ttl('t:a2'));
  });

  it('a task created through one replica is read and replaced through another (same Redis, same prefix)', async () => {
    const keyPrefix = server.prefix('replicas');
    const a = redisTaskStore({ client, keyPrefix, logger: quiet });
    const other = await connectRedis(server.url);
    try {
      const b = redisTaskStore({ client: other, keyPrefix, logger: quiet });
      const t = task('apikey:alice', 'x');
      await a.create(t, WIDE);
      expect(await b.get('apikey:alice', 'x')).toEqual(t);
      expect(await b.replace({ ...t, rev: 1, cancelRequested: true }, WIDE)).toEqual({ ok: true });
      expect(await a.get('apikey:alice', 'x')).toMatchObject({ rev: 1, cancelRequested: true });
      expect(
        await redisTaskStore({ client, keyPrefix: server.prefix('elsewhere') }).get('apikey:alice', 'x'),
      ).toBeUndefined();
    } finally {
      other.disconnect();
    }
  });

  it('loads its scripts again after a SCRIPT FLUSH (EVALSHA, then EVAL)', async () => {
    if (process.env.REDIS_URL) return; // a shared Redis's scripts are not ours to flush
    const store = redisTaskStore({ client, keyPrefix: server.prefix('flush'), logger: quiet });
    const t = task('apikey:alice', 'f');
    await client.script('FLUSH');
    expect(await store.create(t, WIDE)).toEqual({ ok: true });
    await client.script('FLUSH');
    expect(await store.get('apikey:alice', 'f')).toEqual(t);
    await client.script('FLUSH');
    expect(await store.replace({ ...t, rev: 1 }, WIDE)).toEqual({ ok: true });
  });

  it('an id longer than any task id is unknown without a lookup', async () => {
    const store = redisTaskStore({ client, keyPrefix: server.prefix('long'), logger: quiet });
    expect(await store.get('apikey:alice', 'x'.repeat(100_000))).toBeUndefined();
  });

  it('refuses unknown options naming the closest one, a missing or unfit client, and braces in the prefix', () => {
    expect(() => redisTaskStore({ client, keyprefix: 'x' } as never)).toThrow(
      /redisTaskStore: unknown option "keyprefix"; did you mean "keyPrefix"\?/,
    );
    expect(() => redisTaskStore({} as never)).toThrow(/redisTaskStore: option "client" is required/);
    expect(() => redisTaskStore({ client: {} } as never)).toThrow(/option "client" must be an ioredis/);
    expect(() => redisTaskStore({ client, keyPrefix: 'a{b}:' })).toThrow(
      /option "keyPrefix" must be a prefix without/,
    );
    expect(() => redisTaskStore({ client, logger: 5 } as never)).toThrow(/option "logger" must be a logger/);
  });

  it('warns when the client queues commands while Redis is unreachable', async () => {
    const warnings: string[] = [];
    const queued = await connectRedis(server.url, { enableOfflineQueue: true });
    try {
      redisTaskStore({ client: queued, logger: { error: () => {}, warn: (m) => warnings.push(m) } });
      expect(warnings).toEqual([expect.stringMatching(/offline queue/)]);
    } finally {
      queued.disconnect();
    }
  });
});
