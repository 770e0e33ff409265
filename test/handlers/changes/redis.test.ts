/**
 * redisChangeFeed: two replicas (each its own ioredis client, feed, resources handler and dispatch, one on bare
 * node:http, one in Express 5) on one real redis-server. An announcement on either reaches the listen streams of
 * both exactly once; a foreign message on the channel is dropped and counted, never delivered; while Redis is
 * down each replica's streams still get its own announcements, the outage is logged once and counted, and
 * delivery across replicas resumes by itself when Redis is back.
 */
import { Redis } from 'ioredis';
import { redisClientOptions } from '../../../lib/limits';
import { type RedisChangeFeed, redisChangeFeed } from '../../../handlers/changes/index';
import { memoryResources, resources } from '../../../handlers/resources/index';
import { type DispatchMiddleware, dispatch } from '../../../middleware/dispatch/index';
import { type Platform, type Stack, stack } from '../../support/dispatch-harness';
import { type JsonLogger, jsonLogger } from '../../support/json-logger';
import { type RedisServer, redisDescribe, startRedis } from '../../support/redis';
import { type Stream, envelope, modernHeaders, openStream, until } from '../../support/streaming';

const CHANNEL = 'test:changes';
const OUTAGE = 'redisChangeFeed: Redis unavailable';
const BACK = 'redisChangeFeed: Redis available again';

interface Replica {
  client: Redis;
  feed: RedisChangeFeed;
  mcp: DispatchMiddleware;
  s: Stack;
  log: JsonLogger;
  outages: number;
  drops: string[];
  streams: Stream[];
}

let redis: RedisServer;
const clients: Redis[] = [];

/** The one place this file starts a redis-server. */
async function startTestRedis(): Promise<RedisServer> {
  return startRedis({ ownServer: true });
}

function client(): Redis {
  const c = new Redis(redis.url, { ...redisClientOptions, lazyConnect: false });
  c.on('error', () => {}); // the outage tests kill the server on purpose
  clients.push(c);
  return c;
}

async function replica(platform: Platform): Promise<Replica> {
  const log = jsonLogger();
  const r = { outages: 0, drops: [] as string[], streams: [] as Stream[], log } as Replica;
  r.client = client();
  r.feed = redisChangeFeed({
    redis: r.client,
    channel: CHANNEL,
    logger: log.logger,
    hooks: { onOutage: () => void r.outages++, onDropped: (reason) => void r.drops.push(reason) },
  });
  r.mcp = dispatch({
    anonymous: true,
    handlers: {
      resources: resources({
        sources: [memoryResources([{ uri: 'mem://a', name: 'a', text: 'a' }])],
        changes: r.feed,
      }),
    },
    serverInfo: { name: 'feeds', version: '1' },
  });
  r.s = await stack(platform, [r.mcp]);
  return r;
}

async function listen(r: Replica, filter: object): Promise<Stream> {
  const message = {
    jsonrpc: '2.0',
    id: `s${r.streams.length}`,
    method: 'subscriptions/listen',
    params: { notifications: filter, _meta: envelope() },
  };
  const st = await openStream(`${r.s.base}/mcp`, message, modernHeaders('subscriptions/listen'));
  expect((await st.next()).method).toBe('notifications/subscriptions/acknowledged');
  r.streams.push(st);
  return st;
}

const count = (st: Stream, method: string): number => st.text().split(`"${method}"`).length - 1;
const updates = (st: Stream): number => count(st, 'notifications/resources/updated');
const settle = (ms = 300): Promise<void> => new Promise((r) => setTimeout(r, ms));
const connected = (...rs: Replica[]) => rs.every((r) => r.feed.stats().connected);

beforeAll(async () => {
  redis = await startTestRedis();
});
afterAll(async () => {
  for (const c of clients) c.disconnect();
  await redis.stop();
});

redisDescribe({ ownServer: true })('options', () => {
  test('refused when the feed is created', () => {
    const c = new Redis(redis.url, { ...redisClientOptions, lazyConnect: true });
    try {
      expect(() => redisChangeFeed({ redis: c, chanel: 'x' } as never)).toThrow(
        /^redisChangeFeed: unknown option "chanel"; did you mean "channel"\?/,
      );
      expect(() => redisChangeFeed({} as never)).toThrow(/option "redis" must be an ioredis client/);
      expect(() => redisChangeFeed({ redis: { status: 'ready' } } as never)).toThrow(/"redis"/);
      for (const channel of ['', 'has space', 'x'.repeat(201), 'caf\u00e9', 7]) {
        expect(() => redisChangeFeed({ redis: c, channel } as never)).toThrow(/option "channel" must be/);
      }
      expect(() => redisChangeFeed({ redis: c, hooks: { onOutage: 1 } } as never)).toThrow(
        /option "hooks.onOutage" must be a function/,
      );
      expect(() => redisChangeFeed({ redis: c, hooks: { onOutages() {} } } as never)).toThrow(
        /unknown option hooks\."onOutages"; did you mean "onOutage"/,
      );
    } finally {
      c.disconnect();
    }
  });
});

