/**
 * The request's outbound transforms (`req.locals.outbound`, e.g. redaction), applied in order to each result and
 * notification before it is written.
 *
 * @see docs/middleware/dispatch.md
 */
import { isThenable } from './maybe-promise.js';
import type { OutboundKind, OutboundTransform, RequestLocals } from './types.js';

/**
 * `value` through every transform. Synchronous while the transforms are (a throw is thrown); from the first one
 * that returns a promise on, a promise.
 */
// see docs/performance.md#synchronous-answers
export function applyOutbound(
  locals: RequestLocals,
  value: unknown,
  method: string,
  kind: OutboundKind,
): unknown {
  const transforms = locals.outbound;
  if (!Array.isArray(transforms) || transforms.length === 0) return value;
  return applyFrom(transforms, 0, value, { method, kind });
}

function applyFrom(
  transforms: readonly unknown[],
  from: number,
  value: unknown,
  info: { method: string; kind: OutboundKind },
): unknown {
  let v = value;
  for (let i = from; i < transforms.length; i++) {
    const t = transforms[i];
    if (typeof t !== 'function') continue;
    v = (t as OutboundTransform)(v, info);
    if (isThenable(v))
      return Promise.resolve(v).then((settled) => applyFrom(transforms, i + 1, settled, info));
  }
  return v;
}
