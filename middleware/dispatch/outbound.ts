/**
 * The request's outbound transforms (`req.locals.outbound`, e.g. redaction), applied in order to each result and
 * notification before it is written.
 *
 * @see docs/middleware/dispatch.md
 */
import { isThenable } from '../internal/maybe-promise.js';
import type { OutboundTransform, RequestLocals } from '../types.js';

/**
 * `value` through every transform. Synchronous while the transforms are (a throw is thrown); from the first one
 * that returns a promise on, a promise.
 */
// see docs/performance.md#synchronous-answers
export function applyOutbound(
  locals: RequestLocals,
  value: unknown,
  method: string,
  kind: 'result' | 'notification',
): unknown {
  const transforms: readonly unknown[] = Array.isArray(locals.outbound) ? locals.outbound : [];
  const from = (i: number, v: unknown): unknown => {
    for (; i < transforms.length; i++) {
      const t = transforms[i];
      if (typeof t !== 'function') continue;
      v = (t as OutboundTransform)(v, { method, kind });
      if (isThenable(v)) return Promise.resolve(v).then((settled) => from(i + 1, settled));
    }
    return v;
  };
  return from(0, value);
}
