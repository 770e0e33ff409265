/**
 * The limits and the Redis change feed on a Redis Cluster: three masters, each with a replica, started on
 * loopback ports (test/support/redis-cluster.ts), through ioredis `Cluster` clients. A user's keys share one
 * hash slot, other users' keys land on other slots; the counts are exact as with one Redis and as in memory;
 * announcements reach the other replica's feed; and when a master is killed, its replica takes over and the
 * limits answer within their outage policy meanwhile and are shared again after.
 */
import { randomBytes } from 'node:crypto';
import type Redis from 'ioredis';
import { type RedisPubSubClient, redisChangeFeed } from '../../handlers/changes/index';
import {
  type LimitsMiddleware,
  type OutagePolicy,
  limits,
  redisClientOptions,
} from '../../middleware/limits/index';
import { type RedisStore, createRedisStore } from '../../middleware/limits/redis-store';
import { runStoreSuite } from '../support/limits-store-suite';
import { type RedisCluster, clusterClient, startRedisCluster } from '../support/redis-cluster';
import { redisDescribe } from '../support/redis';
import { type TestApp, keepAlive, post, startApp, tally, until, userKey } from '../support/limits-harness';

jest.setTimeout(120_000);

type Cluster = InstanceType<typeof Redis.Cluster>;

let cluster: RedisCluster;
const clients: Cluster[] = [];
const apps: TestApp[] = [];

beforeAll(async () => {
  cluster = await startRedisCluster();
}, 120_000);
afterAll(async () => {
  for (const a of apps.splice(0)) await a.close();
  for (const c of clients) c.disconnect();
  await cluster?.stop();
}, 60_000);

async function client(): Promise<Cluster> {
  const c = clusterClient(cluster, { ...redisClientOptions });
  clients.push(c);
  if (c.status !== 'ready') await new Promise((r) => c.once('ready', r));
  return c;
}

const OFF = { perUserRpm: 0, perUserConcurrency: 0, globalConcurrency: 0, costBudgetPerHour: 0 };
const quiet = { error: () => {}, warn: () => {} };
const newPrefix = () => `c${randomBytes(6).toString('hex')}`;

async function open(
  o: Record<string, number>,
  store: { prefix: string; onOutage?: OutagePolicy; redis?: Cluster } | 'memory',
): Promise<{ mw: LimitsMiddleware; app: TestApp }> {
  const mw = limits({
    ...OFF,
    ...o,
    logger: quiet,
    store:
      store === 'memory'
        ? 'memory'
        : {
            redis: store.redis ?? (await client()),
            onOutage: store.onOutage ?? 'fail-closed',
            keyPrefix: store.prefix,
            timeoutMs: 300,
            retryIntervalMs: 100,
          },
  });
  const app = await startApp(mw, 'bare');
  apps.push(app);
  return { mw, app };
}

/** The cluster hash slot of `key`, as Redis computes it. */
async function slotOf(c: Cluster, key: string): Promise<number> {
  return Number(await c.cluster('KEYSLOT', key));
}

/** The same requests against the memory store and against the cluster: the same answers. */
async function both(o: Record<string, number>, f: (app: TestApp) => Promise<Record<number, number>>) {
  const memory = await f((await open(o, 'memory')).app);
  const shared = await f((await open(o, { prefix: newPrefix() })).app);
  return { memory, shared };
}

