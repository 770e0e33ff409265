/**
 * Who a principal is, for the state kept per caller (the limits' buckets, the listen streams' slots, the
 * principal an input-required request state is bound to): where its id came from as well as the id, so the API
 * key of user `alice` and an OIDC token with `sub: "alice"` are two callers. Requests without a principal share
 * one key. Pure: no I/O.
 */

/** The members of a principal the key is made of. */
export interface PrincipalIdentity {
  readonly userId?: unknown;
  /** The authenticator that made it (`api-key`, `oidc`...). */
  readonly method?: unknown;
  /** Where `userId` is unique (`api-key`, or the token's issuer). */
  readonly source?: unknown;
}

/** The key of every request without a principal. No principal's key equals it (theirs are JSON arrays). */
export const ANONYMOUS_KEY = 'anonymous';

const isText = (v: unknown): v is string => typeof v === 'string' && v !== '';

/** Where the principal's id is unique: its `source`, else the authenticator's `method`; `''` without one. */
export function principalSource(principal: PrincipalIdentity | undefined): string {
  if (principal === undefined || principal === null) return '';
  if (isText(principal.source)) return principal.source;
  return isText(principal.method) ? principal.method : '';
}

/** Keys of frozen principals (an API key's principal is one frozen object shared by its requests). */
const FROZEN_KEYS = new WeakMap<object, string>();

/**
 * The per-caller key of `principal`: the JSON array `[method, source, userId]`, or {@link ANONYMOUS_KEY}
 * without a `userId`. JSON quotes and escapes each part, so no id (whatever characters it holds) can spell the
 * key of another method or source. A frozen principal's key is worked out once.
 */
export function principalKey(principal: PrincipalIdentity | undefined): string {
  if (principal === undefined || principal === null || typeof principal !== 'object') return ANONYMOUS_KEY;
  const known = FROZEN_KEYS.get(principal);
  if (known !== undefined) return known;
  const key = keyOf(principal);
  if (Object.isFrozen(principal)) FROZEN_KEYS.set(principal, key);
  return key;
}

function keyOf(principal: PrincipalIdentity): string {
  const userId = principal.userId;
  if (!isText(userId)) return ANONYMOUS_KEY;
  const method = isText(principal.method) ? principal.method : '';
  return JSON.stringify([method, principalSource(principal), userId]);
}
