/**
 * Who a principal is for the state kept per caller (the limits' buckets, the listen streams' slots): where its id
 * came from as well as the id, so the API key of user `alice` and an OIDC token with `sub: "alice"` are two
 * callers. Requests without a principal share one key.
 */
import type { Principal } from '../types.js';

/** The key of every request without a principal. No principal's key equals it (theirs are JSON arrays). */
export const ANONYMOUS_KEY = 'anonymous';

const isText = (v: unknown): v is string => typeof v === 'string' && v !== '';

/** Where the principal's id is unique: its `source`, else the authenticator's `method`; `''` without one. */
export function sourceOf(principal: Principal | undefined): string {
  if (principal === undefined || principal === null) return '';
  if (isText(principal.source)) return principal.source;
  return isText(principal.method) ? principal.method : '';
}

/**
 * The per-caller key of `principal`: the JSON array `[method, source, userId]`. JSON quotes and escapes each
 * part, so no id (whatever characters it holds) can spell the key of another method or source.
 */
export function principalKey(principal: Principal | undefined): string {
  const userId = principal?.userId;
  if (!isText(userId)) return ANONYMOUS_KEY;
  const method = isText(principal!.method) ? principal!.method : '';
  return JSON.stringify([method, sourceOf(principal), userId]);
}