redisDescribe({ ownServer: true })('limits on a Redis Cluster', () => {
  it('exact counts under concurrency, as in memory: 40 parallel requests, rpm 7 → exactly 7 pass', async () => {
    const r = await both({ perUserRpm: 7 }, async (app) => {
      const agent = keepAlive();
      const rs = await Promise.all(
        Array.from({ length: 40 }, (_, i) => post(app.port, { user: 'a', agent, id: i })),
      );
      agent.destroy();
      return tally(rs);
    });
    expect(r.memory).toEqual({ 200: 7, 429: 33 });
    expect(r.shared).toEqual(r.memory);
  });

  it('exact concurrency counts, as in memory: user and global slots across two replicas', async () => {
    const o = { perUserConcurrency: 2, globalConcurrency: 3 };
    const counts = async (apps: TestApp[]) => {
      const holding = () => [...new Set(apps)].reduce((n, a) => n + a.holding, 0);
      // One at a time, alternating replicas, each sent once the one before is held or answered: which request
      // meets which limit then follows from this order, not from the order the requests happen to arrive in.
      const plan = ['a', 'a', 'a', 'a', 'b', 'c'];
      const held: ReturnType<typeof post>[] = [];
      for (const [i, user] of plan.entries()) {
        const before = holding();
        let answered = false;
        const p = post(apps[i % 2]!.port, { user, hold: 'gate' });
        const settled = (): void => void (answered = true);
        p.then(settled, settled);
        held.push(p);
        await until(() => answered || holding() > before, `request ${i + 1} held or answered`);
      }
      expect(holding()).toBe(3);
      for (const a of apps) a.release();
      const rs = await Promise.all(held);
      return rs.map((x) =>
        x.status === 200 ? 'ok' : String((x.json().error?.data as { limit: string }).limit),
      );
    };
    const memApp = (await open(o, 'memory')).app;
    const memory = await counts([memApp, memApp]);
    const prefix = newPrefix();
    const replicas = [(await open(o, { prefix })).app, (await open(o, { prefix })).app];
    const shared = await counts(replicas);
    const sorted = (xs: string[]) => [...xs].sort();
    expect(sorted(memory)).toEqual([
      'global_concurrent',
      'ok',
      'ok',
      'ok',
      'user_concurrent',
      'user_concurrent',
    ]);
    expect(sorted(shared)).toEqual(sorted(memory));
  });

  it('each limit alone: a user slot without a global limit is given back, request after request', async () => {
    const each: Record<string, number>[] = [
      { perUserConcurrency: 1 },
      { globalConcurrency: 1 },
      { costBudgetPerHour: 1_000_000 },
    ];
    for (const o of each) {
      const { mw, app } = await open(o, { prefix: newPrefix() });
      const rs = [];
      for (let i = 0; i < 5; i++) {
        rs.push(await post(app.port, { user: 'a', charge: '1' }));
        await until(() => mw.stats().redisSlots === 0, 'released');
      }
      expect(tally(rs)).toEqual({ 200: 5 });
      expect(mw.stats().storeDown).toBe(false);
    }
  });

  it("one user's keys share a hash slot; two users' keys are on different slots", async () => {
    const c = await client();
    const prefix = newPrefix();
    const { mw, app } = await open(
      { perUserRpm: 100, perUserConcurrency: 4, globalConcurrency: 8, costBudgetPerHour: 1_000_000 },
      { prefix, redis: c },
    );
    const users = ['u0', 'u1', 'u2', 'u3'];
    for (const u of users) expect((await post(app.port, { user: u, charge: '5' })).status).toBe(200);
    await until(() => mw.stats().redisSlots === 0, 'released');
    const slots = new Set<number>();
    for (const u of users) {
      const base = `${prefix}:u:{${userKey(u)}}`;
      expect(await c.get(`${base}:rpm`)).toBe('1');
      expect(await c.get(`${base}:budget`)).toBe('5');
      const mine = new Set([
        await slotOf(c, `${base}:rpm`),
        await slotOf(c, `${base}:budget`),
        await slotOf(c, `${base}:slots`),
      ]);
      expect(mine.size).toBe(1);
      slots.add([...mine][0]!);
    }
    expect(slots.size).toBeGreaterThan(1); // users spread over the cluster
  });
});

redisDescribe({ ownServer: true })('Redis store on a Redis Cluster: the shared store suite', () => {
  const stores: RedisStore[] = [];
  afterEach(() => {
    for (const s of stores.splice(0)) expect(s.slotCount).toBe(0); // every test gives its slots back
  });
  runStoreSuite({
    newStore: async (limits) => {
      const store = createRedisStore({
        client: await client(),
        keyPrefix: newPrefix(),
        limits,
        leaseMs: 60_000,
        onRenewError: (e) => {
          throw e;
        },
        logger: quiet,
      });
      stores.push(store);
      return store;
    },
  });
});

redisDescribe({ ownServer: true })('Redis store on a Redis Cluster: the global check fails', () => {
  it("the user's part taken by the first call is given back, so the user's slot is free after", async () => {
    const c = await client();
    // A prefix whose global key and user key are served by different masters.
    let prefix = newPrefix();
    while (
      (await cluster.masterOf(`${prefix}:g:{all}:slots`)) ===
      (await cluster.masterOf(`${prefix}:u:{u:a}:slots`))
    )
      prefix = newPrefix();
    const store = createRedisStore({
      client: c,
      keyPrefix: prefix,
      limits: { rpm: { limit: 100, seconds: 60 }, userSlots: 1, globalSlots: 5 },
      leaseMs: 60_000,
      onRenewError: () => {},
      logger: quiet,
    });
    expect((await store.admit('u:a', 'warm', true)).ok).toBe(true); // the scripts are loaded on both masters
    await store.release('u:a', 'warm', { user: true, global: true }, 0);
    const globalPort = await cluster.masterOf(`${prefix}:g:{all}:slots`);
    const global = cluster.nodes.find((n) => n.port === globalPort)!;
    global.proc.kill('SIGSTOP'); // the global check's node stops answering (shorter than a failover takes)
    try {
      await expect(store.admit('u:a', 't1', true)).rejects.toThrow();
    } finally {
      global.proc.kill('SIGCONT');
    }
    await new Promise((r) => setTimeout(r, 300));
    const again = await store.admit('u:a', 't2', true);
    // The user's only slot is its set's last free one.
    expect(again).toEqual({ ok: true, held: { user: true, global: true, lastSlot: true } });
    await store.release('u:a', 't2', { user: true, global: true }, 0);
    expect(store.slotCount).toBe(0);
  });
});

