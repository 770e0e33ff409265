/**
 * The token check of `oidcAuth`: signature against the issuer's keys with an algorithm allow-list (`none` and
 * HMAC never verify), `iss`, `exp` (required), `nbf`, the audience per RFC 8707, `sub` present, then
 * `requiredRoles` (any of, over roles ∪ groups) and `requiredScopes` (all of).
 *
 * A token that is not a JWT, or names another issuer, passes (another member of the chain may know it). What
 * was seen goes into the decision's `detail` for the log, never the whole payload and never the answer.
 *
 * @see docs/middleware/oidc-auth.md
 */
import type { IncomingMessage } from 'node:http';
import { type JWTPayload, type JWTVerifyGetKey, errors, jwtVerify } from 'jose';
import { checkAudience, hasAnyRole, identityOf, missingScopes, peekJwt } from '../../lib/oidcclaims.js';
import { escapeIdentity } from '../../lib/sanitize.js';
import type { AuthDecision } from '../auth/chain.js';
import type { Principal } from '../../core/types.js';
import { clipValue } from './errors.js';
import type { Discovery } from './discovery.js';
import { KeysUnavailable } from './keys.js';
import { OIDC_METHOD, type VerifyConfig } from './options.js';

type Seen = Record<string, unknown>;

/** Longest subject (code points) a log line shows; a longer one ends with a digest of the whole. */
const SUB_CAP = 160;

/**
 * A subject as a log line shows it: escaped as the audit shows principals (lib/sanitize.ts `escapeIdentity`),
 * so ` victim` and `victim` never read alike; anything but a string is clipped.
 */
function shownSub(v: unknown): unknown {
  return typeof v === 'string' ? escapeIdentity(v, SUB_CAP) : clipValue(v);
}

/** The refusal for an error thrown by `jwtVerify`; anything jose did not throw is rethrown (a 500). */
function refusalOf(err: unknown, seen: Seen): AuthDecision {
  if (err instanceof KeysUnavailable) {
    return {
      kind: 'refuse',
      outcome: 'unavailable',
      why: 'jwks_unavailable',
      detail: { ...seen, error: err.reason },
    };
  }
  if (err instanceof errors.JWTExpired) {
    return {
      kind: 'refuse',
      outcome: 'expired',
      why: err.code,
      detail: { ...seen, claim: err.claim, reason: err.reason },
    };
  }
  if (err instanceof errors.JWTClaimValidationFailed) {
    return {
      kind: 'refuse',
      outcome: 'invalid',
      why: err.code,
      detail: { ...seen, claim: err.claim, reason: err.reason },
    };
  }
  if (err instanceof errors.JOSEError)
    return { kind: 'refuse', outcome: 'invalid', why: err.code, detail: seen };
  throw err;
}

/** The checks after the signature: audience, identity, roles, scopes; the principal when they all pass. */
function decideClaims(config: VerifyConfig, payload: JWTPayload, seen: Seen): AuthDecision {
  const { audience, clientId, requiredRoles, requiredScopes } = config;
  const aud = checkAudience(payload, { audience, clientId });
  if (!aud.ok) {
    return {
      kind: 'refuse',
      outcome: 'invalid',
      why: aud.reason,
      detail: {
        ...seen,
        aud: clipValue(payload.aud),
        azp: clipValue(payload.azp),
        expected: audience ?? clientId,
      },
    };
  }
  const id = identityOf(payload, config.mapping);
  if (!id.ok)
    return { kind: 'refuse', outcome: 'invalid', why: id.reason, detail: { ...seen, claim: id.claim } };
  if (!hasAnyRole(id, requiredRoles)) {
    return {
      kind: 'refuse',
      outcome: 'forbidden',
      why: 'missing_role',
      detail: {
        sub: shownSub(id.userId),
        roles: clipValue(id.roles),
        groups: clipValue(id.groups),
        requiredRoles,
      },
    };
  }
  if (missingScopes(id.scopes, requiredScopes).length > 0) {
    return {
      kind: 'refuse',
      outcome: 'forbidden',
      why: 'missing_scope',
      detail: { sub: shownSub(id.userId), scopes: clipValue(id.scopes), requiredScopes },
      scope: requiredScopes,
    };
  }
  const principal: Principal = {
    userId: id.userId,
    groups: Object.freeze(id.groups),
    roles: Object.freeze(id.roles),
    method: OIDC_METHOD,
    // The issuer vouches for `sub`: a subject is unique within its issuer only.
    source: config.issuer,
    claims: Object.freeze({ ...payload }),
  };
  if (id.email !== undefined) principal.email = id.email;
  return { kind: 'ok', principal };
}

/** The authenticator's `check`: decide on one bearer token. */
export function createVerifier(
  config: VerifyConfig,
  discovery: Pick<Discovery, 'phase' | 'whenReady'>,
  getKey: JWTVerifyGetKey,
): (token: string, req: IncomingMessage) => Promise<AuthDecision> {
  return async function check(token) {
    const peek = peekJwt(token);
    if (!peek.ok) return { kind: 'pass', why: 'not_a_jwt' };
    if (peek.payload.iss !== config.issuer) return { kind: 'pass', why: 'other_issuer' };
    const seen = {
      alg: clipValue(peek.header.alg),
      kid: clipValue(peek.header.kid),
      sub: shownSub(peek.payload.sub),
    };
    if (!(await discovery.whenReady())) {
      const why = `not_ready:${discovery.phase}`;
      return { kind: 'refuse', outcome: 'unavailable', why, detail: { issuer: config.issuer } };
    }
    let payload: JWTPayload;
    try {
      payload = (await jwtVerify(token, getKey, config.jwtVerify)).payload;
    } catch (err) {
      return refusalOf(err, seen);
    }
    return decideClaims(config, payload, seen);
  };
}
