/**
 * How a span ends (a request's and a work span's alike): the JSON-RPC code as `rpc.response.status_code`,
 * `error.type` and status ERROR when the conventions count the outcome as a failure; and the span of work that
 * outlives its request ({@link WorkTrace}: a task's work).
 * @see docs/middleware/otel.md#errortype
 */
import { type Attributes, type Context, type Span, SpanStatusCode, context, trace } from '@opentelemetry/api';
import type { TraceAttributes, TraceOutcome, WorkTrace } from '../../core/trace.js';
import { isServerError } from './attributes.js';

/** What a span ended with, ready to be written. */
export interface Ending {
  /** The JSON-RPC error code answered, if any. */
  code?: number;
  /** The status description: the message sent on the wire with the code. */
  message?: string;
  /** `error.type` when the outcome is not an error code (`tool_error`, `aborted`, `cancelled`). */
  failure?: string;
}

/** `error.type` of an ending, or undefined when it is no failure. */
export function errorTypeOf(e: Ending): string | undefined {
  if (e.code !== undefined && isServerError(e.code)) return String(e.code);
  return e.failure;
}

/** Write an ending's attributes and status on `span` (and into `metric`, when given). */
export function writeEnding(span: Span | undefined, e: Ending, metric?: Attributes): void {
  const type = errorTypeOf(e);
  if (e.code !== undefined) {
    const code = String(e.code);
    span?.setAttribute('rpc.response.status_code', code);
    if (metric !== undefined) metric['rpc.response.status_code'] = code;
  }
  if (type === undefined) return;
  if (metric !== undefined) metric['error.type'] = type;
  if (span === undefined) return;
  span.setAttribute('error.type', type);
  span.setStatus(
    e.code !== undefined && e.message !== undefined
      ? { code: SpanStatusCode.ERROR, message: e.message }
      : { code: SpanStatusCode.ERROR },
  );
}

/** The epoch time now in milliseconds, sub-millisecond precise (what a span's times are given as). */
export function nowMs(): number {
  return performance.timeOrigin + performance.now();
}

/** A span of work that outlives its request: started by the request's trace, ended by its owner. */
export class WorkSpan implements WorkTrace {
  readonly context: Context;
  private ended = false;

  constructor(
    private readonly span: Span,
    parent: Context,
  ) {
    this.context = trace.setSpan(parent, span);
  }

  run<T>(fn: () => T): T {
    return context.with(this.context, fn);
  }

  event(name: string, attributes?: TraceAttributes): void {
    if (!this.ended) this.span.addEvent(name, attributes, nowMs());
  }

  end(outcome?: TraceOutcome): void {
    if (this.ended) return;
    this.ended = true;
    try {
      if (outcome?.attributes !== undefined) this.span.setAttributes(outcome.attributes);
      writeEnding(this.span, {
        ...(outcome?.code === undefined ? {} : { code: outcome.code }),
        ...(outcome?.message === undefined ? {} : { message: outcome.message }),
        ...(outcome?.toolError === true && outcome.code === undefined ? { failure: 'tool_error' } : {}),
      });
    } finally {
      this.span.end(nowMs());
    }
  }
}
