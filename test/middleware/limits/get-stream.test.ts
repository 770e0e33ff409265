/**
 * limits() in front of a 2025-11-25 session's GET stream and DELETE (the route `sdk()` and `proxy()` serve): a
 * GET stream is one request of the caller's minute that holds no concurrency slot and charges the budget
 * nothing for the time it stays open (as a `subscriptions/listen` stream); a DELETE is a request like a POST;
 * another method still gets the POST-only 405. Behind real API-key authentication, on node:http, with the
 * memory store and a real Redis.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type Redis from 'ioredis';
import { apiKeyAuth, hashKey } from '../../../middleware/api-key-auth/index';
import { compose } from '../../../middleware/compose/index';
import { type LimitsMiddleware, type LimitsOptions, limits } from '../../../middleware/limits/index';
import { type RedisServer, connectRedis, redisDescribe, startRedis } from '../../support/redis';

const KEY = 'limits-get-stream-key-0123456789';
const AUTH = { Authorization: `Bearer ${KEY}` };
const quiet = { error() {}, warn() {} };
const OFF = { perUserRpm: 0, perUserConcurrency: 0, globalConcurrency: 0, costBudgetPerHour: 0 };

/** The final handler: a GET is an event stream held open until the client leaves; anything else a 200. */
function final(req: IncomingMessage, res: ServerResponse): void {
  if (req.method === 'GET') {
    res.writeHead(200, { 'Content-Type': 'text/event-stream' });
    res.write(': open\n\n');
    return;
  }
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ jsonrpc: '2.0', id: 1, result: {} }));
  });
}

interface App {
  url: string;
  limiter: LimitsMiddleware;
  charges: Array<{ ms: number; source: string }>;
  close(): Promise<void>;
}

async function start(o: LimitsOptions): Promise<App> {
  const charges: Array<{ ms: number; source: string }> = [];
  const limiter = limits({
    ...OFF,
    ...o,
    hooks: { onCharge: (ms, source) => charges.push({ ms, source }) },
    logger: quiet,
  });
  const auth = apiKeyAuth({
    keys: [{ userId: 'alice', hash: hashKey(KEY), groups: ['staff'] }],
    logger: quiet,
  });
  const chain = compose([auth, limiter.gate, limiter, final], { logger: quiet });
  const server = http.createServer((req, res) => chain(req, res));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    limiter,
    charges,
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

/** Opens a GET stream and waits for its first bytes: it is admitted and open. */
async function openStream(url: string): Promise<{ status: number; close(): void }> {
  const controller = new AbortController();
  const res = await fetch(url, {
    headers: { Accept: 'text/event-stream', ...AUTH },
    signal: controller.signal,
  });
  if (res.status === 200) await res.body!.getReader().read();
  else await res.text();
  return { status: res.status, close: () => controller.abort() };
}

const post = (url: string) =>
  fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...AUTH },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'x' } }),
  });

/** Polls on the event loop (no clock) until `check()` holds. */
async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((r) => setImmediate(r));
  expect(check()).toBe(true);
}

function suite(store: () => LimitsOptions['store']) {
  let app: App | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });
  const open = async (o: LimitsOptions) => (app = await start({ ...o, store: store() }));

  test('an open GET stream holds no concurrency slot: the caller still gets its one call', async () => {
    const a = await open({ perUserConcurrency: 1, globalConcurrency: 1 });
    const stream = await openStream(a.url);
    expect(stream.status).toBe(200);
    expect(a.limiter.stats().inflight).toEqual({ user: 0, global: 0 });
    const call = await post(a.url);
    expect(call.status).toBe(200);
    await call.text();
    stream.close();
  });

  test('a GET stream is a request of the minute: past it, GET and POST get the 429, no id', async () => {
    const a = await open({ perUserRpm: 2 });
    const first = await openStream(a.url);
    const second = await openStream(a.url);
    expect([first.status, second.status]).toEqual([200, 200]);
    const third = await fetch(a.url, { headers: { Accept: 'text/event-stream', ...AUTH } });
    expect(third.status).toBe(429);
    expect(third.headers.get('retry-after')).toMatch(/^\d+$/);
    const body = (await third.json()) as Record<string, unknown>;
    expect(body).not.toHaveProperty('id');
    expect(body.error).toMatchObject({ code: 429, data: { limit: 'rpm' } });
    const call = await post(a.url);
    expect(call.status).toBe(429);
    await call.text();
    first.close();
    second.close();
  });

  test('the time a GET stream stays open is not charged to the budget', async () => {
    const a = await open({ costBudgetPerHour: 60_000 });
    const stream = await openStream(a.url);
    stream.close();
    await until(() => a.charges.length === 1);
    expect(a.charges).toEqual([{ ms: 0, source: 'charged' }]);
  });

  test('a DELETE is a request like a POST; another method still gets the 405', async () => {
    const a = await open({ perUserRpm: 1 });
    const end = await fetch(a.url, { method: 'DELETE', headers: AUTH });
    expect(end.status).toBe(200);
    await end.text();
    const call = await post(a.url);
    expect(call.status).toBe(429);
    await call.text();
    const put = await fetch(a.url, { method: 'PUT', headers: AUTH });
    expect([put.status, put.headers.get('allow')]).toEqual([405, 'POST']);
    await put.text();
  });
}

describe('limits() and a GET stream, memory store', () => {
  suite(() => undefined);
});

const describeWithRedis = redisDescribe();
describeWithRedis('limits() and a GET stream, Redis store', () => {
  let server: RedisServer;
  const clients: Redis[] = [];
  beforeAll(async () => {
    server = await startRedis();
    for (let i = 0; i < 4; i++) clients.push(await connectRedis(server.url));
  });
  afterAll(async () => {
    for (const c of clients) if (c.status !== 'end') c.disconnect();
    await server?.stop();
  });
  let next = 0;
  suite(() => ({
    redis: clients[next++ % clients.length]!,
    onOutage: 'fail-closed',
    keyPrefix: server.prefix('get'),
  }));
});
