/**
 * A client that waits for each answer before it sends its next request is never refused by its own finished
 * request, whichever replica each request reaches. Two replicas (two limits() instances, each with its own
 * ioredis connection) share one redis-server; the user's concurrency limit is 1, so every request takes its
 * user's last slot, and its slot must be free in Redis before the client can read the answer. Replica A also
 * serves other users at the same time, so that its admissions share calls (the turn batch) while the client's
 * requests run, and its link to Redis is slower than B's (a TCP hop that forwards what A sends a few ms late):
 * a release sent after the answer, or queued behind another call, then reaches Redis after the client's next
 * admission through B.
 */
import { type Server, type Socket, createConnection, createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import type Redis from 'ioredis';
import { limits } from '../../../middleware/limits/index';
import { type RedisServer, connectRedis, redisDescribe, startRedis } from '../../support/redis';
import { type TestApp, keepAlive, post, startApp } from '../../support/limits-harness';

/** Count statuses, e.g. `{ 200: 40 }`. */
function count(statuses: readonly number[]): Record<number, number> {
  const out: Record<number, number> = {};
  for (const s of statuses) out[s] = (out[s] ?? 0) + 1;
  return out;
}

/** Forwards TCP to `port`, what the client sends `delayMs` late (in order); the answers at once. */
async function slowLink(port: number, delayMs: number): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const proxy: Server = createServer((inbound) => {
    const outbound = createConnection({ host: '127.0.0.1', port });
    for (const s of [inbound, outbound]) {
      sockets.add(s);
      s.on('error', () => {});
      s.on('close', () => {
        inbound.destroy();
        outbound.destroy();
      });
    }
    inbound.on('data', (d) => setTimeout(() => outbound.write(d), delayMs));
    outbound.pipe(inbound);
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  return {
    port: (proxy.address() as AddressInfo).port,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((r) => proxy.close(r));
    },
  };
}

let server: RedisServer;
const clients: Redis[] = [];
const apps: TestApp[] = [];
let link: Awaited<ReturnType<typeof slowLink>> | undefined;

beforeAll(async () => {
  // Its own server: the slow link needs a port of its own to forward to.
  server = await startRedis({ ownServer: true });
});
afterAll(async () => {
  for (const a of apps) await a.close();
  for (const c of clients) c.disconnect();
  await link?.close();
  await server.stop();
});

redisDescribe({ ownServer: true })('limits, Redis store: the release and the next request', () => {
  it('a sequential client alternating between two replicas is never refused by its finished request', async () => {
    link = await slowLink(Number(new URL(server.url).port), 10);
    const keyPrefix = server.prefix('order');
    const replica = async (url: string): Promise<TestApp> => {
      const c = await connectRedis(url);
      clients.push(c);
      const mw = limits({
        perUserRpm: 0,
        perUserConcurrency: 1,
        globalConcurrency: 64,
        costBudgetPerHour: 1_000_000,
        logger: { error: () => {}, warn: () => {} },
        store: { redis: c, onOutage: 'fail-closed', keyPrefix },
      });
      const app = await startApp(mw, 'bare');
      apps.push(app);
      return app;
    };
    const a = await replica(`redis://127.0.0.1:${link.port}`);
    const b = await replica(server.url);
    // The scripts are loaded (EVALSHA answered NOSCRIPT, then EVAL), a user of each replica's own.
    for (const [i, app] of [a, b].entries())
      expect((await post(app.port, { user: `w${i}` })).status).toBe(200);

    // Other users on A, in parallel, until the client is done.
    let done = false;
    const agent = keepAlive();
    const background = Array.from({ length: 6 }, async (_, i) => {
      const statuses: number[] = [];
      while (!done) statuses.push((await post(a.port, { user: `bg${i}`, agent, hold: 1 })).status);
      return statuses;
    });
    const seen: number[] = [];
    for (let i = 0; i < 40; i++) seen.push((await post((i % 2 === 0 ? a : b).port, { user: 's' })).status);
    done = true;
    const others = (await Promise.all(background)).flat();
    agent.destroy();
    expect(others.length).toBeGreaterThan(0);
    expect(count(others)).toEqual({ 200: others.length });
    expect(count(seen)).toEqual({ 200: 40 });
  }, 30_000);
});
