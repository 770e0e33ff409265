/**
 * The Redis store against the shared store suite, on a real Redis (REDIS_URL, or a redis-server started on a
 * random loopback port).
 */
import type Redis from 'ioredis';
import { type RedisStore, createRedisStore } from '../../../middleware/limits/redis-store';
import { type RedisServer, connectRedis, redisDescribe, startRedis } from '../../support/redis';
import { runStoreSuite } from '../../support/limits-store-suite';

let server: RedisServer;
let client: Redis;
const stores: RedisStore[] = [];
const renewErrors: Error[] = [];

beforeAll(async () => {
  server = await startRedis();
  client = await connectRedis(server.url);
});
afterAll(async () => {
  client?.disconnect();
  await server?.stop();
});
afterEach(() => {
  for (const s of stores.splice(0)) expect(s.slotCount).toBe(0); // every test gives its slots back
  expect(renewErrors).toEqual([]);
});

redisDescribe()('Redis store', () => {
  runStoreSuite({
    newStore: async (limits) => {
      const store = createRedisStore({
        client,
        keyPrefix: server.prefix('store'),
        limits,
        leaseMs: 60_000,
        onRenewError: (e) => renewErrors.push(e),
        logger: { error: () => {}, warn: () => {} },
      });
      stores.push(store);
      return store;
    },
  });
});
