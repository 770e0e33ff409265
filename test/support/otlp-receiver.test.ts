/**
 * The OTLP receiver of test/support against the real OpenTelemetry exporters: traces and metrics, OTLP/HTTP in
 * JSON and in protobuf, decoded to the same plain objects.
 */
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { OTLPMetricExporter as JsonMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPMetricExporter as ProtoMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import { OTLPTraceExporter as JsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtoTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { type OtlpReceiver, startOtlpReceiver } from './otlp-receiver';

const BOUNDS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300];
const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';
const HTTP_SPAN = 'a3ce929d0e0e4736';

let otlp: OtlpReceiver;
beforeAll(async () => {
  otlp = await startOtlpReceiver();
});
afterAll(() => otlp.close());
beforeEach(() => otlp.reset());

const protocols = [
  ['http/json', 'json', 'application/json'],
  ['http/protobuf', 'protobuf', 'application/x-protobuf'],
] as const;

describe.each(protocols)('traces over %s', (_name, protocol, contentType) => {
  test('a server span with its parent, attributes, event, link and status, and a child span', async () => {
    const exporter =
      protocol === 'json'
        ? new JsonTraceExporter({ url: otlp.tracesUrl })
        : new ProtoTraceExporter({ url: otlp.tracesUrl });
    const provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ 'service.name': 'otlp-receiver-test' }),
      spanProcessors: [new SimpleSpanProcessor(exporter)],
    });
    const tracer = provider.getTracer('mcpware-test', '1.2.3');
    const parent = trace.setSpanContext(ROOT_CONTEXT, {
      traceId: CALLER_TRACE,
      spanId: CALLER_SPAN,
      traceFlags: 1,
      isRemote: true,
    });
    const span = tracer.startSpan(
      'tools/call echo',
      {
        kind: SpanKind.SERVER,
        attributes: {
          'mcp.method.name': 'tools/call',
          'gen_ai.tool.name': 'echo',
          'client.port': 65123,
          'mcp.sampled': true,
          'mcp.ratio': 0.5,
          'mcp.list': ['a', 'b'],
        },
        links: [
          {
            context: { traceId: CALLER_TRACE, spanId: HTTP_SPAN, traceFlags: 1, isRemote: true },
            attributes: { 'link.kind': 'http' },
          },
        ],
      },
      parent,
    );
    span.addEvent('limits.refused', { 'mcp.limit.reason': 'rpm' });
    span.setStatus({ code: SpanStatusCode.ERROR, message: 'Internal error' });
    tracer.startSpan('redis.eval', { kind: SpanKind.CLIENT }, trace.setSpan(ROOT_CONTEXT, span)).end();
    span.end();
    await provider.forceFlush();

    const [server, child] = await otlp.waitFor((r) => {
      const s = r.spans.find((x) => x.name === 'tools/call echo');
      const c = r.spans.find((x) => x.name === 'redis.eval');
      return s && c && ([s, c] as const);
    });
    expect(server).toMatchObject({
      traceId: CALLER_TRACE,
      parentSpanId: CALLER_SPAN,
      kind: 'SERVER',
      attributes: {
        'mcp.method.name': 'tools/call',
        'gen_ai.tool.name': 'echo',
        'client.port': 65123,
        'mcp.sampled': true,
        'mcp.ratio': 0.5,
        'mcp.list': ['a', 'b'],
      },
      events: [{ name: 'limits.refused', attributes: { 'mcp.limit.reason': 'rpm' } }],
      links: [{ traceId: CALLER_TRACE, spanId: HTTP_SPAN, attributes: { 'link.kind': 'http' } }],
      status: { code: 'ERROR', message: 'Internal error' },
      resource: { 'service.name': 'otlp-receiver-test' },
      scope: { name: 'mcpware-test', version: '1.2.3' },
      protocol,
    });
    expect(server.spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(BigInt(server.endTimeUnixNano)).toBeGreaterThanOrEqual(BigInt(server.startTimeUnixNano));
    expect(child).toMatchObject({ traceId: CALLER_TRACE, parentSpanId: server.spanId, kind: 'CLIENT' });
    expect(otlp.requests.every((q) => q.path === '/v1/traces' && q.contentType === contentType)).toBe(true);
    expect(otlp.errors).toEqual([]);
    await provider.shutdown();
  });
});

