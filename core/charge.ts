/**
 * Work charged to the caller's budget. `charge(req, ms)` of mcpware/limits and a handler's `ctx.charge(ms)` both
 * add to `req.locals.chargedMs`, which limits() reads when the response closes.
 */
import type { RequestLocals } from './types.js';

/** Add `ms` to the request's charged work (several calls add up); a non-number or non-finite value is ignored. */
export function addCharge(locals: RequestLocals, ms: number): void {
  if (typeof ms !== 'number' || !Number.isFinite(ms)) return;
  locals.chargedMs = (locals.chargedMs ?? 0) + ms;
}
