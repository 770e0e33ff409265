/**
 * otel() on the global providers: with no SDK registered it puts nothing on `req.locals` and adds no listener
 * (the request is answered as without it); an SDK registered after otel() was made is used from the next
 * request, and when it is removed again otel() goes quiet. The global providers are restored after each test.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import request from 'supertest';
import { metrics, trace } from '@opentelemetry/api';
import { TRACE } from '../../../core/trace';
import type { Middleware } from '../../../core/types';
import { chain } from '../../support/dispatch-harness';
import { type Sdk, modern, modernHeaders, only, stack, startSdk } from './otel-harness';

let sdk: Sdk;
beforeEach(() => {
  sdk = startSdk();
});
afterEach(async () => {
  trace.disable();
  metrics.disable();
  await sdk.shutdown();
});

interface Seen {
  traced: boolean;
  locals: number;
  listeners: number;
}

/** A server over the stack with a probe right after otel(): what otel() left on the request. */
function probed(withOtel = true): { server: http.Server; seen: Seen[] } {
  const seen: Seen[] = [];
  const [otelMw, ...rest] = stack();
  const probe: Middleware = (req: IncomingMessage, res: ServerResponse, next) => {
    const locals = req.locals ?? {};
    seen.push({
      traced: locals[TRACE] !== undefined,
      locals: Reflect.ownKeys(locals).length,
      listeners: res.listenerCount('finish') + res.listenerCount('close'),
    });
    next();
  };
  const run = chain(withOtel ? [otelMw!, probe, ...rest] : [probe, ...rest], (res) => {
    res.statusCode = 404;
    res.end();
  });
  return { server: http.createServer(run), seen };
}

const call = (server: http.Server) =>
  request(server)
    .post('/mcp')
    .set(modernHeaders('tools/call', 'echo'))
    .send(modern('tools/call', { name: 'echo', arguments: { a: 1 } }));

/** The listeners node:http itself has on a response when the first middleware runs. */
let baseline: number;
beforeAll(async () => {
  const { server, seen } = probed(false);
  await call(server);
  baseline = seen[0]!.listeners;
});

test('no SDK registered: nothing on req.locals, no listener, the same answer', async () => {
  const { server, seen } = probed();
  const res = await call(server);
  expect(res.status).toBe(200);
  expect(res.body.result.structuredContent).toEqual({ echoed: { a: 1 } });
  expect(seen).toEqual([{ traced: false, locals: 0, listeners: baseline }]);
  expect(sdk.spans()).toEqual([]);
});

test('an SDK registered after otel() was made is used from the next request; removed, otel() is quiet', async () => {
  const { server, seen } = probed();
  await call(server);
  trace.setGlobalTracerProvider(sdk.tracerProvider);
  metrics.setGlobalMeterProvider(sdk.meterProvider);
  await call(server);
  expect(seen[1]!.traced).toBe(true);
  expect(only(sdk.spans()).name).toBe('tools/call echo');
  const points = (await sdk.durations())?.dataPoints ?? [];
  expect(points.map((p) => p.value.count)).toEqual([1]);
  trace.disable();
  metrics.disable();
  await call(server);
  expect(seen[2]).toEqual({ traced: false, locals: 0, listeners: baseline });
  expect(sdk.spans()).toHaveLength(1);
});

test('a meter provider alone: the metric is recorded, nothing is put on req.locals[TRACE]', async () => {
  const { server, seen } = probed();
  metrics.setGlobalMeterProvider(sdk.meterProvider);
  await call(server);
  expect(seen[0]!.traced).toBe(false);
  expect(sdk.spans()).toEqual([]);
  expect(((await sdk.durations())?.dataPoints ?? []).length).toBe(1);
});
