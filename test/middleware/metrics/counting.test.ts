/**
 * metrics() keeps the labelled children it uses (one per label value): counts stay exact for repeated label
 * values, across two instances sharing a registry, after the registry is reset, and for every hook; and a
 * request is recorded once even when a chain runs the same instance twice.
 */
import http from 'node:http';
import { Registry } from 'prom-client';
import request from 'supertest';
import { metrics } from '../../../middleware/metrics/index';
import { parse } from '../../../middleware/parse/index';
import { finalHandler, modern, modernHeaders, run, sampleKey, samples } from '../../support/observe-harness';

const fixtures = {
  tools: {
    t1: () => ({ content: [] }),
    bad: () => ({ content: [], isError: true }),
  },
};

/** `name{sorted labels}` → value, from the registry's Prometheus text. */
async function scrape(
  registry: Registry,
): Promise<(name: string, labels?: Record<string, string>) => number> {
  const s = samples(await registry.metrics());
  return (name, labels) => s.get(sampleKey(name, labels)) ?? NaN;
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
