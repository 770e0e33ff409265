/**
 * metrics() counts the counters and gauges it creates in tallies handed to prom-client by each metric's
 * `collect` (given in its config), counts a metric the application made directly, and never changes a metric
 * object after it is made (it may belong to the application's registry). Counts stay exact over many
 * requests and label values, across two instances sharing a registry, after the registry is reset, for every
 * hook, and when scraped one after another or at once; a registry shared with the application's own metrics
 * keeps their values and collect(); instances on different registries share nothing; and a request is
 * recorded once even when a chain runs the same instance twice.
 */
import { EventEmitter } from 'node:events';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { Counter, Gauge, Registry } from 'prom-client';
import request from 'supertest';
import { metrics, metricsHandler, type MetricsMiddleware } from '../../../middleware/metrics/index';
import { parse } from '../../../middleware/parse/index';
import type { RequestLocals } from '../../../core/types';
import {
  finalHandler,
  listenLoopback,
  modern,
  modernHeaders,
  run,
  sampleKey,
  samples,
} from '../../support/observe-harness';

type Values = (name: string, labels?: Record<string, string>) => number;

function valuesOf(text: string): Values {
  const s = samples(text);
  return (name, labels) => s.get(sampleKey(name, labels)) ?? NaN;
}

async function scrape(registry: Registry): Promise<Values> {
  return valuesOf(await registry.metrics());
}

/**
 * One request through `m` without a socket: the middleware runs, the rest of the chain leaves `locals` (and
 * the status), then the response finishes (or closes before finishing).
 */
function answer(
  m: MetricsMiddleware,
  locals: Partial<RequestLocals>,
  opts: { status?: number; closedEarly?: boolean } = {},
): void {
  const req = {} as IncomingMessage;
  const res = Object.assign(new EventEmitter(), {
    // node:http's ServerResponse points back at its request (the middleware finds its state through it).
    req,
    statusCode: opts.status ?? 200,
    writableFinished: opts.closedEarly !== true,
  }) as unknown as ServerResponse;
  m(req, res, () => Object.assign(req.locals!, locals));
  res.emit(opts.closedEarly === true ? 'close' : 'finish');
}

const fixtures = {
  tools: {
    t1: () => ({ content: [] }),
    bad: () => ({ content: [], isError: true }),
  },
};

async function post(port: number, name: string): Promise<number> {
  const r = await fetch(`http://127.0.0.1:${port}/mcp`, {
    method: 'POST',
    headers: modernHeaders('tools/call', name),
    body: JSON.stringify(modern('tools/call', { name, arguments: {} })),
  });
  await r.arrayBuffer();
  return r.status;
}

function call(server: http.Server, name: string) {
  return request(server)
    .post('/mcp')
    .set(modernHeaders('tools/call', name))
    .send(modern('tools/call', { name, arguments: {} }));
}

test('repeated label values, two instances on one registry, and a reset: every count is exact', async () => {
  const registry = new Registry();
  const a = metrics({ registry, tools: ['t1'] });
  const b = metrics({ registry, tools: ['t1'] });
  const serverA = http.createServer(run([a, parse(), finalHandler(fixtures)]));
  const serverB = http.createServer(run([b, parse(), finalHandler(fixtures)]));
  for (let i = 0; i < 5; i++) expect((await call(serverA, 't1')).status).toBe(200);
  for (let i = 0; i < 3; i++) expect((await call(serverB, 't1')).status).toBe(200);
  expect((await call(serverB, 'bad')).status).toBe(200);
  let v = await scrape(registry);
  expect(v('mcp_requests_total', { era: 'unknown' })).toBe(9);
  expect(v('mcp_tool_calls_total', { tool: 't1', outcome: 'ok' })).toBe(8);
  expect(v('mcp_tool_calls_total', { tool: 'bad', outcome: 'tool_error' })).toBe(1);
  expect(v('mcp_request_duration_seconds_count', { method: 'tools/call', outcome: 'ok' })).toBe(9);

  // The children write to the registry's current series: after a reset they count from zero again.
  registry.resetMetrics();
  await call(serverA, 't1');
  await call(serverB, 't1');
  v = await scrape(registry);
  expect(v('mcp_requests_total', { era: 'unknown' })).toBe(2);
  expect(v('mcp_tool_calls_total', { tool: 't1', outcome: 'ok' })).toBe(2);
  expect(v('mcp_request_duration_seconds_count', { method: 'tools/call', outcome: 'ok' })).toBe(2);
});

