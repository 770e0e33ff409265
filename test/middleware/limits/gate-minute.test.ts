/**
 * The limiter's gate and the minute's last request: a caller that has used its minute is refused before its next
 * body is read, whether or not it was refused yet (the admission that takes the minute's last request tells the
 * gate, from the memory store and from Redis alike); and a body refused before the limiter (malformed JSON, a
 * batch, invalid UTF-8) counts as one request of the caller's minute, so that such bodies alone run into the
 * minute and then into the gate. Through mcpEndpoint() on node:http, with the memory store and a real Redis.
 */
import type Redis from 'ioredis';
import { hashKey } from '../../../middleware/api-key-auth/index';
import { mcpEndpoint } from '../../../middleware/endpoint/index';
import type { LimitsOptions } from '../../../middleware/limits/index';
import { ToolRegistry, ok } from '../../../handlers/tools/index';
import { type RedisServer, connectRedis, redisDescribe, startRedis } from '../../support/redis';
import { type Served, sendPartial, serveWatchingBody, type Answer } from '../../support/unread-body';
import { until } from '../../support/streaming';

const ALICE = 'minute-alice-key-0123456789';
const BOB = 'minute-bob-key-0123456789ab';
const keys = [
  { userId: 'alice', hash: hashKey(ALICE), groups: ['g'] },
  { userId: 'bob', hash: hashKey(BOB), groups: ['g'] },
];
const quiet = { error() {}, warn() {} };

const headers = (key: string, version = '2025-11-25'): Record<string, string> => ({
  Authorization: `Bearer ${key}`,
  'Content-Type': 'application/json',
  Accept: 'application/json, text/event-stream',
  'MCP-Protocol-Version': version,
});
const LIST = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
const MALFORMED = '{"jsonrpc": "2.0", "id": 3, "method": ';
const BATCH = JSON.stringify([{ jsonrpc: '2.0', id: 1, method: 'tools/list' }]);
const NOT_UTF8 = Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]);
const MIB3 = Buffer.alloc(3 * 1024 * 1024, '{');

/** The endpoint with `limits` on a server that watches each request's body. */
async function serve(limits: LimitsOptions): Promise<Served> {
  const endpoint = mcpEndpoint({
    auth: { apiKeys: keys },
    handlers: {
      tools: new ToolRegistry({
        logger: quiet,
        tools: [{ name: 'hello', inputSchema: { type: 'object' }, call: () => ok({ hi: true }) }],
      }),
    },
    dispatch: { serverInfo: { name: 'minute', version: '1' } },
    limits: { logger: quiet, ...limits },
    logger: quiet,
  });
  return serveWatchingBody(endpoint);
}

/** POST as `key` in `version` (see sendPartial). */
function send(url: string, key: string, body: Buffer | string, sent?: number, version?: string) {
  return sendPartial(url, headers(key, version), body, sent);
}

/** The gate's 429 for the minute: no id, since no body was read. */
function expectGated(a: Answer): void {
  expect(a.status).toBe(429);
  const secs = Number(a.headers['retry-after']);
  expect(Number.isInteger(secs) && secs >= 1 && secs <= 60).toBe(true);
  expect(a.body).toEqual({
    jsonrpc: '2.0',
    error: { code: 429, message: expect.any(String), data: { limit: 'rpm', retryAfterSeconds: secs } },
  });
}

/** 3 MiB of malformed JSON, of which 64 KiB are sent: answered 429 while the rest is still owed, never read. */
async function bigBodyGated(s: Served): Promise<void> {
  const big = send(s.url, ALICE, MIB3, 64 * 1024);
  const index = s.bodyRead.length;
  try {
    await until(() => big.answered() || (s.bodyRead[index]?.() ?? false), 'an answer or a body read');
    expect(big.answered()).toBe(true);
    expectGated(await big.done);
    expect(s.bodyRead[index]!()).toBe(false);
  } finally {
    big.abort();
  }
}

/** A malformed, batched or undecodable body: refused 400 by rejectBatch() or parse(), after being read. */
async function refusedBeforeTheLimiter(s: Served, body: Buffer | string): Promise<void> {
  const at = s.bodyRead.length;
  const a = await send(s.url, ALICE, body).done;
  expect(a.status).toBe(400);
  expect(s.bodyRead[at]!()).toBe(true);
}

