/**
 * The demo's OpenTelemetry SDK, from the standard environment variables: with `OTEL_EXPORTER_OTLP_ENDPOINT` set,
 * a tracer provider (batch span processor, OTLP/HTTP trace exporter) and a meter provider (periodic reader,
 * OTLP/HTTP metric exporter) registered as the process's global ones, with the AsyncLocalStorage context manager
 * and the W3C trace-context and baggage propagators. Unset: nothing is registered (and the demo mounts no
 * `otel()`). docs/guides/opentelemetry.md shows the same setup for an application of your own.
 *
 * Variables (https://opentelemetry.io/docs/specs/otel/protocol/exporter/):
 * - `OTEL_EXPORTER_OTLP_ENDPOINT`: the collector's base URL; traces go to `<endpoint>/v1/traces`, metrics to
 *   `<endpoint>/v1/metrics` (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` / `_METRICS_ENDPOINT`: a signal's full URL).
 * - `OTEL_EXPORTER_OTLP_PROTOCOL`: `http/protobuf` (default) or `http/json`; `grpc` is refused (not installed).
 * - `OTEL_SERVICE_NAME`: the resource's `service.name` (default `mcpware-demo`).
 * - `OTEL_METRIC_EXPORT_INTERVAL`: ms between metric exports (default 60000); `OTEL_BSP_SCHEDULE_DELAY`: ms
 *   between span batches (default 5000).
 * - Read by the exporters themselves: `OTEL_EXPORTER_OTLP_HEADERS`, `_TIMEOUT`, `_COMPRESSION`.
 */