redisDescribe({ ownServer: true })('redisChangeFeed on a Redis Cluster', () => {
  it('an announcement on one replica reaches the other once, over Cluster clients', async () => {
    const channel = `feed:${newPrefix()}`;
    const feeds = [
      // A Cluster's duplicate() takes (startup nodes, options): the feed's options reach it as the nodes and
      // are ignored, so the subscriber connection is a Cluster of the same nodes with the same options.
      redisChangeFeed({ redis: (await client()) as unknown as RedisPubSubClient, channel, logger: quiet }),
      redisChangeFeed({ redis: (await client()) as unknown as RedisPubSubClient, channel, logger: quiet }),
    ];
    try {
      await until(() => feeds.every((f) => f.stats().connected), 'both feeds subscribed');
      const seen: unknown[][] = [[], []];
      feeds.forEach((f, i) => f.subscribe((e) => seen[i]!.push(e)));
      feeds[0]!.updated('mem://a');
      feeds[1]!.listChanged();
      await until(() => seen[0]!.length === 2 && seen[1]!.length === 2, 'both announcements on both');
      await new Promise((r) => setTimeout(r, 200));
      for (const s of seen) {
        expect(s).toHaveLength(2); // exactly once each: own echoes skipped
        expect(s).toEqual(
          expect.arrayContaining([{ type: 'updated', uri: 'mem://a' }, { type: 'listChanged' }]),
        );
      }
    } finally {
      await Promise.all(feeds.map((f) => f.close()));
    }
  });
});

redisDescribe({ ownServer: true })('limits on a Redis Cluster: a master fails over', () => {
  it('answers within each outage policy while the master is gone, and the limits are shared again after', async () => {
    const c = await client();
    const prefix = newPrefix();
    const o = { perUserRpm: 100_000, perUserConcurrency: 4 };
    const open503 = await open(o, { prefix, onOutage: 'fail-open' });
    const closed = await open(o, { prefix, onOutage: 'fail-closed' });
    const key = `${prefix}:u:{${userKey('f')}}:rpm`;
    expect((await post(open503.app.port, { user: 'f' })).status).toBe(200);
    expect((await post(closed.app.port, { user: 'f' })).status).toBe(200);
    expect(await c.get(key)).toBe('2');

    let stop = false;
    const seen = { open: [] as number[], closed: [] as number[] };
    const load = (port: number, into: number[]) =>
      (async () => {
        while (!stop) {
          into.push((await post(port, { user: 'f' })).status);
          await new Promise((r) => setTimeout(r, 20));
        }
      })();
    const loads = [load(open503.app.port, seen.open), load(closed.app.port, seen.closed)];
    try {
      const { killed, promoted } = await cluster.killMasterOf(key);
      expect(promoted).not.toBe(killed);
      await until(
        async () =>
          (await post(closed.app.port, { user: 'f' })).status === 200 &&
          !open503.mw.stats().storeDown &&
          !closed.mw.stats().storeDown,
        'both replicas on Redis again',
        60_000,
      );
    } finally {
      stop = true;
      await Promise.all(loads);
    }
    expect(seen.open.filter((s) => s !== 200)).toEqual([]); // fail-open: answered from memory meanwhile
    expect(seen.closed.filter((s) => s !== 200 && s !== 503)).toEqual([]);
    expect(seen.closed).toContain(503); // the gap was seen, and refused
    // Shared again: each replica's request counts in the cluster (the promoted replica), not in memory.
    // (A late failure of a command sent during the gap may still send one request to memory: hence the wait.)
    for (const r of [open503, closed]) {
      await until(async () => {
        const before = Number(await c.get(key));
        const status = (await post(r.app.port, { user: 'f' })).status;
        return status === 200 && Number(await c.get(key)) === before + 1;
      }, 'a request counted in the cluster');
    }
  });
});
