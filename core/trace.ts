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
 * - Across requests: an input-required round signs {@link RequestTrace.traceparent} into its `requestState` and
 *   the retry {@link RequestTrace.link}s to it; a task stores it, and `tasks/get`, `tasks/update`, `tasks/cancel`
 *   link to it; the task's work runs in a span of its own ({@link RequestTrace.work}).
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
  /**
   * The request span's context as a canonical W3C `traceparent` (version 00), once it has started and records:
   * what a later request links to (an input-required round's signed `requestState`, a task's stored creation
   * span).
   */
  readonly traceparent: string | undefined;
  /**
   * Link the request's span to the span a W3C `traceparent` names (an earlier input-required round's, a task's
   * creating request's). A value that does not parse is ignored. Kept and added at the start if the span has not
   * started.
   */
  link(traceparent: string, attributes?: TraceAttributes): void;
  /** Set attributes on the request's span (kept and set at its start if it has not started). */
  set(attributes: TraceAttributes): void;
  /**
   * Start a span for work that outlives the request (a task's work): kind INTERNAL, named `name`, a child of the
   * request's span. Undefined when the request's span has not started or does not record.
   */
  work(name: string, attributes?: TraceAttributes): WorkTrace | undefined;
}

/** How a {@link WorkTrace}'s work ended. */
export interface TraceOutcome {
  /**
   * The JSON-RPC error code it ended with: `rpc.response.status_code`, and `error.type` with status ERROR unless
   * the conventions do not count the code as a server error (as on a request's span).
   */
  code?: number;
  /** The message sent on the wire with that code: the status description. */
  message?: string;
  /** A tool result with `isError: true`: `error.type` `tool_error`, status ERROR. */
  toolError?: boolean;
  /** Set on the span before it ends. */
  attributes?: TraceAttributes;
}

/** A span of work that outlives its request ({@link RequestTrace.work}), ended once. */
export interface WorkTrace {
  /** The OpenTelemetry `Context` holding the work's span: the work's `ctx.otel`. */
  readonly context: unknown;
  /** Run `fn` in the context of the work's span. */
  run<T>(fn: () => T): T;
  /** Add an event to the work's span. */
  event(name: string, attributes?: TraceAttributes): void;
  /** End the work's span (once; later calls do nothing). */
  end(outcome?: TraceOutcome): void;
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
