/**
 * The Redis task store on a Redis Cluster (three masters, each with a replica, on loopback ports: see
 * test/support/redis-cluster.ts) through an ioredis `Cluster` client: the shared task store suite passes, each
 * owner's keys share one hash slot, and the owners spread over the slots.
 */
import { randomBytes } from 'node:crypto';
import type Redis from 'ioredis';
import { redisTaskStore } from '../../core/task-store-redis';
import { redisClientOptions } from '../../lib/limits';
import { newTask } from '../../lib/tasks';
import { type RedisCluster, clusterClient, startRedisCluster } from '../support/redis-cluster';
import { redisDescribe } from '../support/redis';
import { runTaskStoreSuite } from './task-store.suite';

jest.setTimeout(120_000);

type Cluster = InstanceType<typeof Redis.Cluster>;

let cluster: RedisCluster;
let client: Cluster;
const quiet = { error: () => {}, warn: () => {} };
const newPrefix = () => `tasks-${randomBytes(6).toString('hex')}:`;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

redisDescribe({ ownServer: true })('Redis task store on a Redis Cluster', () => {
  beforeAll(async () => {
    cluster = await startRedisCluster();
    client = clusterClient(cluster, { ...redisClientOptions });
    if (client.status !== 'ready') await new Promise((r) => client.once('ready', r));
  }, 120_000);
  afterAll(async () => {
    client?.disconnect();
    await cluster?.stop();
  }, 60_000);

  runTaskStoreSuite({
    newStore: async () => redisTaskStore({ client, keyPrefix: newPrefix(), logger: quiet }),
    now: Date.now,
    elapse: sleep,
    shortTtlMs: 100,
  });

  it("an owner's keys share one slot; different owners land on different slots", async () => {
    const keyPrefix = newPrefix();
    const store = redisTaskStore({ client, keyPrefix, logger: quiet });
    const owners = Array.from({ length: 8 }, (_, i) => `apikey:user-${i}`);
    for (const owner of owners) {
      const t = newTask({
        id: 'x',
        owner,
        now: Date.now(),
        ttlMs: 60_000,
        pollIntervalMs: 1000,
        worker: 'w',
        leaseMs: 1,
      });
      expect(await store.create(t, { maxTasks: 10, maxBytes: 1 << 20 })).toEqual({ ok: true });
      expect(await store.get(owner, 'x')).toEqual(t);
    }
    const keys: string[] = [];
    for (const node of client.nodes('master')) keys.push(...(await node.keys(`${keyPrefix}*`)));
    expect(keys).toHaveLength(3 * owners.length);
    const slotOf = async (k: string) => Number(await client.cluster('KEYSLOT', k));
    const slots = new Map<string, Set<number>>();
    for (const k of keys) {
      const tag = k.slice(0, k.indexOf('}') + 1);
      if (!slots.has(tag)) slots.set(tag, new Set());
      slots.get(tag)!.add(await slotOf(k));
    }
    expect(slots.size).toBe(owners.length);
    for (const s of slots.values()) expect(s.size).toBe(1);
    expect(new Set([...slots.values()].map((s) => [...s][0])).size).toBeGreaterThan(1);
  });
});
