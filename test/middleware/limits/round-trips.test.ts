/**
 * The Redis store's cost per request: admission (budget, user slot, global slot, minute window) is one script
 * call, and the release of the slots with the budget's charge is one more. Counted by Redis itself (MONITOR, which
 * tells a client's commands from those a script runs), on a real redis-server.
 */
import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import { limits, redisClientOptions } from '../../../middleware/limits/index';
import { type RedisServer, redisDescribe, startRedis } from '../../support/redis';
import { type TestApp, post, startApp, until } from '../../support/limits-harness';

let server: RedisServer;
let admin: Redis;
let client: Redis;
let app: TestApp | undefined;

beforeAll(async () => {
  // A server of its own: MONITOR would see other clients' commands on a shared REDIS_URL.
  server = await startRedis({ ownServer: true });
  admin = new Redis(server.url, { ...redisClientOptions });
  client = new Redis(server.url, { ...redisClientOptions });
  for (const c of [admin, client]) {
    c.on('error', () => {});
    if (c.status !== 'ready') await new Promise((r) => c.once('ready', r));
  }
});
afterAll(async () => {
  await app?.close();
  admin.disconnect();
  client.disconnect();
  await server.stop();
});

/** The commands clients send while `f` runs (not those scripts run), by name, e.g. `{ evalsha: 1 }`. */
async function sent(f: () => Promise<void>): Promise<Record<string, number>> {
  const monitor = await admin.monitor();
  const out: Record<string, number> = {};
  monitor.on('monitor', (_time: string, args: string[], source: string) => {
    if (source === 'lua') return;
    const name = String(args[0]).toLowerCase();
    out[name] = (out[name] ?? 0) + 1;
  });
  try {
    await f();
    await new Promise((r) => setTimeout(r, 100));
  } finally {
    monitor.disconnect();
  }
  return out;
}

redisDescribe({ ownServer: true })('limits, Redis store: round trips per request', () => {
  it('every limit on: admission is one script call, the release and the charge one more', async () => {
    const mw = limits({
      perUserRpm: 100,
      perUserConcurrency: 4,
      globalConcurrency: 8,
      costBudgetPerHour: 1_000_000,
      logger: { error: () => {}, warn: () => {} },
      store: { redis: client, onOutage: 'fail-closed', keyPrefix: `r${randomBytes(6).toString('hex')}` },
    });
    app = await startApp(mw, 'bare');
    // The first request loads the scripts (EVALSHA answered NOSCRIPT, then EVAL).
    expect((await post(app.port, { user: 'a', charge: '5' })).status).toBe(200);
    await until(() => mw.stats().redisSlots === 0, 'the first request released');
    await new Promise((r) => setTimeout(r, 100));

    const commands = await sent(async () => {
      expect((await post(app!.port, { user: 'a', charge: '5' })).status).toBe(200);
      await until(() => mw.stats().redisSlots === 0, 'released');
    });
    expect(commands).toEqual({ evalsha: 2 });
  });

  it('the minute window alone: one script call, nothing to release', async () => {
    await app?.close();
    const mw = limits({
      perUserRpm: 100,
      perUserConcurrency: 0,
      globalConcurrency: 0,
      costBudgetPerHour: 0,
      logger: { error: () => {}, warn: () => {} },
      store: { redis: client, onOutage: 'fail-closed', keyPrefix: `r${randomBytes(6).toString('hex')}` },
    });
    app = await startApp(mw, 'bare');
    expect((await post(app.port, { user: 'a' })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 100));
    const commands = await sent(async () => {
      expect((await post(app!.port, { user: 'a' })).status).toBe(200);
    });
    expect(commands).toEqual({ evalsha: 1 });
  });
});
