/**
 * Whether tracing and metrics are on, asked on each request: the tracer and the histogram of the provider in
 * use, or undefined when that provider is OpenTelemetry's no-op one (no SDK registered). The global providers
 * are looked up each time (a property read or two, and an identity comparison with the last one seen), so an
 * SDK registered after `otel()` was made is noticed on the next request; the tracer and the histogram are made
 * again only when the provider changed.
 * @see docs/middleware/otel.md#cost
 */
import {
  type Histogram,
  type MeterProvider,
  type Tracer,
  type TracerProvider,
  metrics,
  trace,
} from '@opentelemetry/api';

/** The instrumentation scope of the spans and the metric. */
export const SCOPE = 'mcpware';

/** `mcp.server.operation.duration`'s name. */
export const DURATION_METRIC = 'mcp.server.operation.duration';
/** The conventions' bucket boundaries for the MCP duration histograms, in seconds. */
export const DURATION_BUCKETS: readonly number[] = Object.freeze([
  0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300,
]);

/** The provider a proxy delegates to (the global tracer provider is a proxy), or the provider itself. */
function delegateOf(provider: TracerProvider): unknown {
  const get = (provider as { getDelegate?: unknown }).getDelegate;
  return typeof get === 'function' ? (get as () => unknown).call(provider) : provider;
}

/** OpenTelemetry's no-op providers (what the API answers with no SDK registered). */
function isNoop(provider: unknown): boolean {
  const name = (provider as { constructor?: { name?: unknown } } | null)?.constructor?.name;
  return name === 'NoopTracerProvider' || name === 'NoopMeterProvider';
}

/** The tracer to use now, or undefined when tracing is off. */
export type TracerSource = () => Tracer | undefined;

/** A {@link TracerSource} over `provider`, or over the global one when undefined. */
export function tracerSource(provider: TracerProvider | undefined): TracerSource {
  let seen: unknown = undefined;
  let tracer: Tracer | undefined;
  return () => {
    const p = provider ?? trace.getTracerProvider();
    const d = delegateOf(p);
    if (d !== seen) {
      seen = d;
      tracer = isNoop(d) ? undefined : (d as TracerProvider).getTracer(SCOPE);
    }
    return tracer;
  };
}

/** The duration histogram to record on now, or undefined when metrics are off. */
export type HistogramSource = () => Histogram | undefined;

/** A {@link HistogramSource} over `provider`, or over the global one when undefined. */
export function histogramSource(provider: MeterProvider | undefined): HistogramSource {
  let seen: unknown = undefined;
  let histogram: Histogram | undefined;
  return () => {
    const p = provider ?? metrics.getMeterProvider();
    if (p !== seen) {
      seen = p;
      histogram = isNoop(p)
        ? undefined
        : p.getMeter(SCOPE).createHistogram(DURATION_METRIC, {
            unit: 's',
            description:
              'MCP request or notification duration as observed on the receiver from the time it was received until the result or ack is sent.',
            advice: { explicitBucketBoundaries: [...DURATION_BUCKETS] },
          });
    }
    return histogram;
  };
}
