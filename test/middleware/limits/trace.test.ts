/**
 * The limiter's events on the request's trace (the kernel's contract, core/trace.ts): a hand-made RequestTrace put
 * on `req.locals[TRACE]` by a middleware in front, as otel() does. Over HTTP: `mcpware.limits.refused` for each
 * refusal (the limiter's and the gate's), and `mcpware.limits.store` for each call of the Redis store made for a
 * request (admit and release; ok, insurance, refused, error). The memory store adds no store event.
 */
import http, { type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type Redis from 'ioredis';
import { localsOf } from '../../../core/respond';
import { type RequestTrace, TRACE, type TraceAttributes } from '../../../core/trace';
import type { Middleware } from '../../../core/types';
import { type LimitsMiddleware, type LimitsOptions, limits } from '../../../middleware/limits/index';
import { parse } from '../../../middleware/parse/index';
import { chain } from '../../support/dispatch-harness';
import { type RedisServer, connectRedis, redisDescribe, startRedis } from '../../support/redis';
import { eventually } from '../../support/task-stack';

const quiet = { error() {}, warn() {} };
const OFF = { perUserRpm: 0, perUserConcurrency: 0, globalConcurrency: 0, costBudgetPerHour: 0 };

interface Event {
  name: string;
  attributes: TraceAttributes | undefined;
}

/** A RequestTrace that only records its events (the rest of the contract does nothing). */
function handTrace(events: Event[]): RequestTrace {
  const t = {
    parsed: () => undefined,
    run: <T>(fn: () => T): T => fn(),
    context: undefined,
    traceId: undefined,
    spanId: undefined,
    traceparent: undefined,
    event: (name: string, attributes?: TraceAttributes) => void events.push({ name, attributes }),
    result: () => undefined,
    link: () => undefined,
    set: () => undefined,
    work: () => undefined,
  };
  return t as unknown as RequestTrace;
}

interface App {
  url: string;
  /** The events of each traced request, in arrival order. */
  traces: Event[][];
  /** Answers the requests held (`x-hold: 1`). */
  releaseHeld(): void;
  close(): Promise<void>;
}

/**
 * A trace (unless `x-untraced`), a stand-in authenticator (`x-user`), the gate, parse(), the limiter, then an
 * empty result (held while `x-hold` until {@link App.releaseHeld}).
 */
async function serve(limiter: LimitsMiddleware): Promise<App> {
  const traces: Event[][] = [];
  let held: (() => void)[] = [];
  const tracing: Middleware = (req, _res, next) => {
    if (req.headers['x-untraced'] === undefined) {
      const events: Event[] = [];
      traces.push(events);
      localsOf(req)[TRACE] = handTrace(events);
    }
    const user = req.headers['x-user'];
    if (typeof user === 'string')
      localsOf(req).principal = { userId: user, groups: [], roles: [], method: 'test' };
    next();
  };
  const answer = (req: IncomingMessage, res: ServerResponse): void => {
    const go = () => {
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify({ jsonrpc: '2.0', id: req.locals?.mcp?.id, result: {} }));
    };
    if (req.headers['x-hold'] !== undefined) held.push(go);
    else go();
  };
  const server: Server = http.createServer(
    chain([tracing, limiter.gate, parse({ logger: quiet }), limiter, (req, res) => answer(req, res)]),
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    traces,
    releaseHeld() {
      const h = held;
      held = [];
      for (const f of h) f();
    },
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

/** POST a tools/list as `user`; the status. */
async function post(app: App, headers: Record<string, string> = {}): Promise<number> {
  const res = await fetch(app.url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'x-user': 'alice', ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  await res.arrayBuffer();
  return res.status;
}

/** A store event's duration: a number of milliseconds rounded to 0.01. */
function expectDuration(e: Event): void {
  const d = e.attributes?.duration_ms;
  expect(typeof d).toBe('number');
  expect(d as number).toBeGreaterThanOrEqual(0);
  expect(Math.round((d as number) * 100) / 100).toBe(d);
}

describe('limits: trace events (memory)', () => {
  let app: App | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it("the gate's refusal: mcpware.limits.refused with the limit and Retry-After's seconds", async () => {
    app = await serve(limits({ ...OFF, perUserRpm: 1, logger: quiet }));
    // The minute's last request: the gate learns it, and refuses the next one.
    expect(await post(app)).toBe(200);
    expect(await post(app)).toBe(429);
    const [admitted, gated] = app.traces;
    expect(admitted).toEqual([]); // the memory store is no store call to time
    expect(gated).toEqual([
      { name: 'mcpware.limits.refused', attributes: { limit: 'rpm', retry_after_s: expect.any(Number) } },
    ]);
    const secs = gated![0]!.attributes!.retry_after_s as number;
    expect(secs >= 1 && secs <= 60).toBe(true);
  });

  it('a refusal by the limiter itself (user_concurrent)', async () => {
    app = await serve(limits({ ...OFF, perUserConcurrency: 1, logger: quiet }));
    const first = post(app, { 'x-hold': '1' });
    const a = app;
    await eventually(() => a.traces.length === 1, 'the first request in');
    expect(await post(app)).toBe(429);
    app.releaseHeld();
    expect(await first).toBe(200);
    expect(app.traces[1]).toEqual([
      { name: 'mcpware.limits.refused', attributes: { limit: 'user_concurrent', retry_after_s: 1 } },
    ]);
    expect(app.traces[0]).toEqual([]);
  });
});

const describeWithRedis = redisDescribe();

describeWithRedis('limits: trace events (Redis)', () => {
  let server: RedisServer;
  const clients: Redis[] = [];
  let app: App | undefined;
  beforeAll(async () => {
    server = await startRedis();
  });
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });
  afterAll(async () => {
    for (const c of clients) if (c.status !== 'end') c.disconnect();
    await server?.stop();
  });

  async function redisLimiter(o: LimitsOptions, onOutage: 'fail-open' | 'fail-closed') {
    const client = await connectRedis(server.url);
    clients.push(client);
    const limiter = limits({
      ...OFF,
      logger: quiet,
      ...o,
      store: { redis: client, onOutage, keyPrefix: server.prefix('trace') },
    });
    return { client, limiter };
  }

  it('an admitted request: its admission and its release, each ok, with their durations', async () => {
    const { limiter } = await redisLimiter({ perUserRpm: 10, perUserConcurrency: 2 }, 'fail-closed');
    app = await serve(limiter);
    expect(await post(app)).toBe(200);
    const events = app.traces[0]!;
    await eventually(() => events.length === 2, 'the release traced');
    expect(events).toEqual([
      {
        name: 'mcpware.limits.store',
        attributes: { op: 'admit', duration_ms: expect.any(Number), outcome: 'ok' },
      },
      {
        name: 'mcpware.limits.store',
        attributes: { op: 'release', duration_ms: expect.any(Number), outcome: 'ok' },
      },
    ]);
    events.forEach(expectDuration);
  });

  it("the minute's last request: its admission (no slot, nothing to release); the gate's refusal: no store call", async () => {
    const { limiter } = await redisLimiter({ perUserRpm: 1 }, 'fail-closed');
    app = await serve(limiter);
    expect(await post(app)).toBe(200);
    expect(await post(app)).toBe(429);
    expect(app.traces[0]!.map((e) => e.attributes)).toEqual([
      { op: 'admit', duration_ms: expect.any(Number), outcome: 'ok' },
    ]);
    expect(app.traces[1]).toEqual([
      { name: 'mcpware.limits.refused', attributes: { limit: 'rpm', retry_after_s: expect.any(Number) } },
    ]);
  });

  it('a refusal by the limiter with Redis: the admission, then the refusal', async () => {
    const { limiter } = await redisLimiter({ perUserConcurrency: 1 }, 'fail-closed');
    app = await serve(limiter);
    const first = post(app, { 'x-hold': '1' });
    const a = app;
    await eventually(() => a.traces.length === 1 && a.traces[0]!.length === 1, 'the first admitted');
    expect(await post(app)).toBe(429);
    app.releaseHeld();
    expect(await first).toBe(200);
    expect(app.traces[1]!.map((e) => [e.name, e.attributes?.outcome ?? e.attributes?.limit])).toEqual([
      ['mcpware.limits.store', 'ok'],
      ['mcpware.limits.refused', 'user_concurrent'],
    ]);
  });

  it('Redis unreachable: fail-open admits on the insurance, fail-closed refuses (503)', async () => {
    const open = await redisLimiter({ perUserRpm: 10 }, 'fail-open');
    open.client.disconnect();
    app = await serve(open.limiter);
    expect(await post(app)).toBe(200);
    expect(app.traces[0]!.map((e) => e.attributes)).toEqual([
      { op: 'admit', duration_ms: expect.any(Number), outcome: 'insurance' },
    ]);
    await app.close();

    const closed = await redisLimiter({ perUserRpm: 10 }, 'fail-closed');
    closed.client.disconnect();
    app = await serve(closed.limiter);
    expect(await post(app)).toBe(503);
    expect(app.traces[0]!.map((e) => e.attributes)).toEqual([
      { op: 'admit', duration_ms: expect.any(Number), outcome: 'refused' },
    ]);
  });

  it('a release Redis cannot apply: outcome error', async () => {
    const { client, limiter } = await redisLimiter({ perUserConcurrency: 2 }, 'fail-open');
    app = await serve(limiter);
    const held = post(app, { 'x-hold': '1' });
    const a = app;
    await eventually(() => a.traces.length === 1 && a.traces[0]!.length === 1, 'admitted');
    client.disconnect();
    app.releaseHeld();
    expect(await held).toBe(200);
    const events = app.traces[0]!;
    await eventually(() => events.length === 2, 'the release traced');
    expect(events.map((e) => e.attributes)).toEqual([
      { op: 'admit', duration_ms: expect.any(Number), outcome: 'ok' },
      { op: 'release', duration_ms: expect.any(Number), outcome: 'error' },
    ]);
  });
});
