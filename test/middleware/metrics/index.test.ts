import express from 'express';
import http from 'node:http';
import { Registry, Counter, register as globalRegistry } from 'prom-client';
import request from 'supertest';
import { refusal } from '../../../lib/errors';
import { hashKey } from '../../../lib/apikeys';
import { apiKeyAuth } from '../../../middleware/api-key-auth/index';
import { classifyRevision } from '../../../middleware/classify-revision/index';
import { guardOrigin } from '../../../middleware/guard-origin/index';
import { limits } from '../../../middleware/limits/index';
import { methodGuard } from '../../../middleware/method-guard/index';
import { dispatch } from '../../../middleware/dispatch/index';
import { metrics, metricsHandler } from '../../../middleware/metrics/index';
import { ToolRegistry, ok } from '../../../handlers/tools/index';
import { parse } from '../../../middleware/parse/index';
import { redact } from '../../../middleware/redact/index';
import { rejectBatch } from '../../../middleware/reject-batch/index';
import { localsOf, sendRefusal } from '../../../core/respond';
import type { Middleware } from '../../../core/types';
import {
  type Platform,
  PLATFORMS,
  finalHandler,
  modern,
  modernHeaders,
  run,
  sampleKey,
  samples,
} from '../../support/observe-harness';

const KEY = 'k-metrics-0123456789';
const keys = [{ userId: 'alice', hash: hashKey(KEY), groups: ['users'] }];
const quiet = { error() {}, warn() {} };

const fixtures = {
  tools: {
    lookup: () => ({ content: [{ type: 'text', text: 'owner sergey@acme.com from 10.0.0.1' }] }),
    fails: () => ({ content: [{ type: 'text', text: 'nope' }], isError: true }),
    t1: () => ({ content: [] }),
    t2: () => ({ content: [] }),
    t3: () => ({ content: [] }),
  },
};

/** The MCP chain on /mcp and the registry on /metrics, on bare node:http or in Express 5. */
function site(platform: Platform, mws: Middleware[], registry: Registry): http.Server {
  const scrape = metricsHandler(registry);
  if (platform === 'node:http') {
    const mcp = run(mws);
    return http.createServer((req, res) => (req.url === '/metrics' ? scrape(req, res) : mcp(req, res)));
  }
  const app = express();
  app.get('/metrics', scrape);
  app.use('/mcp', ...mws);
  return http.createServer(app);
}

function call(server: http.Server, name: string, opts: { key?: string | null; origin?: string } = {}) {
  const r = request(server)
    .post('/mcp')
    .set(modernHeaders('tools/call', name.replace(/[^\x20-\x7e]/g, '?')));
  if (opts.key !== null) r.set('Authorization', `Bearer ${opts.key ?? KEY}`);
  if (opts.origin) r.set('Origin', opts.origin);
  return r.send(modern('tools/call', { name, arguments: {} }));
}