describe.each(protocols)('metrics over %s', (_name, protocol, contentType) => {
  test('histogram buckets and attributes, and a counter', async () => {
    const exporter =
      protocol === 'json'
        ? new JsonMetricExporter({ url: otlp.metricsUrl })
        : new ProtoMetricExporter({ url: otlp.metricsUrl });
    // The reader's interval is longer than the test: the export is the forceFlush below.
    const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
    const provider = new MeterProvider({
      resource: resourceFromAttributes({ 'service.name': 'otlp-receiver-test' }),
      readers: [reader],
    });
    const meter = provider.getMeter('mcpware-test');
    const duration = meter.createHistogram('mcp.server.operation.duration', {
      unit: 's',
      advice: { explicitBucketBoundaries: BOUNDS },
    });
    const attrs = { 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': 'echo' };
    for (const v of [0.005, 0.015, 0.015, 0.7, 400]) duration.record(v, attrs);
    duration.record(0.03, { 'mcp.method.name': 'tools/list', 'error.type': '-32603' });
    meter.createCounter('mcp.test.count').add(3, { kind: 'x' });
    await provider.forceFlush();

    const tool = await otlp.waitFor((r) =>
      r.points.find(
        (p) => p.metric === 'mcp.server.operation.duration' && p.attributes['gen_ai.tool.name'] === 'echo',
      ),
    );
    expect(tool).toMatchObject({
      type: 'histogram',
      unit: 's',
      attributes: attrs,
      count: 5,
      min: 0.005,
      max: 400,
      explicitBounds: BOUNDS,
      bucketCounts: [1, 2, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1],
      resource: { 'service.name': 'otlp-receiver-test' },
      scope: { name: 'mcpware-test' },
      protocol,
    });
    expect(tool.sum).toBeCloseTo(400.735, 6);
    const list = otlp.points.find((p) => p.attributes['mcp.method.name'] === 'tools/list');
    expect(list).toMatchObject({ count: 1, attributes: { 'error.type': '-32603' } });
    expect(otlp.points.find((p) => p.metric === 'mcp.test.count')).toMatchObject({
      type: 'sum',
      value: 3,
      attributes: { kind: 'x' },
    });
    expect(otlp.requests.every((q) => q.path === '/v1/metrics' && q.contentType === contentType)).toBe(true);
    expect(otlp.errors).toEqual([]);
    await provider.shutdown();
  });
});

describe('refusals', () => {
  test('a wrong path, method, content type or body is refused and recorded', async () => {
    const post = (path: string, type: string, body: string) =>
      fetch(`${otlp.url}${path}`, { method: 'POST', headers: { 'content-type': type }, body });
    expect((await post('/v1/logs', 'application/json', '{}')).status).toBe(404);
    expect((await fetch(otlp.tracesUrl)).status).toBe(404);
    expect((await post('/v1/traces', 'text/plain', '{}')).status).toBe(415);
    expect((await post('/v1/traces', 'application/json', '{not json')).status).toBe(400);
    expect((await post('/v1/metrics', 'application/x-protobuf', '\u00ff\u00ff\u00ff')).status).toBe(400);
    expect(otlp.errors).toHaveLength(5);
    expect(otlp.spans).toEqual([]);
  });

  test('waitFor rejects with what arrived when the predicate is never met', async () => {
    await expect(otlp.waitFor(() => false, 50)).rejects.toThrow(/not satisfied after 50 ms; spans: \[\]/);
  });
});
