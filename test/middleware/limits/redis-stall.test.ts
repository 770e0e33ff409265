/**
 * A Redis that stalls (SIGSTOP, then SIGCONT) at the default settings: the store gives up on an admission
 * after `timeoutMs` (500 ms), which is also the client's own command timeout (`redisClientOptions`). The
 * script still runs when Redis resumes and takes its slots; an admission the store gave up on must hold none
 * of them afterwards, so the user's and the global slots are free again soon after Redis answers, not a lease
 * (60 s) later. Needs a redis-server of its own (it freezes it).
 */
import type Redis from 'ioredis';
import { limits } from '../../../middleware/limits/index';
import { type RedisServer, connectRedis, redisDescribe, redisWanted, startRedis } from '../../support/redis';
import { type TestApp, post, startApp, until, userKey } from '../../support/limits-harness';

const OWN_SERVER = { ownServer: true };
let server: RedisServer;
let client: Redis | undefined;
let admin: Redis | undefined;
let app: TestApp | undefined;

beforeAll(async () => {
  if (redisWanted(OWN_SERVER)) server = await startRedis(OWN_SERVER);
});
afterAll(async () => {
  server?.resume();
  await app?.close();
  client?.disconnect();
  admin?.disconnect();
  await server?.stop();
});

redisDescribe(OWN_SERVER)('limits, Redis store: admissions given up on during a stall', () => {
  it('hold no slot once Redis resumes, at the default timeouts', async () => {
    client = await connectRedis(server.url);
    admin = await connectRedis(server.url);
    const prefix = server.prefix('stall');
    const logs: string[] = [];
    // Every store option but the key prefix at its default: timeoutMs 500, slotLeaseMs 60 s, retryIntervalMs 1 s.
    const mw = limits({
      perUserRpm: 0,
      perUserConcurrency: 1,
      globalConcurrency: 10,
      costBudgetPerHour: 0,
      logger: { error: (m) => logs.push(m), warn: (m) => logs.push(m) },
      store: { redis: client, onOutage: 'fail-open', keyPrefix: prefix },
    });
    app = await startApp(mw, 'bare');
    const port = app.port;
    expect((await post(port, { user: 'u' })).status).toBe(200); // the scripts are loaded
    const userSlots = `${prefix}:u:{${userKey('u')}}:slots`;
    const globalSlots = `${prefix}:g:{all}:slots`;

    server.pause();
    // One user, one request at a time, for as long as Redis is stopped: each admission sent to Redis is given up
    // on and answered from the insurance (fail-open, 200).
    const stoppedAt = Date.now();
    while (Date.now() - stoppedAt < 2500) expect((await post(port, { user: 'u' })).status).toBe(200);
    expect(mw.stats().storeDown).toBe(true);
    server.resume();

    // Redis now runs what it received while stopped, the admissions given up on among it.
    expect(await admin.ping()).toBe('PONG');
    await until(
      async () => (await admin!.zcard(userSlots)) + (await admin!.zcard(globalSlots)) === 0,
      'the slots of the admissions given up on are free',
      5000,
    );
    // Once the store is asked again (after retryIntervalMs), the user's requests are admitted from Redis.
    await until(
      async () => (await post(port, { user: 'u' })).status === 200 && !mw.stats().storeDown,
      'Redis used again',
      5000,
    );
    const held = post(port, { user: 'u', hold: 'gate' });
    await until(() => app!.holding === 1, 'admitted and held');
    expect(await admin.zcard(userSlots)).toBe(1); // admitted in Redis, where its one slot is the only one
    expect((await post(port, { user: 'u' })).status).toBe(429); // the limit is shared again
    app.release();
    expect((await held).status).toBe(200);
    await until(async () => (await admin!.zcard(userSlots)) === 0, 'released');
    expect(logs.some((l) => /Redis available again/.test(l))).toBe(true);
  }, 30_000);
});