/** perUserRpm 2: two admitted requests use alice's minute; her next body is refused before it is read. */
async function minuteUsedUp(s: Served): Promise<void> {
  expect((await send(s.url, ALICE, LIST).done).status).toBe(200);
  expect((await send(s.url, ALICE, LIST).done).status).toBe(200);
  await bigBodyGated(s);
  const at = s.bodyRead.length;
  expectGated(await send(s.url, ALICE, LIST).done);
  expect(s.bodyRead[at]!()).toBe(false);
  expect((await send(s.url, BOB, LIST).done).status).toBe(200);
}

describe('the limits gate and the minute (memory store, through mcpEndpoint())', () => {
  let s: Served | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  test('perUserRpm 2: after two admitted requests, a 3 MiB malformed body gets 429 before it is read', async () => {
    s = await serve({ perUserRpm: 2 });
    await minuteUsedUp(s);
  });

  test('perUserRpm 3: three bodies refused before the limiter use the minute; the fourth is not read', async () => {
    s = await serve({ perUserRpm: 3 });
    await refusedBeforeTheLimiter(s, MALFORMED);
    await refusedBeforeTheLimiter(s, BATCH);
    await refusedBeforeTheLimiter(s, NOT_UTF8);
    await bigBodyGated(s);
    // Bob's minute is his own.
    expect((await send(s.url, BOB, MALFORMED).done).status).toBe(400);
    expect((await send(s.url, BOB, LIST).done).status).toBe(200);
  });

  test('a request refused after its admission counts once: the limiter counted it, the refusal does not', async () => {
    s = await serve({ perUserRpm: 2 });
    // Admitted by the limiter (one request of the minute), then refused by classifyRevision().
    const bad = await send(s.url, ALICE, LIST, undefined, '1999-01-01').done;
    expect(bad.status).toBe(400);
    expect((await send(s.url, ALICE, LIST).done).status).toBe(200);
    await bigBodyGated(s);
  });

  test('perUserRpm 0: refused bodies count against nothing, and the gate refuses nothing', async () => {
    s = await serve({ perUserRpm: 0, perUserConcurrency: 2 });
    for (let i = 0; i < 4; i++) await refusedBeforeTheLimiter(s, MALFORMED);
    expect((await send(s.url, ALICE, LIST).done).status).toBe(200);
  });
});

const describeWithRedis = redisDescribe();

describeWithRedis('the limits gate and the minute (Redis store, through mcpEndpoint())', () => {
  let server: RedisServer;
  let admin: Redis;
  const clients: Redis[] = [];
  let s: Served | undefined;

  beforeAll(async () => {
    server = await startRedis();
    admin = await connectRedis(server.url);
  });
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });
  afterAll(async () => {
    for (const c of [admin, ...clients]) if (c && c.status !== 'end') c.disconnect();
    await server?.stop();
  });

  async function serveWithRedis(o: LimitsOptions): Promise<{ served: Served; prefix: string }> {
    const redis = await connectRedis(server.url);
    clients.push(redis);
    const prefix = server.prefix('gate-minute');
    const served = await serve({ ...o, store: { redis, onOutage: 'fail-closed', keyPrefix: prefix } });
    return { served, prefix };
  }

  test('perUserRpm 2: after two admitted requests, a 3 MiB malformed body gets 429 before it is read', async () => {
    ({ served: s } = await serveWithRedis({ perUserRpm: 2 }));
    await minuteUsedUp(s);
  });

  test('perUserRpm 3: bodies refused before the limiter count in Redis; once the minute is used, none is read', async () => {
    const { served, prefix } = await serveWithRedis({ perUserRpm: 3 });
    s = served;
    await refusedBeforeTheLimiter(s, MALFORMED);
    await refusedBeforeTheLimiter(s, BATCH);
    await refusedBeforeTheLimiter(s, NOT_UTF8);
    // The counts go to Redis after the refusals are written: wait until the third has landed.
    const [rpmKey] = await admin.keys(`${prefix}:u:*:rpm`);
    expect(rpmKey).toContain('alice');
    for (let i = 0; (await admin.get(rpmKey!)) !== '3'; i++) {
      if (i > 2000) throw new Error(`never counted: ${rpmKey} is ${await admin.get(rpmKey!)}`);
      await new Promise((r) => setTimeout(r, 1));
    }
    // Refused by the gate, or by the limiter after reading it when the third count's answer is still on its way.
    expect((await send(s.url, ALICE, LIST).done).status).toBe(429);
    await bigBodyGated(s);
  });
});