test('every hook: denials, in-flight gauges (last value wins), charges by source, store errors', async () => {
  const registry = new Registry();
  const h = metrics({ registry }).limiterHooks();
  for (let i = 0; i < 3; i++) h.onDenied('rpm');
  h.onDenied('cost_budget');
  h.onInflight('user', 1);
  h.onInflight('global', 2);
  h.onInflight('user', 3);
  h.onInflight('user', 2);
  h.onInflight('global', 0);
  h.onCharge(250, 'charged');
  h.onCharge(1500, 'charged');
  h.onCharge(20, 'wall_clock');
  h.onCharge(-1, 'charged'); // ignored
  h.onStoreError(new Error('x'), 'dropped');
  h.onStoreError(new Error('x'), 'dropped');
  const v = await scrape(registry);
  expect(v('mcp_ratelimit_denied_total', { reason: 'rpm' })).toBe(3);
  expect(v('mcp_ratelimit_denied_total', { reason: 'cost_budget' })).toBe(1);
  expect(v('mcp_ratelimit_denied_total', { reason: 'user_concurrent' })).toBe(0);
  expect(v('mcp_ratelimit_inflight', { scope: 'user' })).toBe(2);
  expect(v('mcp_ratelimit_inflight', { scope: 'global' })).toBe(0);
  expect(v('mcp_ratelimit_charge_seconds_count', { source: 'charged' })).toBe(2);
  expect(v('mcp_ratelimit_charge_seconds_sum', { source: 'charged' })).toBeCloseTo(1.75, 9);
  expect(v('mcp_ratelimit_charge_seconds_bucket', { source: 'charged', le: '0.5' })).toBe(1);
  expect(v('mcp_ratelimit_charge_seconds_count', { source: 'wall_clock' })).toBe(1);
  expect(v('mcp_ratelimit_store_errors_total', { outcome: 'dropped' })).toBe(2);
});

test('a chain running the same instance twice records the request once', async () => {
  const registry = new Registry();
  const m = metrics({ registry });
  const server = http.createServer(run([m, m, parse(), finalHandler(fixtures)]));
  expect((await call(server, 't1')).status).toBe(200);
  const v = await scrape(registry);
  expect(v('mcp_requests_total', { era: 'unknown' })).toBe(1);
  expect(v('mcp_request_duration_seconds_count', { method: 'tools/call', outcome: 'ok' })).toBe(1);
});