import { context, metrics, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPMetricExporter as JsonMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPMetricExporter as ProtoMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import { OTLPTraceExporter as JsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtoTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';

type Env = Readonly<Record<string, string | undefined>>;

/** The OTLP/HTTP encodings the demo can export in (`grpc` needs packages the demo does not install). */
export const OTLP_PROTOCOLS: readonly string[] = ['http/protobuf', 'http/json'];

/** The demo's OpenTelemetry settings, read (and checked) from the environment. */
export interface OtelSettings {
  protocol: 'http/protobuf' | 'http/json';
  tracesUrl: string;
  metricsUrl: string;
  serviceName: string;
  /** ms between metric exports. */
  metricIntervalMs: number;
  /** ms between span batches; undefined: the processor's default (or `OTEL_BSP_SCHEDULE_DELAY`, which it reads). */
  spanDelayMs: number | undefined;
}

/** The registered SDK: what the demo flushes and shuts down on its graceful stop. */
export interface OtelSdk {
  settings: OtelSettings;
  /** Export what is buffered, shut both providers down and unregister the globals. */
  shutdown(): Promise<void>;
}

/** A URL of `http:` or `https:`, or a TypeError naming the variable (the value is not echoed: it may hold a token). */
function httpUrl(name: string, value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new TypeError(`${name} is not a URL (expected http://HOST:PORT, e.g. http://127.0.0.1:4318)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new TypeError(`${name} must be an http:// or https:// URL (OTLP over HTTP), got ${url.protocol}`);
  return url;
}

function millis(env: Env, name: string): number | undefined {
  const v = env[name];
  if (v === undefined || v === '') return undefined;
  if (!/^\d{1,9}$/.test(v) || Number(v) === 0)
    throw new TypeError(`${name} must be a positive integer (milliseconds), got ${JSON.stringify(v)}`);
  return Number(v);
}

/** A signal's URL: its own variable as is, else the base endpoint with `/v1/<signal>` appended (the spec's rule). */
function signalUrl(env: Env, base: URL, signal: 'traces' | 'metrics'): string {
  const own = `OTEL_EXPORTER_OTLP_${signal.toUpperCase()}_ENDPOINT`;
  const v = env[own];
  if (v) return httpUrl(own, v).href;
  const url = new URL(base.href);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/v1/${signal}`;
  return url.href;
}

/**
 * The settings the environment asks for, or undefined when `OTEL_EXPORTER_OTLP_ENDPOINT` is unset or empty
 * (OpenTelemetry off). A bad value throws a TypeError naming the variable, so the demo fails at start-up.
 */
export function otelSettingsFromEnv(env: Env): OtelSettings | undefined {
  const endpoint = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (endpoint === undefined || endpoint === '') return undefined;
  const base = httpUrl('OTEL_EXPORTER_OTLP_ENDPOINT', endpoint);
  const protocol = env.OTEL_EXPORTER_OTLP_PROTOCOL || 'http/protobuf';
  if (!OTLP_PROTOCOLS.includes(protocol))
    throw new TypeError(
      `OTEL_EXPORTER_OTLP_PROTOCOL must be one of ${OTLP_PROTOCOLS.join(', ')}, got ${JSON.stringify(protocol)}`,
    );
  const serviceName = env.OTEL_SERVICE_NAME || 'mcpware-demo';
  return {
    protocol: protocol as OtelSettings['protocol'],
    tracesUrl: signalUrl(env, base, 'traces'),
    metricsUrl: signalUrl(env, base, 'metrics'),
    serviceName,
    metricIntervalMs: millis(env, 'OTEL_METRIC_EXPORT_INTERVAL') ?? 60_000,
    spanDelayMs: millis(env, 'OTEL_BSP_SCHEDULE_DELAY'),
  };
}

/**
 * Register the SDK as the process's global OpenTelemetry: tracer and meter providers, context manager,
 * propagators. Throws when another SDK registered a global tracer or meter provider first.
 */
export function registerOtel(settings: OtelSettings): OtelSdk {
  const json = settings.protocol === 'http/json';
  const resource = defaultResource().merge(resourceFromAttributes({ 'service.name': settings.serviceName }));
  const spanExporter = json
    ? new JsonTraceExporter({ url: settings.tracesUrl })
    : new ProtoTraceExporter({ url: settings.tracesUrl });
  const tracerProvider = new BasicTracerProvider({
    resource,
    spanProcessors: [
      new BatchSpanProcessor(
        spanExporter,
        settings.spanDelayMs !== undefined ? { scheduledDelayMillis: settings.spanDelayMs } : {},
      ),
    ],
  });
  const metricExporter = json
    ? new JsonMetricExporter({ url: settings.metricsUrl })
    : new ProtoMetricExporter({ url: settings.metricsUrl });
  const meterProvider = new MeterProvider({
    resource,
    readers: [
      new PeriodicExportingMetricReader({
        exporter: metricExporter,
        exportIntervalMillis: settings.metricIntervalMs,
        // The reader refuses a timeout longer than its interval.
        exportTimeoutMillis: Math.min(30_000, settings.metricIntervalMs),
      }),
    ],
  });
  // Each global registered, with how to unregister it; the first refusal (another SDK was there first) undoes
  // this SDK's own registrations only.
  const globals: Array<[register: () => boolean, unregister: () => void]> = [
    [() => trace.setGlobalTracerProvider(tracerProvider), () => trace.disable()],
    [() => metrics.setGlobalMeterProvider(meterProvider), () => metrics.disable()],
    [
      () => context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable()),
      () => context.disable(),
    ],
    [
      () =>
        propagation.setGlobalPropagator(
          new CompositePropagator({
            propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()],
          }),
        ),
      () => propagation.disable(),
    ],
  ];
  const registered: Array<() => void> = [];
  const unregister = (): void => {
    for (const undo of registered.splice(0).reverse()) undo();
  };
  for (const [register, undo] of globals) {
    if (!register()) {
      unregister();
      void tracerProvider.shutdown();
      void meterProvider.shutdown();
      throw new Error('OpenTelemetry is already registered in this process: the demo registers its own SDK');
    }
    registered.push(undo);
  }
  return {
    settings,
    async shutdown() {
      try {
        // Shutting down exports what the batch processor and the metric reader still hold.
        await Promise.allSettled([tracerProvider.shutdown(), meterProvider.shutdown()]);
      } finally {
        unregister();
      }
    },
  };
}
