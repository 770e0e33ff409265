/**
 * The challenge side of authentication: the `WWW-Authenticate` options every auth factory takes, and the one
 * writer of an authentication refusal (401 with `invalid_token` or none, 403 `insufficient_scope`, 503).
 *
 * @see docs/middleware/auth.md
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type ChallengeParams, bearerChallenge, isQuotable } from '../../lib/bearer.js';
import { refusal } from '../../lib/errors.js';
import { localsOf, sendRefusal } from '../../core/respond.js';
import { badOption } from '../../core/options.js';
import { TRACE } from '../../core/trace.js';
import type { AuthOutcome, RequestLocals } from '../../core/types.js';

/** The `WWW-Authenticate` parameters a 401 or 403 carries. */
export interface ChallengeOptions {
  /** RFC 9728 metadata URL, sent as `resource_metadata="…"` so clients find the authorization server. */
  resourceMetadataUrl?: string;
  /** `realm="…"`. Default none. */
  realm?: string;
  /** Scopes named in the 401 challenge (`scope="…"`). Default none. */
  scopes?: readonly string[];
}

/** The option names of {@link ChallengeOptions}, for the factories' lists of known options. */
export const CHALLENGE_OPTIONS = ['resourceMetadataUrl', 'realm', 'scopes'] as const;

/** Validate and copy the challenge options of a factory. */
export function resolveChallenge(factory: string, o: ChallengeOptions): ChallengeOptions {
  const out: ChallengeOptions = {};
  if (o.resourceMetadataUrl !== undefined) {
    const v = o.resourceMetadataUrl;
    if (typeof v !== 'string' || !isQuotable(v) || !/^https?:\/\/[^\s"\\]{1,2000}$/i.test(v)) {
      throw badOption(factory, 'resourceMetadataUrl', v, 'an absolute http(s) URL');
    }
    out.resourceMetadataUrl = v;
  }
  if (o.realm !== undefined) {
    if (typeof o.realm !== 'string' || o.realm === '' || !isQuotable(o.realm)) {
      throw badOption(factory, 'realm', o.realm, 'a non-empty string without control characters');
    }
    out.realm = o.realm;
  }
  if (o.scopes !== undefined) out.scopes = scopeList(factory, 'scopes', o.scopes);
  return out;
}

/** Validate a list of OAuth scope tokens (RFC 6749 §3.3: visible ASCII except `"` and `\`, no spaces). */
export function scopeList(factory: string, option: string, v: unknown): string[] {
  if (
    !Array.isArray(v) ||
    !v.every((s) => typeof s === 'string' && /^[\x21\x23-\x5b\x5d-\x7e]{1,256}$/.test(s))
  ) {
    throw badOption(factory, option, v, 'an array of scope tokens (visible ASCII, no spaces or quotes)');
  }
  return [...(v as string[])];
}

/** The answer's message per outcome: the outcome only, never what was seen. */
const MESSAGES: Record<Exclude<AuthOutcome, 'ok'>, string> = {
  missing: 'Authentication required',
  invalid: 'Invalid token',
  expired: 'Token expired',
  forbidden: 'Insufficient permissions',
  unavailable: 'Authentication is temporarily unavailable',
};

/** A refusal decided by the chain. */
export interface Decided {
  outcome: Exclude<AuthOutcome, 'ok'>;
  /** The authenticator that decided; absent when no member recognized the credential. */
  method?: string;
  /** The middleware name in `req.locals.refusal.by`. */
  by: string;
  /** For `forbidden`: the scopes to name in the challenge (the chain's `scopes` otherwise). */
  scope?: readonly string[];
}

/** The authentication decision's event on the request's span, under `otel()`. */
const AUTH_EVENT = 'mcpware.auth';

/**
 * Record the authentication decision: on `req.locals.auth`, and, on a request `otel()` traces, as the event
 * `mcpware.auth` (`outcome`, and `method` when an authenticator decided) on its span. Every decision of an auth
 * middleware goes through here.
 */
export function recordAuth(locals: RequestLocals, outcome: AuthOutcome, method?: string): void {
  locals.auth = method === undefined ? { outcome } : { outcome, method };
  // One property read when the request is not traced.
  const trace = locals[TRACE];
  if (trace !== undefined) trace.event(AUTH_EVENT, method === undefined ? { outcome } : { outcome, method });
}

/** Two `Authorization` lines: a malformed request (RFC 6750 §3.1 `invalid_request`), refused before the body is read. */
const AUTHORIZATION_TWICE = refusal('invalid_request', { message: 'Authorization must be sent once' });

/**
 * Answer a request that carried more than one `Authorization` line: 400, `error="invalid_request"`, no id
 * (the body is not read). Recorded as an `invalid` outcome.
 */
export function sendAuthorizationTwice(
  req: IncomingMessage,
  res: ServerResponse,
  challenge: Readonly<ChallengeOptions>,
  by: string,
): void {
  recordAuth(localsOf(req), 'invalid');
  const params: ChallengeParams = {
    realm: challenge.realm,
    resourceMetadata: challenge.resourceMetadataUrl,
    error: 'invalid_request',
  };
  sendRefusal(req, res, AUTHORIZATION_TWICE, by, {
    id: undefined,
    headers: { 'WWW-Authenticate': bearerChallenge(params) },
  });
}

/** Record the outcome on `req.locals.auth` and answer with the refusal and its challenge. */
export function sendAuthRefusal(
  req: IncomingMessage,
  res: ServerResponse,
  challenge: Readonly<ChallengeOptions>,
  d: Decided,
): void {
  recordAuth(localsOf(req), d.outcome, d.method);
  const message = MESSAGES[d.outcome];
  if (d.outcome === 'unavailable') {
    sendRefusal(req, res, refusal('unavailable', { message }), d.by, { headers: { 'Retry-After': '5' } });
    return;
  }
  const params: ChallengeParams = { realm: challenge.realm, resourceMetadata: challenge.resourceMetadataUrl };
  if (d.outcome === 'forbidden') {
    params.error = 'insufficient_scope';
    const scope = d.scope && d.scope.length > 0 ? d.scope : challenge.scopes;
    if (scope && scope.length > 0) params.scope = scope.join(' ');
    sendRefusal(req, res, refusal('forbidden', { message }), d.by, {
      headers: { 'WWW-Authenticate': bearerChallenge(params) },
    });
    return;
  }
  if (challenge.scopes && challenge.scopes.length > 0) params.scope = challenge.scopes.join(' ');
  if (d.outcome !== 'missing') params.error = 'invalid_token';
  sendRefusal(req, res, refusal('unauthorized', { message }), d.by, {
    headers: { 'WWW-Authenticate': bearerChallenge(params) },
  });
}