redisDescribe({ ownServer: true })('two replicas on one Redis', () => {
  let a: Replica;
  let b: Replica;
  beforeAll(async () => {
    [a, b] = await Promise.all([replica('node:http'), replica('express')]);
    await until(() => connected(a, b), 'both feeds subscribed');
  });
  afterEach(async () => {
    for (const st of [...a.streams.splice(0), ...b.streams.splice(0)]) st.close();
    await until(
      () => a.mcp.stats().listenStreams + b.mcp.stats().listenStreams === 0,
      'every listen stream to be gone',
    );
  });
  afterAll(async () => {
    await a.s.close();
    await b.s.close();
    await a.feed.close();
    await b.feed.close();
  });

  test('an announcement on either replica reaches every matching stream exactly once', async () => {
    const onA = [
      await listen(a, { resourceSubscriptions: ['mem://a'] }),
      await listen(a, { resourceSubscriptions: ['mem://a'] }),
    ];
    const onB = await listen(b, { resourceSubscriptions: ['mem://a'], resourcesListChanged: true });
    const before = { a: a.feed.stats(), b: b.feed.stats() };
    for (let i = 0; i < 3; i++) a.feed.updated('mem://a');
    b.feed.updated('mem://a');
    b.feed.updated('mem://a');
    a.feed.updated('mem://other'); // nobody subscribed to it
    const all = [...onA, onB];
    await until(() => all.every((st) => updates(st) === 5), 'five updates on every stream');
    await settle(); // anything sent twice would arrive meanwhile
    expect(all.map(updates)).toEqual([5, 5, 5]);
    expect(a.feed.stats().published - before.a.published).toBe(4);
    expect(a.feed.stats().received - before.a.received).toBe(2);
    expect(b.feed.stats().received - before.b.received).toBe(4);

    a.feed.listChanged();
    await until(() => count(onB, 'notifications/resources/list_changed') === 1, 'list_changed on B');
    await settle();
    expect(count(onB, 'notifications/resources/list_changed')).toBe(1);
    expect(onA.map((st) => count(st, 'notifications/resources/list_changed'))).toEqual([0, 0]);
  });

  test('a foreign message on the channel is dropped and counted, once logged, never delivered', async () => {
    const onB = await listen(b, { resourceSubscriptions: ['mem://a'], resourcesListChanged: true });
    const raw = client();
    await until(() => raw.status === 'ready', 'the raw client');
    const from = 'f'.repeat(16);
    const foreign = [
      'not json',
      '[]',
      JSON.stringify({ v: 2, from, type: 'updated', uri: 'mem://a' }),
      JSON.stringify({ v: 1, from: 'not-hex', type: 'updated', uri: 'mem://a' }),
      `{"v":1,"from":"${from}","type":"updated","uri":"mem://a","__proto__":{"polluted":true}}`,
      JSON.stringify({ v: 1, from, type: 'constructor' }),
      JSON.stringify({ v: 1, from, type: 'updated', uri: 'mem://a', pad: 'x'.repeat(20_000) }),
    ];
    const dropsBefore = b.feed.stats().dropped;
    for (const m of foreign) await raw.publish(CHANNEL, m);
    // The format is the contract: a well-formed message from another feed is delivered.
    await raw.publish(CHANNEL, JSON.stringify({ v: 1, from, type: 'updated', uri: 'mem://a' }));
    await until(() => updates(onB) === 1, 'the well-formed message');
    await settle();
    expect(updates(onB)).toBe(1);
    expect(count(onB, 'notifications/resources/list_changed')).toBe(0);
    expect(b.feed.stats().dropped - dropsBefore).toBe(foreign.length);
    expect(b.drops.slice(-foreign.length)).toEqual([
      'not_json',
      'bad_shape',
      'unknown_version',
      'bad_shape',
      'bad_shape',
      'bad_shape',
      'too_large',
    ]);
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
    expect(b.log.records('redisChangeFeed: dropped')).toHaveLength(1);
  });

  test('Redis down: local streams get local announcements, the outage is logged once and counted, delivery resumes', async () => {
    const onA = await listen(a, { resourceSubscriptions: ['mem://a'] });
    const onB = await listen(b, { resourceSubscriptions: ['mem://a'] });
    await redis.kill();
    await until(() => !a.feed.stats().connected && !b.feed.stats().connected, 'both feeds see the outage');
    for (let i = 0; i < 3; i++) a.feed.updated('mem://a');
    b.feed.updated('mem://a');
    await until(() => updates(onA) === 3 && updates(onB) === 1, 'local delivery');
    await settle();
    expect([updates(onA), updates(onB)]).toEqual([3, 1]);
    for (const r of [a, b]) {
      expect(r.feed.stats().outages).toBe(1);
      expect(r.outages).toBe(1);
      expect(r.log.records(OUTAGE)).toHaveLength(1);
      expect(r.log.records(OUTAGE)[0]).toMatchObject({ level: 'error', channel: CHANNEL });
    }
    expect(a.feed.stats().unsent).toBeGreaterThanOrEqual(3);

    await redis.restart();
    await until(() => connected(a, b), 'both feeds subscribed again', 20_000);
    a.feed.updated('mem://a');
    await until(() => updates(onB) === 2, 'delivery across replicas again');
    await settle();
    expect([updates(onA), updates(onB)]).toEqual([4, 2]);
    for (const r of [a, b]) {
      expect(r.log.records(BACK)).toHaveLength(1);
      expect(r.log.records(OUTAGE)).toHaveLength(1);
      expect(r.outages).toBe(1);
    }
  }, 30_000);

  test('close(): announcements stay local, nothing more is read from the channel', async () => {
    const onA = await listen(a, { resourceSubscriptions: ['mem://a'] });
    const onB = await listen(b, { resourceSubscriptions: ['mem://a'] });
    await a.feed.close();
    expect(a.feed.stats().connected).toBe(false);
    a.feed.updated('mem://a');
    b.feed.updated('mem://a');
    await until(() => updates(onA) === 1 && updates(onB) === 1, 'local delivery');
    await settle();
    expect([updates(onA), updates(onB)]).toEqual([1, 1]);
  });
});
