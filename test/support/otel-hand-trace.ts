/**
 * A hand-made {@link RequestTrace} for the stack's side of tracing, tested apart from `otel()`: a middleware that
 * puts one on `req.locals[TRACE]`, backed by a real OpenTelemetry SDK tracer (an in-memory exporter and the
 * AsyncLocalStorage context manager), so what the stack hands it can be read back as spans.
 */
import { type Context, ROOT_CONTEXT, context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import type { IncomingMessage } from 'node:http';
import { type RequestTrace, TRACE, type TraceAttributes } from '../../core/trace';
import type { Middleware } from '../../core/types';

/** What one hand-made trace was told. */
export interface HandTraceLog {
  readonly req: IncomingMessage;
  readonly events: { name: string; attributes: TraceAttributes | undefined }[];
  readonly results: unknown[];
  /** The request span's ids. */
  readonly traceId: string;
  readonly spanId: string;
}

export interface HandTracing {
  /** The middleware: mount it first. */
  readonly middleware: Middleware;
  readonly tracer: ReturnType<BasicTracerProvider['getTracer']>;
  /** One per traced request, in arrival order. */
  readonly logs: HandTraceLog[];
  /** The ended spans. */
  spans(): ReadableSpan[];
  close(): Promise<void>;
}

/**
 * Start the SDK and the middleware. The request span starts at arrival (named `request`) and ends when the
 * response closes; the events also go on it.
 */
export function handTracing(): HandTracing {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const manager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(manager);
  const tracer = provider.getTracer('hand-trace');
  const logs: HandTraceLog[] = [];
  const middleware: Middleware = (req, res, next) => {
    const span = tracer.startSpan('request', {}, ROOT_CONTEXT);
    const ctx: Context = trace.setSpan(ROOT_CONTEXT, span);
    const sc = span.spanContext();
    const log: HandTraceLog = { req, events: [], results: [], traceId: sc.traceId, spanId: sc.spanId };
    logs.push(log);
    const t = {
      parsed: () => undefined,
      run: <T>(fn: () => T): T => context.with(ctx, fn),
      context: ctx,
      traceId: sc.traceId,
      spanId: sc.spanId,
      traceparent: `00-${sc.traceId}-${sc.spanId}-01`,
      event(name: string, attributes?: TraceAttributes) {
        log.events.push({ name, attributes });
        span.addEvent(name, attributes);
      },
      result(value: unknown) {
        log.results.push(value);
      },
      link: () => undefined,
      set: () => undefined,
      work: () => undefined,
    };
    (req.locals ??= {})[TRACE] = t as unknown as RequestTrace;
    res.once('close', () => span.end());
    next();
  };
  return {
    middleware,
    tracer,
    logs,
    spans: () => exporter.getFinishedSpans(),
    async close() {
      await provider.shutdown();
      context.disable();
    },
  };
}

/** The parent span id of an SDK 2.x span. */
export function parentOf(s: ReadableSpan): string | undefined {
  return s.parentSpanContext?.spanId;
}
