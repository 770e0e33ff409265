/**
 * The Redis store's cost per request: admission (budget, user slot, global slot, minute window) is one script
 * call, and the release of the slots with the budget's charge is one more; while a call is under way, the
 * admissions of one event-loop turn share the next (releases are each sent at once). Counted by Redis itself (MONITOR, which
 * tells a client's commands from those a script runs), on a real redis-server.
 */
import { randomBytes } from 'node:crypto';
import type Redis from 'ioredis';
import { limits } from '../../../middleware/limits/index';
import { createRedisStore } from '../../../middleware/limits/redis-store';
import { type RedisServer, connectRedis, redisDescribe, startRedis } from '../../support/redis';
import { type TestApp, post, startApp, until } from '../../support/limits-harness';

let server: RedisServer;
let admin: Redis;
let client: Redis;
let app: TestApp | undefined;

beforeAll(async () => {
  // A server of its own: MONITOR would see other clients' commands on a shared REDIS_URL.
  server = await startRedis({ ownServer: true });
  admin = await connectRedis(server.url);
  client = await connectRedis(server.url);
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

  it('the admissions of a turn share a script call behind the first; each release is a call of its own, sent at once; counts stay exact', async () => {
    const store = createRedisStore({
      client,
      keyPrefix: `t${randomBytes(6).toString('hex')}`,
      limits: { userSlots: 3, globalSlots: 5, rpm: { limit: 100, seconds: 60 } },
      leaseMs: 60_000,
      onRenewError: () => {},
      logger: { error: () => {}, warn: () => {} },
    });
    // Load the scripts first (NOSCRIPT, then EVAL).
    const warm = await store.admit('w', 'w0', true);
    if (warm.ok) await store.release('w', 'w0', warm.held, 0);
    let verdicts: Awaited<ReturnType<typeof store.admit>>[] = [];
    const tokens = ['a1', 'a2', 'a3', 'a4', 'b1', 'b2', 'b3'];
    const admitted = await sent(async () => {
      verdicts = await Promise.all(tokens.map((t) => store.admit(t[0]!, t, true)));
    });
    // The first goes at once; the six behind it, sent while it is under way, go together.
    expect(admitted).toEqual({ evalsha: 2 });
    // In order: three of a's four get a user slot; b's first two take the last global slots.
    expect(verdicts.map((v) => (v.ok ? 'ok' : v.reason))).toEqual([
      'ok',
      'ok',
      'ok',
      'user_concurrent',
      'ok',
      'ok',
      'global_concurrent',
    ]);
    expect(store.slotCount).toBe(10);
    const released = await sent(async () => {
      await Promise.all(
        tokens.map((t, i) => {
          const v = verdicts[i]!;
          return v.ok ? store.release(t[0]!, t, v.held, 0) : undefined;
        }),
      );
    });
    // Never queued behind another call: each release is written before the answer that follows it.
    expect(released).toEqual({ evalsha: 5 });
    expect(store.slotCount).toBe(0);
    const again = await store.admit('b', 'b4', true);
    expect(again.ok).toBe(true);
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
