/**
 * The limiter's trace events through the real otel() and the OpenTelemetry SDK (an in-memory exporter), on a
 * Redis store: a request that takes the user's last slot has its admission and its release (which the answer
 * waits for) on its span; the next request, refused by the gate for the minute, has `mcpware.limits.refused`.
 */
import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type Redis from 'ioredis';
import { localsOf } from '../../../core/respond';
import type { Middleware } from '../../../core/types';
import { limits } from '../../../middleware/limits/index';
import { otel } from '../../../middleware/otel/index';
import { parse } from '../../../middleware/parse/index';
import { chain } from '../../support/dispatch-harness';
import { type RedisServer, connectRedis, redisDescribe, startRedis } from '../../support/redis';
import { type Sdk, startSdk } from '../otel/otel-harness';

const quiet = { error() {}, warn() {} };
const describeWithRedis = redisDescribe();

describeWithRedis('limits: trace events under otel() (Redis)', () => {
  let redis: RedisServer;
  let client: Redis;
  let sdk: Sdk;
  let server: Server | undefined;
  beforeAll(async () => {
    redis = await startRedis();
    client = await connectRedis(redis.url);
  });
  beforeEach(() => {
    sdk = startSdk();
  });
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise((r) => (server ? server.close(r) : r(undefined)));
    server = undefined;
    await sdk.shutdown();
  });
  afterAll(async () => {
    client?.disconnect();
    await redis?.stop();
  });

  it('the store calls and the refusal are events of the request spans', async () => {
    const limiter = limits({
      perUserRpm: 1,
      perUserConcurrency: 1,
      globalConcurrency: 0,
      costBudgetPerHour: 0,
      logger: quiet,
      store: { redis: client, onOutage: 'fail-closed', keyPrefix: redis.prefix('otel-events') },
    });
    const user: Middleware = (req, _res, next) => {
      localsOf(req).principal = { userId: 'alice', groups: [], roles: [], method: 'test' };
      next();
    };
    const answer: Middleware = (req, res) => {
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify({ jsonrpc: '2.0', id: req.locals?.mcp?.id, result: {} }));
    };
    const traced = otel({ tracerProvider: sdk.tracerProvider, meterProvider: sdk.meterProvider });
    server = http.createServer(
      chain([traced, user, limiter.gate, parse({ logger: quiet }), limiter, answer]),
    );
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
    const post = async () => {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'Mcp-Method': 'tools/list' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      await res.arrayBuffer();
      return res.status;
    };
    expect(await post()).toBe(200);
    expect(await post()).toBe(429);

    const spans = sdk.spans();
    expect(spans).toHaveLength(2);
    const events = (i: number) => spans[i]!.events.map((e) => [e.name, e.attributes]);
    expect(events(0)).toEqual([
      ['mcpware.limits.store', { op: 'admit', duration_ms: expect.any(Number), outcome: 'ok' }],
      ['mcpware.limits.store', { op: 'release', duration_ms: expect.any(Number), outcome: 'ok' }],
    ]);
    expect(events(1)).toEqual([
      ['mcpware.limits.refused', { limit: 'rpm', retry_after_s: expect.any(Number) }],
    ]);
  });
});
