/**
 * The request's trace, as the kernel sees it: `otel()` (middleware/otel) keeps one per request on
 * `req.locals[TRACE]`, and the rest of the stack talks to it through this interface only, so that nothing but
 * middleware/otel imports `@opentelemetry/api` (an optional peer dependency). Without `otel()` the property is
 * absent and each call site costs one property read.
 *
 * - The shared parse step calls {@link RequestTrace.parsed} when it has read the JSON-RPC message: the span starts
 *   then (its parent comes from `params._meta`), with the request's arrival as its start time.
 * - `dispatch()` runs the handler inside {@link RequestTrace.run}, and hands {@link RequestTrace.context} to the
 *   handler as `ctx.otel`, so a handler's own spans nest under the request's.
 * - Middlewares add what they decided as events ({@link RequestTrace.event}): the authentication decision, a
 *   limit's refusal, the limiter's store calls, the redaction count.
 * - Audit reads {@link RequestTrace.traceId} and {@link RequestTrace.spanId} for its record.
 *
 * @see docs/middleware/otel.md
 */
import type { McpRequest } from '../lib/request.js';

/** Where `otel()` keeps the request's trace on `req.locals`. */
export const TRACE: unique symbol = Symbol.for('mcpware.trace');

/** An event's attributes: scalar values only. */
export type TraceAttributes = Readonly<Record<string, string | number | boolean>>;

/** A request's trace (see the module comment). */
export interface RequestTrace {
  /** The shared parse step parsed the request's message: start its span, if it has not started. */
  parsed(mcp: McpRequest): void;
  /** Run `fn` in the context of the request's span (as is, before the span has started). */
  run<T>(fn: () => T): T;
  /** The OpenTelemetry `Context` holding the request's span; undefined before the span starts. */
  readonly context: unknown;
  /** The request span's W3C trace id (32 lowercase hex), once it has started and records. */
  readonly traceId: string | undefined;
  /** The request span's W3C span id (16 lowercase hex), once it has started and records. */
  readonly spanId: string | undefined;
  /** Add an event to the request's span (kept and added when it starts, if it has not yet). */
  event(name: string, attributes?: TraceAttributes): void;
  /**
   * `dispatch()` hands over the result it answered with, after the outbound transforms (so after `redact()`);
   * kept only when `otel({ captureResults: true })`.
   */
  result(value: unknown): void;
}

/**
 * Where `redact()` leaves, on a request `otel()` traces, the function that redacts a value with that request's
 * rules: what `otel({ captureArguments: true })` may put on a span. Without it nothing is captured.
 */
export const TRACE_REDACTOR: unique symbol = Symbol.for('mcpware.traceRedactor');

/** Redact a value as `redact()` redacts the request's results (a copy; the value is not changed). */
export type TraceRedactor = (value: unknown) => unknown;

/** The request's trace, when `otel()` runs in front of it. */
export function traceOf(locals: { [TRACE]?: RequestTrace } | undefined): RequestTrace | undefined {
  return locals?.[TRACE];
}