describe.each(PLATFORMS)('metrics() on %s, scraped over HTTP', (platform) => {
  test('after traffic: eras, transport refusals, tool calls, auth outcomes, limiter denials, redactions, durations', async () => {
    const registry = new Registry();
    const m = metrics({ registry, tools: ['lookup'] });
    const lim = limits({
      perUserRpm: 5,
      perUserConcurrency: 0,
      globalConcurrency: 0,
      costBudgetPerHour: 0,
      hooks: m.limiterHooks(),
      logger: quiet,
    });
    const server = site(
      platform,
      [
        m,
        guardOrigin(),
        methodGuard(),
        parse(),
        rejectBatch(),
        classifyRevision(),
        apiKeyAuth({ keys, logger: quiet }),
        lim,
        redact(),
        finalHandler(fixtures),
      ],
      registry,
    );
    expect((await call(server, 'lookup')).status).toBe(200); // 1 ok (+ email, ip redacted)
    expect((await call(server, 'fails')).status).toBe(200); // 2 tool_error
    expect((await call(server, 'nope')).status).toBe(200); // 3 unknown tool → -32602
    expect((await call(server, 'lookup', { key: null })).status).toBe(401); // auth missing
    expect((await call(server, 'lookup', { key: 'wrong-key-00000000' })).status).toBe(401); // auth invalid
    expect((await call(server, 'lookup', { origin: 'http://evil.example' })).status).toBe(403);
    expect((await request(server).get('/mcp')).status).toBe(405);
    expect(
      (
        await request(server)
          .post('/mcp')
          .set('Content-Type', 'application/json')
          .send('[{"jsonrpc":"2.0","id":1,"method":"ping"}]')
      ).status,
    ).toBe(400);
    expect((await call(server, 'lookup')).status).toBe(200); // 4
    expect((await call(server, 'lookup')).status).toBe(200); // 5
    expect((await call(server, 'lookup')).status).toBe(429); // rpm

    const res = await request(server).get('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe(registry.contentType);
    const s = samples(res.text);
    const v = (name: string, labels?: Record<string, string>) => s.get(sampleKey(name, labels));

    expect(v('mcp_requests_total', { era: 'modern' })).toBe(8);
    expect(v('mcp_requests_total', { era: 'unknown' })).toBe(3); // origin, GET, batch: refused before classification
    expect(v('mcp_requests_total', { era: 'legacy' })).toBe(0);
    expect(v('mcp_transport_refusals_total', { reason: 'origin_not_allowed' })).toBe(1);
    expect(v('mcp_transport_refusals_total', { reason: 'method_not_allowed' })).toBe(1);
    expect(v('mcp_transport_refusals_total', { reason: 'batch' })).toBe(1);
    expect(v('mcp_transport_refusals_total', { reason: 'header_mismatch' })).toBe(0);
    expect(v('mcp_tool_calls_total', { tool: 'lookup', outcome: 'ok' })).toBe(3);
    expect(v('mcp_tool_calls_total', { tool: 'fails', outcome: 'tool_error' })).toBe(1);
    expect(v('mcp_tool_calls_total', { tool: 'other', outcome: 'error' })).toBe(1); // the unknown tool: not a label
    // 2×401 and the 429; the 403 came before parsing, so it is not known to be a tools/call.
    expect(v('mcp_tool_calls_total', { tool: 'lookup', outcome: 'refused' })).toBe(3);
    expect([...s.keys()].some((k) => k.includes('tool="nope"'))).toBe(false);
    expect(v('mcp_auth_total', { outcome: 'ok' })).toBe(6);
    expect(v('mcp_auth_total', { outcome: 'missing' })).toBe(1);
    expect(v('mcp_auth_total', { outcome: 'invalid' })).toBe(1);
    expect(v('mcp_auth_total', { outcome: 'expired' })).toBe(0);
    expect(v('mcp_ratelimit_denied_total', { reason: 'rpm' })).toBe(1);
    expect(v('mcp_ratelimit_denied_total', { reason: 'cost_budget' })).toBe(0);
    expect(v('mcp_redactions_total', { rule: 'email' })).toBe(3);
    expect(v('mcp_redactions_total', { rule: 'ip' })).toBe(3);
    expect(v('mcp_redactions_total', { rule: 'card' })).toBe(0);
    expect(v('mcp_request_duration_seconds_count', { method: 'tools/call', outcome: 'ok' })).toBe(4);
    expect(v('mcp_request_duration_seconds_count', { method: 'tools/call', outcome: 'error' })).toBe(1);
    expect(v('mcp_request_duration_seconds_count', { method: 'tools/call', outcome: 'refused' })).toBe(3);
    expect(v('mcp_request_duration_seconds_count', { method: 'none', outcome: 'refused' })).toBe(3);
    expect(
      v('mcp_request_duration_seconds_bucket', { method: 'tools/call', outcome: 'ok', le: '+Inf' }),
    ).toBe(4);
  });

  test('HEAD serves headers only; other methods get 405', async () => {
    const registry = new Registry();
    const server = site(platform, [metrics({ registry }), finalHandler()], registry);
    const head = await request(server).head('/metrics');
    expect(head.status).toBe(200);
    expect(Number(head.headers['content-length'])).toBeGreaterThan(0);
    const bad = await request(http.createServer(metricsHandler(registry))).post('/metrics');
    expect(bad.status).toBe(405);
    expect(bad.headers.allow).toBe('GET, HEAD');
  });
});

describe('registries', () => {
  test('never the global registry; creating the middleware twice does not crash', () => {
    const before = globalRegistry.getMetricsAsArray().length;
    const a = metrics();
    const b = metrics();
    expect(a.registry).not.toBe(b.registry);
    expect(a.registry).not.toBe(globalRegistry);
    expect(globalRegistry.getMetricsAsArray().length).toBe(before);
  });

  test('twice on the same registry reuses the metrics (hot reload)', async () => {
    const registry = new Registry();
    const a = metrics({ registry });
    const b = metrics({ registry });
    const server = http.createServer(run([b, parse(), finalHandler(fixtures)]));
    await call(server, 't1');
    const s = samples(await registry.metrics());
    expect(s.get(sampleKey('mcp_requests_total', { era: 'unknown' }))).toBe(1);
    expect(
      registry
        .getMetricsAsArray()
        .filter((x) => (x as unknown as { name: string }).name === 'mcp_requests_total'),
    ).toHaveLength(1);
    expect(a.registry).toBe(b.registry);
  });

  test('a registry holding a different metric of the same name is refused at construction', () => {
    const registry = new Registry();
    new Counter({ name: 'mcp_requests_total', help: 'x', labelNames: ['other'], registers: [registry] });
    expect(() => metrics({ registry })).toThrow(/already has a metric named "mcp_requests_total"/);
  });

  test('prefix', async () => {
    const registry = new Registry();
    metrics({ registry, prefix: 'app_mcp_' });
    const text = await registry.metrics();
    expect(text).toContain('app_mcp_requests_total');
    expect(text).not.toMatch(/^mcp_/m);
  });
});

describe('labels stay bounded', () => {
  test('tool names become labels only for registered tools that answered, up to maxTools; the rest is "other"', async () => {
    const registry = new Registry();
    const server = http.createServer(
      run([metrics({ registry, maxTools: 2 }), parse(), finalHandler(fixtures)]),
    );
    for (const name of ['t1', 't2', 't3', 'ghost-1', 'ghost-2', 'ghost-3', 'bad name\n'])
      await call(server, name);
    const s = samples(await registry.metrics());
    expect(s.get(sampleKey('mcp_tool_calls_total', { tool: 't1', outcome: 'ok' }))).toBe(1);
    expect(s.get(sampleKey('mcp_tool_calls_total', { tool: 't2', outcome: 'ok' }))).toBe(1);
    expect(s.get(sampleKey('mcp_tool_calls_total', { tool: 'other', outcome: 'ok' }))).toBe(1); // t3: over maxTools
    expect(s.get(sampleKey('mcp_tool_calls_total', { tool: 'other', outcome: 'error' }))).toBe(4); // unknown tools
    const tools = new Set(
      [...s.keys()]
        .filter((k) => k.startsWith('mcp_tool_calls_total'))
        .map((k) => /tool="([^"]*)"/.exec(k)?.[1]),
    );
    expect(tools).toEqual(new Set(['t1', 't2', 'other']));
  });

  describe.each(PLATFORMS)('tool labels come from registered tools only, on %s', (platform) => {
    const serverInfo = { name: 't', version: '1' };
    const tools = () => {
      const t = new ToolRegistry({
        // Answers every unknown name with a result: such names must not become labels.
        unknownTool: (name) => ok({ unknown: name }),
        logger: quiet,
      });
      t.register(
        {
          name: 'crash',
          inputSchema: { type: 'object' },
          call: () => {
            throw new Error('boom');
          },
        },
        { name: 'fine', inputSchema: { type: 'object' }, call: () => ok({}) },
      );
      return t;
    };
    const app = (maxTools?: number) => {
      const registry = new Registry();
      const mws = [
        metrics({ registry, ...(maxTools === undefined ? {} : { maxTools }) }),
        parse(),
        dispatch({ anonymous: true, handlers: { tools: tools() }, serverInfo, logger: quiet }),
      ];
      return { registry, server: site(platform, mws, registry) };
    };
    const toolLabels = (text: string) =>
      new Set(
        [...samples(text).keys()]
          .filter((k) => k.startsWith('mcp_tool_calls_total'))
          .map((k) => /tool="([^"]*)"/.exec(k)?.[1]),
      );

    test('a registered tool whose handler throws is counted under its own name with outcome error', async () => {
      const { registry, server } = app();
      const r = await call(server, 'crash');
      expect(r.body.error?.code).toBe(-32603);
      const s = samples(await registry.metrics());
      expect(s.get(sampleKey('mcp_tool_calls_total', { tool: 'crash', outcome: 'error' }))).toBe(1);
      expect(s.get(sampleKey('mcp_tool_calls_total', { tool: 'other', outcome: 'error' }))).toBe(0);
    });

    test('500 names answered by the unknownTool hook count as "other" and leave the label budget to registered tools', async () => {
      const { registry, server } = app(2);
      for (let i = 0; i < 500; i++) {
        const r = await call(server, `ghost-${i}`);
        expect(r.body.result?.structuredContent).toEqual({ unknown: `ghost-${i}` });
      }
      await call(server, 'fine');
      await call(server, 'crash');
      const s = samples(await registry.metrics());
      expect(s.get(sampleKey('mcp_tool_calls_total', { tool: 'other', outcome: 'ok' }))).toBe(500);
      expect(s.get(sampleKey('mcp_tool_calls_total', { tool: 'fine', outcome: 'ok' }))).toBe(1);
      expect(s.get(sampleKey('mcp_tool_calls_total', { tool: 'crash', outcome: 'error' }))).toBe(1);
      expect(toolLabels(await registry.metrics())).toEqual(new Set(['fine', 'crash', 'other']));
    });
  });

  test('unknown methods are "other" on the duration histogram', async () => {
    const registry = new Registry();
    const server = http.createServer(run([metrics({ registry }), parse(), finalHandler()]));
    await request(server)
      .post('/mcp')
      .set('Content-Type', 'application/json')
      .send({ jsonrpc: '2.0', id: 1, method: 'x/made-up-1' });
    await request(server)
      .post('/mcp')
      .set('Content-Type', 'application/json')
      .send({ jsonrpc: '2.0', id: 2, method: 'x/made-up-2' });
    const s = samples(await registry.metrics());
    expect(s.get(sampleKey('mcp_request_duration_seconds_count', { method: 'other', outcome: 'ok' }))).toBe(
      2,
    );
  });
});

