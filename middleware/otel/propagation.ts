/**
 * The caller's trace context from a request's `params._meta`: each W3C key is checked with lib/trace-context.ts
 * and only its canonical re-formatting is handed to the configured propagators (a getter over those strings, never
 * the caller's raw value). When the propagators in use do not read W3C Trace Context or Baggage (none registered,
 * or others), the context is set from the parsed values directly: the `_meta` keys are W3C's by definition.
 * @see docs/middleware/otel.md#context-propagation
 */
import {
  type BaggageEntry,
  type Context,
  type TextMapGetter,
  TraceFlags,
  createTraceState,
  propagation,
  trace,
} from '@opentelemetry/api';
import type { JsonObject } from '../../lib/jsonrpc.js';
import {
  formatBaggage,
  formatTraceparent,
  formatTracestate,
  readTraceMeta,
} from '../../lib/trace-context.js';

/** The getter the propagators read the canonical strings through. */
const GETTER: TextMapGetter<ReadonlyMap<string, string>> = {
  keys: (carrier) => [...carrier.keys()],
  get: (carrier, key) => carrier.get(key),
};

/** The parent a request's `_meta` gives, on top of `ambient`. */
export interface MetaParent {
  /** `ambient` with the caller's span context (and baggage) when `_meta` had them; else `ambient`. */
  readonly context: Context;
  /** Whether `_meta` carried a valid `traceparent` (the parent is then the caller's span). */
  readonly remote: boolean;
}

/** The parent context of a request whose `_meta` is `meta` (see the module comment). */
export function parentFromMeta(meta: JsonObject | undefined, ambient: Context): MetaParent {
  if (meta === undefined) return { context: ambient, remote: false };
  const read = readTraceMeta(meta);
  const tp = read.traceparent.ok ? read.traceparent.value : undefined;
  const bag = read.baggage.ok ? read.baggage.entries : undefined;
  if (tp === undefined && bag === undefined) return { context: ambient, remote: false };
  const carrier = new Map<string, string>();
  let state: string | undefined;
  if (tp !== undefined) {
    carrier.set('traceparent', formatTraceparent(tp));
    if (read.tracestate.ok && read.tracestate.entries.length > 0) {
      state = formatTracestate(read.tracestate.entries);
      carrier.set('tracestate', state);
    }
  }
  if (bag !== undefined) carrier.set('baggage', formatBaggage(bag));
  let ctx = propagation.extract(ambient, carrier, GETTER);
  if (tp !== undefined) {
    const sc = trace.getSpanContext(ctx);
    if (sc === undefined || sc.traceId !== tp.traceId || sc.spanId !== tp.spanId || !sc.isRemote) {
      ctx = trace.setSpanContext(ctx, {
        traceId: tp.traceId,
        spanId: tp.spanId,
        traceFlags: tp.sampled ? TraceFlags.SAMPLED : TraceFlags.NONE,
        isRemote: true,
        ...(state === undefined ? {} : { traceState: createTraceState(state) }),
      });
    }
  }
  if (bag !== undefined && bag.length > 0 && propagation.getBaggage(ctx) === undefined) {
    const entries = new Map<string, BaggageEntry>();
    for (const e of bag) entries.set(e.key, { value: e.value });
    ctx = propagation.setBaggage(ctx, propagation.createBaggage(Object.fromEntries(entries)));
  }
  return { context: ctx, remote: tp !== undefined };
}