test('served by metricsHandler: requests and every hook counted exactly; a scrape changes nothing; the next request is counted', async () => {
  const registry = new Registry();
  const m = metrics({ registry, tools: ['t1'] });
  const hooks = m.limiterHooks();
  const scrapeHandler = metricsHandler(registry);
  const mcp = run([m, parse(), finalHandler(fixtures)]);
  const server = http.createServer((req, res) =>
    req.url === '/metrics' ? scrapeHandler(req, res) : mcp(req, res),
  );
  const port = await listenLoopback(server);
  try {
    for (let i = 0; i < 30; i++) expect(await post(port, i % 3 === 0 ? 'bad' : 't1')).toBe(200);
    for (let i = 0; i < 20; i++) {
      hooks.onInflight('user', i);
      hooks.onDenied('rpm');
      hooks.onStoreError(new Error('x'), 'dropped');
    }

    const r = await fetch(`http://127.0.0.1:${port}/metrics`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe(registry.contentType);
    const v = valuesOf(await r.text());
    expect(v('mcp_requests_total', { era: 'unknown' })).toBe(30);
    expect(v('mcp_tool_calls_total', { tool: 't1', outcome: 'ok' })).toBe(20);
    expect(v('mcp_tool_calls_total', { tool: 'bad', outcome: 'tool_error' })).toBe(10);
    expect(v('mcp_request_duration_seconds_count', { method: 'tools/call', outcome: 'ok' })).toBe(30);
    expect(v('mcp_ratelimit_denied_total', { reason: 'rpm' })).toBe(20);
    expect(v('mcp_ratelimit_store_errors_total', { outcome: 'dropped' })).toBe(20);
    expect(v('mcp_ratelimit_inflight', { scope: 'user' })).toBe(19);

    // Nothing new: the same totals.
    const again = await scrape(registry);
    expect(again('mcp_requests_total', { era: 'unknown' })).toBe(30);
    expect(again('mcp_ratelimit_inflight', { scope: 'user' })).toBe(19);

    // One more request: counted once.
    expect(await post(port, 't1')).toBe(200);
    const after = await scrape(registry);
    expect(after('mcp_requests_total', { era: 'unknown' })).toBe(31);
    expect(after('mcp_tool_calls_total', { tool: 't1', outcome: 'ok' })).toBe(21);
  } finally {
    await new Promise((r) => server.close(r));
  }
});

test('exact totals after many requests over many label values, scraped in between and at once', async () => {
  const registry = new Registry();
  const m = metrics({ registry, tools: ['t1'], maxTools: 2 });
  const hooks = m.limiterHooks();
  const expected = new Map<string, number>();
  const add = (name: string, labels: Record<string, string>, n = 1): void => {
    const k = sampleKey(name, labels);
    expected.set(k, (expected.get(k) ?? 0) + n);
  };
  const cases: Array<() => void> = [
    () => {
      answer(m, {
        mcp: { era: 'modern', method: 'tools/call', target: 't1' } as never,
        tool: 't1',
        auth: { outcome: 'ok' },
        response: {},
      });
      add('mcp_requests_total', { era: 'modern' });
      add('mcp_auth_total', { outcome: 'ok' });
      add('mcp_tool_calls_total', { tool: 't1', outcome: 'ok' });
      add('mcp_request_duration_seconds_count', { method: 'tools/call', outcome: 'ok' });
    },
    () => {
      // A registered tool answered with a tool error: `bad` becomes the second tool label (maxTools 2).
      answer(m, {
        mcp: { era: 'legacy', method: 'tools/call', target: 'bad' } as never,
        tool: 'bad',
        response: { toolError: true },
      });
      add('mcp_requests_total', { era: 'legacy' });
      add('mcp_tool_calls_total', { tool: 'bad', outcome: 'tool_error' });
      add('mcp_request_duration_seconds_count', { method: 'tools/call', outcome: 'ok' });
    },
    () => {
      // A registered tool, but past maxTools: counted as `other`.
      answer(m, {
        mcp: { era: 'modern', method: 'tools/call', target: 'late' } as never,
        tool: 'late',
        response: {},
      });
      add('mcp_requests_total', { era: 'modern' });
      add('mcp_tool_calls_total', { tool: 'other', outcome: 'ok' });
      add('mcp_request_duration_seconds_count', { method: 'tools/call', outcome: 'ok' });
    },
    () => {
      answer(m, { refusal: { by: 'parse', reason: 'parse_error' } as never });
      add('mcp_requests_total', { era: 'unknown' });
      add('mcp_transport_refusals_total', { reason: 'parse_error' });
      add('mcp_request_duration_seconds_count', { method: 'none', outcome: 'refused' });
    },
    () => {
      answer(m, {
        mcp: { era: 'modern', method: 'tools/list' } as never,
        auth: { outcome: 'missing' },
        refusal: { by: 'limits', reason: 'rate_limited', detail: 'rpm' } as never,
      });
      add('mcp_requests_total', { era: 'modern' });
      add('mcp_auth_total', { outcome: 'missing' });
      add('mcp_ratelimit_denied_total', { reason: 'rpm' });
      add('mcp_request_duration_seconds_count', { method: 'tools/list', outcome: 'refused' });
    },
    () => {
      answer(m, {
        mcp: { era: 'modern', method: 'tools/call', target: 't1' } as never,
        tool: 't1',
        response: {},
        redaction: { mode: 'mask', fired: ['jwt', 'email'], hits: { email: 2, jwt: 1 }, truncated: 0 },
      });
      add('mcp_requests_total', { era: 'modern' });
      add('mcp_redactions_total', { rule: 'email' }, 2);
      add('mcp_redactions_total', { rule: 'jwt' }, 1);
      add('mcp_tool_calls_total', { tool: 't1', outcome: 'ok' });
      add('mcp_request_duration_seconds_count', { method: 'tools/call', outcome: 'ok' });
    },
    () => {
      answer(m, { mcp: { era: 'legacy', method: 'tools/call', target: 'nope' } as never }, { status: 500 });
      add('mcp_requests_total', { era: 'legacy' });
      add('mcp_tool_calls_total', { tool: 'other', outcome: 'error' });
      add('mcp_request_duration_seconds_count', { method: 'tools/call', outcome: 'error' });
    },
    () => {
      answer(m, { mcp: { era: 'modern', method: 'ping' } as never }, { closedEarly: true });
      add('mcp_requests_total', { era: 'modern' });
      add('mcp_request_duration_seconds_count', { method: 'ping', outcome: 'error' });
    },
    () => {
      hooks.onStoreError(new Error('x'), 'insurance');
      add('mcp_ratelimit_store_errors_total', { outcome: 'insurance' });
    },
  ];

  let seed = 7;
  let last: string | undefined;
  for (let i = 1; i <= 3000; i++) {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    cases[seed % cases.length]!();
    if (i % 97 === 0) last = await registry.metrics();
    if (i % 1000 === 0) {
      // Scrapes at once and one after another: the same text, nothing counted twice.
      const [a, b] = await Promise.all([registry.metrics(), registry.metrics()]);
      expect(b).toBe(a);
      expect(await registry.metrics()).toBe(a);
    }
  }
  expect(last).toBeDefined();
  const v = await scrape(registry);
  for (const [k, n] of expected) {
    const m2 = /^([^{]+)(?:\{(.*)\})?$/.exec(k)!;
    const labels = Object.fromEntries(
      (m2[2] ?? '')
        .split(',')
        .filter(Boolean)
        .map((p) => p.split('=') as [string, string])
        .map(([a, b]) => [a, JSON.parse(b) as string]),
    );
    expect([k, v(m2[1]!, labels)]).toEqual([k, n]);
  }
  const total = ['modern', 'legacy', 'unknown'].reduce((s, era) => s + v('mcp_requests_total', { era }), 0);
  const hookCalls =
    expected.get(sampleKey('mcp_ratelimit_store_errors_total', { outcome: 'insurance' })) ?? 0;
  expect(total).toBe(3000 - hookCalls);
});

test('a registry shared with other metrics: their values and collect() are untouched, a metric of the application named like ours keeps its collect()', async () => {
  const registry = new Registry();
  let appCollects = 0;
  new Gauge({
    name: 'app_temperature',
    help: 'The application’s own gauge',
    registers: [registry],
    collect() {
      appCollects++;
      this.set(21.5);
    },
  });
  const appCounter = new Counter({ name: 'app_jobs_total', help: 'Jobs', registers: [registry] });
  // Made by the application before metrics(): reused (same type and labels), its collect() still runs.
  new Counter({
    name: 'mcp_requests_total',
    help: 'Requests (made by the application)',
    labelNames: ['era'],
    registers: [registry],
    collect() {
      this.inc({ era: 'legacy' }, 100);
    },
  });
  const m = metrics({ registry });
  appCounter.inc(3);
  for (let i = 0; i < 5; i++) answer(m, { mcp: { era: 'modern', method: 'ping' } as never });
  let v = await scrape(registry);
  expect(appCollects).toBe(1);
  expect(v('app_temperature')).toBe(21.5);
  expect(v('app_jobs_total')).toBe(3);
  expect(v('mcp_requests_total', { era: 'modern' })).toBe(5);
  expect(v('mcp_requests_total', { era: 'legacy' })).toBe(100);
  v = await scrape(registry);
  expect(appCollects).toBe(2);
  expect(v('mcp_requests_total', { era: 'modern' })).toBe(5);
  expect(v('mcp_requests_total', { era: 'legacy' })).toBe(200);
  // get() (what cluster aggregation reads) sees the same counts.
  answer(m, { mcp: { era: 'modern', method: 'ping' } as never });
  const json = await registry.getMetricsAsJSON();
  const requests = json.find((x) => x.name === 'mcp_requests_total')!;
  expect(requests.values.find((x) => x.labels.era === 'modern')!.value).toBe(6);
});

test('two instances on one registry share the series; instances on two registries share nothing', async () => {
  const shared = new Registry();
  const a = metrics({ registry: shared });
  const b = metrics({ registry: shared });
  const other = new Registry();
  const c = metrics({ registry: other });
  for (let i = 0; i < 4; i++) answer(a, { mcp: { era: 'modern', method: 'ping' } as never });
  for (let i = 0; i < 3; i++) answer(b, { mcp: { era: 'modern', method: 'ping' } as never });
  answer(c, { mcp: { era: 'modern', method: 'ping' } as never });
  a.limiterHooks().onInflight('global', 5);
  b.limiterHooks().onInflight('global', 2); // the last value wins, whichever instance set it
  c.limiterHooks().onInflight('global', 9);
  const v = await scrape(shared);
  const w = await scrape(other);
  expect(v('mcp_requests_total', { era: 'modern' })).toBe(7);
  expect(v('mcp_ratelimit_inflight', { scope: 'global' })).toBe(2);
  expect(w('mcp_requests_total', { era: 'modern' })).toBe(1);
  expect(w('mcp_ratelimit_inflight', { scope: 'global' })).toBe(9);
});

test('a reset clears every series, the pre-created zeros included; series come back in the order they are counted', async () => {
  const registry = new Registry();
  const m = metrics({ registry });
  const hooks = m.limiterHooks();
  for (let i = 0; i < 5; i++) answer(m, { mcp: { era: 'modern', method: 'ping' } as never });
  hooks.onInflight('user', 4);
  registry.resetMetrics(); // before any scrape: these 5 are dropped with the rest
  answer(m, { mcp: { era: 'legacy', method: 'ping' } as never });
  answer(m, { mcp: { era: 'modern', method: 'ping' } as never });
  const text = await registry.metrics();
  const v = valuesOf(text);
  expect(v('mcp_requests_total', { era: 'legacy' })).toBe(1);
  expect(v('mcp_requests_total', { era: 'modern' })).toBe(1);
  expect(v('mcp_requests_total', { era: 'unknown' })).toBeNaN();
  expect(v('mcp_ratelimit_inflight', { scope: 'user' })).toBeNaN();
  expect(text.indexOf('mcp_requests_total{era="legacy"}')).toBeLessThan(
    text.indexOf('mcp_requests_total{era="modern"}'),
  );
});

test('a hit count that is not finite is not counted and cannot fail a scrape', async () => {
  const registry = new Registry();
  const m = metrics({ registry });
  answer(m, {
    mcp: { era: 'modern', method: 'ping' } as never,
    redaction: { mode: 'mask', fired: ['email'], hits: { email: Infinity, jwt: 1 }, truncated: 0 },
  });
  const v = await scrape(registry);
  expect(v('mcp_redactions_total', { rule: 'email' })).toBe(0);
  expect(v('mcp_redactions_total', { rule: 'jwt' })).toBe(1);
  expect(v('mcp_request_duration_seconds_count', { method: 'ping', outcome: 'ok' })).toBe(1);
});

test('the metric objects are left as prom-client made them: no own collect, reset or inc is added or replaced afterwards', async () => {
  const registry = new Registry();
  // Made by the application before metrics(), without a collect(): metrics() reuses it.
  const appRequests = new Counter({
    name: 'mcp_requests_total',
    help: 'Requests (made by the application)',
    labelNames: ['era'],
    registers: [registry],
  });
  const ownBefore = new Map(
    registry.getMetricsAsArray().map((x) => [x, Object.getOwnPropertyNames(x).sort()] as const),
  );
  const incBefore = appRequests.inc;
  const m = metrics({ registry });
  answer(m, {
    mcp: { era: 'modern', method: 'tools/call', target: 't1' } as never,
    tool: 't1',
    response: {},
  });
  m.limiterHooks().onInflight('user', 2);
  await registry.metrics();
  for (const metric of registry.getMetricsAsArray()) {
    const own = Object.getOwnPropertyNames(metric);
    expect(own).not.toContain('reset');
    if (ownBefore.has(metric)) expect(own.sort()).toEqual(ownBefore.get(metric));
  }
  expect(Object.hasOwn(appRequests, 'collect')).toBe(false);
  expect(appRequests.inc).toBe(incBefore);
  expect(appRequests.reset).toBe(Counter.prototype.reset);
  const gauge = registry.getSingleMetric('mcp_ratelimit_inflight') as Gauge<string>;
  expect(gauge.reset).toBe(Gauge.prototype.reset);
  expect(gauge.inc).toBe(Gauge.prototype.inc);
  expect((await scrape(registry))('mcp_requests_total', { era: 'modern' })).toBe(1);
  expect((await scrape(registry))('mcp_ratelimit_inflight', { scope: 'user' })).toBe(2);
});

// see docs/performance.md#metrics-tallies
test('the counters metrics() creates are counted in its tallies: prom-client is told only when they are read', async () => {
  const incs = jest.spyOn(Counter.prototype, 'incWithoutExemplar' as never);
  try {
    const registry = new Registry();
    const m = metrics({ registry });
    const before = incs.mock.calls.length;
    for (let i = 0; i < 50; i++) {
      answer(m, {
        mcp: { era: 'modern', method: 'tools/call', target: 't1' } as never,
        tool: 't1',
        response: {},
      });
    }
    expect(incs.mock.calls.length).toBe(before);
    const v = await scrape(registry);
    expect(v('mcp_requests_total', { era: 'modern' })).toBe(50);
    expect(v('mcp_tool_calls_total', { tool: 't1', outcome: 'ok' })).toBe(50);
    expect(incs.mock.calls.length).toBeGreaterThan(before);
  } finally {
    incs.mockRestore();
  }
});

test('a reset between counts drops only what was counted before it, on both kinds of metric', async () => {
  const registry = new Registry();
  const appCounter = new Counter({
    name: 'mcp_auth_total',
    help: 'made by the application',
    labelNames: ['outcome'],
    registers: [registry],
  });
  const m = metrics({ registry });
  const ok = { mcp: { era: 'legacy', method: 'ping' } as never, auth: { outcome: 'ok' } as never };
  for (let i = 0; i < 3; i++) answer(m, ok);
  registry.resetMetrics();
  for (let i = 0; i < 2; i++) answer(m, ok);
  const v = await scrape(registry);
  expect(v('mcp_requests_total', { era: 'legacy' })).toBe(2);
  expect(v('mcp_auth_total', { outcome: 'ok' })).toBe(2);
  registry.resetMetrics();
  const w = await scrape(registry);
  expect(w('mcp_requests_total', { era: 'legacy' })).toBeNaN();
  expect(await appCounter.get()).toMatchObject({ values: [] });
});

test('authenticated requests are counted by the authenticator method; any other method is other', async () => {
  const registry = new Registry();
  const m = metrics({ registry });
  const as = (method: unknown, source?: string) => ({
    mcp: { era: 'modern', method: 'ping' } as never,
    auth: { outcome: 'ok' } as never,
    principal: { userId: 'alice', groups: [], roles: [], method, source } as never,
  });
  answer(m, as('api-key', 'api-key'));
  answer(m, as('oidc', 'https://a.example'));
  answer(m, as('oidc', 'https://b.example'));
  answer(m, as('mtls'));
  answer(m, as(42));
  answer(m, { mcp: { era: 'modern', method: 'ping' } as never });
  const v = await scrape(registry);
  expect(v('mcp_authenticated_total', { auth_method: 'api-key' })).toBe(1);
  expect(v('mcp_authenticated_total', { auth_method: 'oidc' })).toBe(2);
  expect(v('mcp_authenticated_total', { auth_method: 'other' })).toBe(1);
  // The issuer is never a label value: the series stay the three bounded ones.
  expect((await registry.metrics()).match(/^mcp_authenticated_total\{/gm)).toHaveLength(3);
});