describe('limiter hooks', () => {
  test('the real limits middleware drives the in-flight gauge back to zero and the charge histogram', async () => {
    const registry = new Registry();
    const m = metrics({ registry });
    const hooks = m.limiterHooks();
    const inflight: [string, number][] = [];
    const lim = limits({
      perUserRpm: 0,
      perUserConcurrency: 2,
      globalConcurrency: 4,
      costBudgetPerHour: 60_000,
      logger: quiet,
      hooks: {
        ...hooks,
        onInflight: (scope, value) => (inflight.push([scope, value]), hooks.onInflight(scope, value)),
      },
    });
    const server = http.createServer(
      run([m, parse(), apiKeyAuth({ keys, logger: quiet }), lim, finalHandler(fixtures)]),
    );
    await call(server, 't1');
    await call(server, 't2');
    await new Promise((r) => setTimeout(r, 20));
    expect(inflight).toContainEqual(['user', 1]);
    const s = samples(await registry.metrics());
    expect(s.get(sampleKey('mcp_ratelimit_inflight', { scope: 'user' }))).toBe(0);
    expect(s.get(sampleKey('mcp_ratelimit_inflight', { scope: 'global' }))).toBe(0);
    expect(
      (s.get(sampleKey('mcp_ratelimit_charge_seconds_count', { source: 'wall_clock' })) ?? 0) +
        (s.get(sampleKey('mcp_ratelimit_charge_seconds_count', { source: 'charged' })) ?? 0),
    ).toBe(2);
  });

  test('store errors by outcome; unknown values are ignored', async () => {
    const registry = new Registry();
    const h = metrics({ registry }).limiterHooks();
    h.onStoreError(new Error('x'), 'insurance');
    // Values outside the types, as an untyped caller could pass them.
    h.onStoreError(new Error('x'), 'bogus' as never);
    h.onDenied('bogus' as never);
    h.onInflight('bogus' as never, 3);
    const s = samples(await registry.metrics());
    expect(s.get(sampleKey('mcp_ratelimit_store_errors_total', { outcome: 'insurance' }))).toBe(1);
    expect([...s.keys()].some((k) => k.includes('bogus'))).toBe(false);
  });

  test('without hooks, limiter denials are read from refusal.detail; once hooks are used, never twice', async () => {
    const registry = new Registry();
    const m = metrics({ registry });
    // A stand-in for a limits middleware that records the limit on the refusal instead of calling hooks.
    const budget: Middleware = (req, res) => {
      sendRefusal(req, res, refusal('rate_limited'), 'limits');
      localsOf(req).refusal!.detail = 'cost_budget';
    };
    const server = http.createServer(run([m, parse(), budget]));
    await call(server, 't1');
    let s = samples(await registry.metrics());
    expect(s.get(sampleKey('mcp_ratelimit_denied_total', { reason: 'cost_budget' }))).toBe(1);
    m.limiterHooks().onDenied('cost_budget'); // a hooked limiter reports the next denial itself …
    await call(server, 't1'); // … and the finish of that request must not count it again
    s = samples(await registry.metrics());
    expect(s.get(sampleKey('mcp_ratelimit_denied_total', { reason: 'cost_budget' }))).toBe(2);
  });
});
