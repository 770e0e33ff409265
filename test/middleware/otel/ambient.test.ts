/**
 * otel() under an ambient context (an HTTP instrumentation's server span, with the AsyncLocalStorage context
 * manager registered globally for this file and removed after it): the `_meta` parent wins and the HTTP span is
 * linked; without a `_meta` traceparent the HTTP span is the parent. A handler runs in the request span's
 * context (its own spans nest under it) with the caller's baggage; the global W3C propagators give the same.
 */
import request from 'supertest';
import { type Context, context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  PARENT_ID,
  PLATFORMS,
  TRACEPARENT,
  TRACE_ID,
  type Sdk,
  modern,
  modernHeaders,
  only,
  serve,
  startSdk,
} from './otel-harness';

let sdk: Sdk;
beforeAll(() => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
});
afterAll(() => {
  context.disable();
});
beforeEach(() => {
  sdk = startSdk();
});
afterEach(async () => {
  await sdk.shutdown();
});

/** An HTTP instrumentation's stand-in: a server span around the request, ended at the response's end. */
function httpSpan(req: IncomingMessage, res: ServerResponse, go: () => void): void {
  const span = sdk.tracerProvider.getTracer('http').startSpan(`${req.method} /mcp`);
  res.on('finish', () => span.end());
  context.with(trace.setSpan(context.active(), span), go);
}

describe.each(PLATFORMS)('on %s', (platform) => {
  const otel = () => ({ tracerProvider: sdk.tracerProvider });

  test('a _meta traceparent is the parent; the ambient HTTP span is linked', async () => {
    const server = serve(platform, { otel: otel(), around: httpSpan });
    await request(server)
      .post('/mcp')
      .set(modernHeaders('tools/list'))
      .send(modern('tools/list', {}, { traceparent: TRACEPARENT }));
    const spans = sdk.spans();
    const http = only(spans, 'POST /mcp');
    const mcp = only(spans, 'tools/list');
    expect(mcp.spanContext().traceId).toBe(TRACE_ID);
    expect(mcp.parentSpanContext?.spanId).toBe(PARENT_ID);
    expect(mcp.links.map((l) => l.context.spanId)).toEqual([http.spanContext().spanId]);
    expect(mcp.links[0]!.context.traceId).toBe(http.spanContext().traceId);
  });

  test('without a _meta traceparent the HTTP span is the parent, and nothing is linked', async () => {
    const server = serve(platform, { otel: otel(), around: httpSpan });
    await request(server).post('/mcp').set(modernHeaders('tools/list')).send(modern('tools/list'));
    const spans = sdk.spans();
    const http = only(spans, 'POST /mcp');
    const mcp = only(spans, 'tools/list');
    expect(mcp.spanContext().traceId).toBe(http.spanContext().traceId);
    expect(mcp.parentSpanContext?.spanId).toBe(http.spanContext().spanId);
    expect(mcp.links).toEqual([]);
  });

  test("a handler's own span nests under the request span, and sees the caller's baggage", async () => {
    let seen: { otel: unknown; active: Context } | undefined;
    const server = serve(platform, {
      otel: otel(),
      inner: (ctx) => {
        seen = { otel: ctx.otel, active: context.active() };
        sdk.tracerProvider.getTracer('app').startSpan('inner work').end();
        return propagation.getBaggage(context.active())?.getEntry('tenant')?.value ?? null;
      },
    });
    const res = await request(server)
      .post('/mcp')
      .set(modernHeaders('tools/call', 'inner'))
      .send(
        modern(
          'tools/call',
          { name: 'inner', arguments: {} },
          { traceparent: TRACEPARENT, baggage: 'tenant=acme%20corp' },
        ),
      );
    expect(res.body.result.structuredContent).toEqual({ inner: 'acme corp' });
    const spans = sdk.spans();
    const mcp = only(spans, 'tools/call inner');
    const inner = only(spans, 'inner work');
    expect(inner.parentSpanContext?.spanId).toBe(mcp.spanContext().spanId);
    expect(inner.spanContext().traceId).toBe(TRACE_ID);
    expect(trace.getSpanContext(seen!.otel as Context)?.spanId).toBe(mcp.spanContext().spanId);
    expect(trace.getSpanContext(seen!.active)?.spanId).toBe(mcp.spanContext().spanId);
  });

  test('hostile baggage is not handed to the handler', async () => {
    const server = serve(platform, {
      otel: otel(),
      inner: () => propagation.getBaggage(context.active())?.getAllEntries().length ?? 0,
    });
    const res = await request(server)
      .post('/mcp')
      .set(modernHeaders('tools/call', 'inner'))
      .send(
        modern(
          'tools/call',
          { name: 'inner', arguments: {} },
          { baggage: Array.from({ length: 10_000 }, (_, i) => `k${i}=v`).join(',') },
        ),
      );
    expect(res.body.result.structuredContent).toEqual({ inner: 0 });
  });

  test('with the global W3C propagators registered: the same parent, state and baggage', async () => {
    propagation.setGlobalPropagator(
      new CompositePropagator({
        propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()],
      }),
    );
    try {
      const server = serve(platform, {
        otel: otel(),
        inner: () => propagation.getBaggage(context.active())?.getEntry('tenant')?.value ?? null,
      });
      const res = await request(server)
        .post('/mcp')
        .set(modernHeaders('tools/call', 'inner'))
        .send(
          modern(
            'tools/call',
            { name: 'inner', arguments: {} },
            { traceparent: TRACEPARENT, tracestate: 'rojo=1', baggage: 'tenant=acme' },
          ),
        );
      expect(res.body.result.structuredContent).toEqual({ inner: 'acme' });
      const mcp = only(sdk.spans());
      expect(mcp.parentSpanContext?.spanId).toBe(PARENT_ID);
      expect(mcp.parentSpanContext?.traceState?.serialize()).toBe('rojo=1');
    } finally {
      propagation.disable();
    }
  });
});
