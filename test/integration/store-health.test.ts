/**
 * The demo's shared stores in its readiness and metrics: with REDIS_URL, a Redis that stops answering (frozen
 * with SIGSTOP, then killed) turns `/readyz` to 503 `{"status":"degraded"}` and `mcp_store_up` to 0, and counts
 * the limits' store errors; once Redis is back, both recover by themselves, without traffic.
 */
import { McpTestClient } from '../../testing/index';
import { type DemoProcess, spawnDemo } from '../support/demo-process';
import { type RedisServer, redisDescribe, startRedis } from '../support/redis';

jest.setTimeout(90_000);

const AUTH = { Authorization: 'Bearer demo-token' };

async function until(what: string, cond: () => Promise<boolean>, limitMs = 30_000): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The value of one series in the demo's /metrics text, or undefined when it has none. */
async function metric(d: DemoProcess, series: string): Promise<number | undefined> {
  const text = await (await fetch(`${d.base}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

async function ready(d: DemoProcess): Promise<{ status: number; body: unknown }> {
  const r = await fetch(`${d.base}/readyz`);
  return { status: r.status, body: await r.json() };
}

const UP = {
  limits: 'mcp_store_up{store="limits"}',
  changes: 'mcp_store_up{store="changes"}',
};

redisDescribe({ ownServer: true })('the demo with REDIS_URL when Redis fails and comes back', () => {
  let redis: RedisServer;
  let demo: DemoProcess;
  beforeAll(async () => {
    redis = await startRedis();
    demo = await spawnDemo({ REDIS_URL: redis.url });
  }, 60_000);
  afterAll(async () => {
    demo?.kill();
    redis?.resume();
    await redis?.stop();
  });

  test('whole: /readyz 200 and mcp_store_up 1 for the limits and the change feed', async () => {
    await until('the feed subscribed', async () => (await metric(demo, UP.changes)) === 1);
    expect(await ready(demo)).toEqual({ status: 200, body: { status: 'ready' } });
    expect(await metric(demo, UP.limits)).toBe(1);
  });

  test('frozen (SIGSTOP): degraded, then whole again after SIGCONT', async () => {
    redis.pause();
    try {
      // A request while Redis hangs: answered on the per-process limits (fail-open), counted as a store error.
      const r = await new McpTestClient(demo.url, { headers: AUTH }).callTool('hello', { who: 'x' });
      expect(r.status).toBe(200);
      await until('/readyz 503', async () => (await ready(demo)).status === 503);
      expect((await ready(demo)).body).toMatchObject({ status: 'degraded', failing: ['limits'] });
      expect(await metric(demo, UP.limits)).toBe(0);
      expect(await metric(demo, 'mcp_ratelimit_store_errors_total{outcome="insurance"}')).toBeGreaterThan(0);
    } finally {
      redis.resume();
    }
    await until('/readyz 200 again', async () => (await ready(demo)).status === 200);
    expect(await metric(demo, UP.limits)).toBe(1);
  });

  test('killed: degraded (limits and change feed) with no traffic, then whole again once it restarts', async () => {
    await redis.kill();
    await until('/readyz 503', async () => {
      const r = await ready(demo);
      return (
        r.status === 503 && JSON.stringify(r.body) === '{"status":"degraded","failing":["limits","changes"]}'
      );
    });
    expect(await metric(demo, UP.limits)).toBe(0);
    expect(await metric(demo, UP.changes)).toBe(0);
    await redis.restart();
    await until('/readyz 200 again', async () => (await ready(demo)).status === 200);
    await until('mcp_store_up 1 again', async () => (await metric(demo, UP.changes)) === 1);
    expect(await metric(demo, UP.limits)).toBe(1);
  });
});
