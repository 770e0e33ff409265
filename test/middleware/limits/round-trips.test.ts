/**
 * The Redis store's cost per request: admission (budget, user slot, global slot, minute window) is one script
 * call, and the release of the slots with the budget's charge is one more; while a call is under way, the
 * admissions of one event-loop turn share the next, and so do their releases, except the release of a set's last
 * slot, which the answer waits for and which is sent at once. Counted by Redis itself (MONITOR, which tells a
 * client's commands from those a script runs), on a real redis-server.
 */
import { randomBytes } from 'node:crypto';
import type Redis from 'ioredis';
import { limits } from '../../../middleware/limits/index';
import { createRedisStore } from '../../../middleware/limits/redis-store';
import { ADMIT, RELEASE } from '../../../middleware/limits/redis-scripts';
import { type RedisServer, connectRedis, redisDescribe, startRedis } from '../../support/redis';
import { type TestApp, keepAlive, post, startApp, until } from '../../support/limits-harness';

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

/** Names a script call by its script, e.g. `evalsha admit`. */
const SCRIPTS = new Map([
  [ADMIT.sha, 'admit'],
  [RELEASE.sha, 'release'],
]);

/**
 * The commands clients send while `f` runs (not those scripts run), by name, e.g. `{ evalsha: 1 }`; with
 * `byScript`, a script call by its script, e.g. `{ 'evalsha admit': 1 }`.
 */
async function sent(f: () => Promise<void>, byScript = false): Promise<Record<string, number>> {
  const monitor = await admin.monitor();
  const out: Record<string, number> = {};
  monitor.on('monitor', (_time: string, args: string[], source: string) => {
    if (source === 'lua') return;
    let name = String(args[0]).toLowerCase();
    if (byScript && name === 'evalsha') name += ` ${SCRIPTS.get(String(args[1])) ?? String(args[1])}`;
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

  it("the admissions of a turn share a script call behind the first, as do their releases, except a set's last slot's, sent at once; counts stay exact", async () => {
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
    // a1's goes at once; a3's and b2's (each took its set's last slot, a3 the user's and b2 the global one) are
    // never queued behind another call, as the answers wait for them; a2's and b1's share one call.
    expect(released).toEqual({ evalsha: 4 });
    expect(store.slotCount).toBe(0);
    const again = await store.admit('b', 'b4', true);
    expect(again.ok).toBe(true);
  });

  it('over HTTP, the releases of answers that end together share a call: about two script calls per batch, not one per request', async () => {
    await app?.close();
    const n = 32;
    const mw = limits({
      perUserRpm: 1000,
      // Far from full: no request takes a set's last slot, so no answer waits for its release.
      perUserConcurrency: 2 * n,
      globalConcurrency: 4 * n,
      costBudgetPerHour: 1_000_000,
      logger: { error: () => {}, warn: () => {} },
      store: { redis: client, onOutage: 'fail-closed', keyPrefix: `r${randomBytes(6).toString('hex')}` },
    });
    app = await startApp(mw, 'bare');
    expect((await post(app.port, { user: 'a' })).status).toBe(200);
    await until(() => mw.stats().redisSlots === 0, 'the first request released');
    await new Promise((r) => setTimeout(r, 100));
    const agent = keepAlive();
    const commands = await sent(async () => {
      const answers = Array.from({ length: n }, () => post(app!.port, { user: 'a', agent, hold: 'gate' }));
      await until(() => app!.holding === n, 'all held');
      app!.release(); // every answer ends in this turn
      expect((await Promise.all(answers)).map((r) => r.status)).toEqual(Array(n).fill(200));
      await until(() => mw.stats().redisSlots === 0, 'released');
    }, true);
    agent.destroy();
    if (process.env.MCP_TEST_LOGS) console.log(commands);
    // The first release goes at once; those behind it, while it is under way, go together.
    expect(commands['evalsha release']).toBeLessThanOrEqual(3);
    // The admissions arrive as the connections open, each in a turn of its own or not: at most one call each.
    expect(commands['evalsha admit']).toBeLessThanOrEqual(n);
    expect(Object.keys(commands).sort()).toEqual(['evalsha admit', 'evalsha release']);
    expect((await post(app.port, { user: 'a' })).status).toBe(200);
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
