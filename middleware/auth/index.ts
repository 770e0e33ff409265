/**
 * `authenticate([...authenticators])`: one middleware that decides who is asking, before anything else runs.
 *
 * Chain semantics:
 * - The credential is read from `Authorization: Bearer <token>` only; the query string is never looked at.
 *   No header, another scheme (`Basic`...), or `Bearer` with nothing after it → **401, missing** (challenge
 *   without an `error`, RFC 6750 §3.1). A `Bearer` value that is not one token → 401, invalid.
 * - Each authenticator is asked in order, and answers `ok` (a principal), `pass` ("not mine": it does not
 *   recognize the credential) or `refuse` (it recognized it and refuses it: invalid, expired, forbidden, or
 *   unavailable when it cannot decide right now). **The first one that does not pass decides**; the rest are
 *   not asked.
 * - An API-key authenticator recognizes a credential only when it is one of its keys (so a wrong key passes);
 *   an OIDC authenticator recognizes compact JWTs whose (unverified) `iss` is its issuer, so several issuers
 *   can share one chain. If **nobody recognizes** the credential → **401, invalid** (`error="invalid_token"`).
 * - On `ok` the principal goes to `req.locals.principal`; every decision is recorded on `req.locals.auth`
 *   (`{ outcome, method }`) for metrics and audit. Refusals answer with the outcome only (`Invalid token`,
 *   `Token expired`, `Insufficient permissions`); what was seen goes to the logger.
 * - `OPTIONS` requests (CORS preflights, which never carry credentials) pass through untouched. Every other
 *   HTTP method is authenticated: an unauthenticated `GET` gets 401, not whatever the route would say.
 * - The body is not read: a refused request costs no body parsing, and the refusal carries no JSON-RPC `id`
 *   unless an earlier middleware already parsed the request.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { refusal } from '../../lib/errors.js';
import { type ChallengeParams, bearerChallenge, isQuotable, readBearer } from '../../lib/bearer.js';
import { localsOf, sendInternalError, sendRefusal, stderrLogger } from '../internal/respond.js';
import { badOption } from '../internal/options.js';
import { isThenable } from '../internal/maybe-promise.js';
import type { AuthOutcome, Logger, Middleware, Principal } from '../types.js';

/** A refusal outcome an authenticator may give for a credential it recognized. */
export type RefuseOutcome = 'invalid' | 'expired' | 'forbidden' | 'unavailable';

/** What an authenticator says about a credential. */
export type AuthDecision =
  | { readonly kind: 'ok'; readonly principal: Principal }
  /** Not mine: the next authenticator is asked. `why` goes to the log only. */
  | { readonly kind: 'pass'; readonly why: string }
  | {
      readonly kind: 'refuse';
      readonly outcome: RefuseOutcome;
      /** A stable word for the log, e.g. `wrong_audience`, `ERR_JWT_EXPIRED`. Never sent to the client. */
      readonly why: string;
      /** What was seen (claims, expected audience...), for the log only. */
      readonly detail?: Readonly<Record<string, unknown>>;
      /** For `forbidden`: the scopes to name in the `insufficient_scope` challenge. */
      readonly scope?: readonly string[];
    };

/** One way to authenticate a bearer credential. `apiKeyAuth()` and `oidcAuth()` return middlewares that are also authenticators. */
export interface Authenticator {
  /** Recorded as `principal.method` and `req.locals.auth.method`: `api-key`, `oidc`... */
  readonly method: string;
  /** The middleware name used in `req.locals.refusal.by` and log lines: `apiKeyAuth`, `oidcAuth`... */
  readonly by: string;
  /** Settles when the authenticator can decide (OIDC: discovery and JWKS fetched). Never rejects unhandled. */
  readonly ready: Promise<void>;
  /** The authenticator's own challenge settings, used when it runs alone or is first in a chain. */
  readonly challenge: Readonly<ChallengeOptions>;
  /**
   * Decide on a bearer token. Must not throw for a bad credential (a throw becomes a generic 500); may be
   * synchronous.
   */
  check(token: string, req: IncomingMessage): AuthDecision | Promise<AuthDecision>;
}

/** A middleware that can also serve as a member of an {@link authenticate} chain. */
export interface AuthMiddleware extends Authenticator {
  (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void): void;
}

/** The `WWW-Authenticate` parameters a 401 or 403 carries. */
export interface ChallengeOptions {
  /** RFC 9728 metadata URL, sent as `resource_metadata="…"` so clients find the authorization server. */
  resourceMetadataUrl?: string;
  /** `realm="…"`. Default none. */
  realm?: string;
  /** Scopes named in the 401 challenge (`scope="…"`). Default none. */
  scopes?: readonly string[];
}

export interface AuthenticateOptions extends ChallengeOptions {
  /** Where refusals are logged (with what was seen) and outages reported. Default: stderr. */
  logger?: Logger;
}

const MESSAGES: Record<Exclude<AuthOutcome, 'ok'>, string> = {
  missing: 'Authentication required',
  invalid: 'Invalid token',
  expired: 'Token expired',
  forbidden: 'Insufficient permissions',
  unavailable: 'Authentication is temporarily unavailable',
};

/** Throw a TypeError for an option name nobody reads: a typo must not silently mean "no protection". */
export function checkKnownOptions(factory: string, opts: object, known: readonly string[]): void {
  for (const k of Object.keys(opts)) {
    if (!known.includes(k)) {
      throw new TypeError(`${factory}: unknown option "${k}" (known: ${known.join(', ')})`);
    }
  }
}

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

function validateLogger(factory: string, logger: unknown): Logger {
  if (logger === undefined) return stderrLogger;
  if (typeof logger !== 'object' || logger === null || typeof (logger as Logger).error !== 'function') {
    throw badOption(
      factory,
      'logger',
      logger,
      'an object with an error() method (winston, pino, console...)',
    );
  }
  return logger as Logger;
}

/** Make sure a promise's rejection is never reported as unhandled, and return it unchanged. */
export function quiet<T>(p: Promise<T>): Promise<T> {
  p.catch(() => undefined);
  return p;
}

function isAuthenticator(v: unknown): v is Authenticator {
  if ((typeof v !== 'object' && typeof v !== 'function') || v === null) return false;
  const a = v as Partial<Authenticator>;
  return typeof a.check === 'function' && typeof a.method === 'string' && typeof a.by === 'string';
}

/** Call a logger method without letting a broken logger take the answer down. */
function log(
  logger: Logger,
  level: 'error' | 'warn' | 'debug',
  message: string,
  meta: Record<string, unknown>,
): void {
  try {
    const fn =
      level === 'error' ? logger.error : level === 'warn' ? (logger.warn ?? logger.error) : logger.debug;
    fn?.call(logger, message, meta);
  } catch {
    // ignore
  }
}

interface Decided {
  outcome: Exclude<AuthOutcome, 'ok'>;
  method?: string;
  by: string;
  scope?: readonly string[];
}

/**
 * The shared engine: run `members` in order over the request's bearer credential. Used by {@link authenticate}
 * and by each factory for its standalone middleware (a chain of one).
 */
export function chainMiddleware(
  members: readonly Authenticator[],
  challenge: Readonly<ChallengeOptions>,
  logger: Logger,
  by: string,
): Middleware {
  const refuse = (req: IncomingMessage, res: ServerResponse, d: Decided): void => {
    const locals = localsOf(req);
    locals.auth = d.method === undefined ? { outcome: d.outcome } : { outcome: d.outcome, method: d.method };
    const message = MESSAGES[d.outcome];
    const params: ChallengeParams = {
      realm: challenge.realm,
      resourceMetadata: challenge.resourceMetadataUrl,
    };
    if (d.outcome === 'unavailable') {
      sendRefusal(req, res, refusal('unavailable', { message }), d.by, { headers: { 'Retry-After': '5' } });
      return;
    }
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
  };

  /**
   * Ask each member in turn; the first that does not pass decides. Synchronous while the members answer
   * synchronously (API keys); from the first member that answers with a promise, the rest runs after it.
   */
  const decide = (
    req: IncomingMessage,
    res: ServerResponse,
    token: string,
    next: (err?: unknown) => void,
    from = 0,
    passed: { method: string; why: string }[] = [],
  ): Promise<void> | undefined => {
    for (let i = from; i < members.length; i++) {
      const a = members[i]!;
      const d = a.check(token, req);
      if (isThenable(d)) {
        return Promise.resolve(d).then((settled) =>
          apply(req, res, a, settled, next, passed)
            ? decide(req, res, token, next, i + 1, passed)
            : undefined,
        );
      }
      if (!apply(req, res, a, d, next, passed)) return undefined;
    }
    log(logger, 'warn', `${by}: credential not recognized`, { outcome: 'invalid', passed });
    refuse(req, res, { outcome: 'invalid', by });
    return undefined;
  };

  /** Act on one member's decision; true when it passed (the next member is asked). */
  const apply = (
    req: IncomingMessage,
    res: ServerResponse,
    a: Authenticator,
    d: AuthDecision,
    next: (err?: unknown) => void,
    passed: { method: string; why: string }[],
  ): boolean => {
    if (d.kind === 'pass') {
      passed.push({ method: a.method, why: d.why });
      return true;
    }
    if (d.kind === 'ok') {
      const locals = localsOf(req);
      locals.principal = d.principal;
      locals.auth = { outcome: 'ok', method: a.method };
      next();
      return false;
    }
    log(logger, d.outcome === 'unavailable' ? 'error' : 'warn', `${a.by}: ${d.outcome} credential`, {
      outcome: d.outcome,
      method: a.method,
      why: d.why,
      ...(d.detail ?? {}),
    });
    const decided: Decided = { outcome: d.outcome, method: a.method, by: a.by };
    if (d.scope) decided.scope = d.scope;
    refuse(req, res, decided);
    return false;
  };

  return function authenticateRequest(req, res, next) {
    if (req.method === 'OPTIONS') {
      next();
      return;
    }
    try {
      const cred = readBearer(req.headers.authorization);
      if (cred.kind === 'none' || cred.kind === 'other_scheme') {
        log(logger, 'debug', `${by}: no bearer credential`, {
          outcome: 'missing',
          scheme: cred.kind === 'other_scheme' ? cred.scheme : undefined,
        });
        refuse(req, res, { outcome: 'missing', by });
        return;
      }
      if (cred.kind === 'malformed') {
        log(logger, 'warn', `${by}: malformed bearer credential`, { outcome: 'invalid' });
        refuse(req, res, { outcome: 'invalid', by });
        return;
      }
      decide(req, res, cred.token, next)?.catch((err: unknown) =>
        sendInternalError(req, res, err, by, logger),
      );
    } catch (err) {
      sendInternalError(req, res, err, by, logger);
    }
  };
}

/** The middleware {@link authenticate} returns: also exposes readiness and its members. */
export interface AuthenticateMiddleware extends Middleware {
  /** Settles when every member is ready; rejects when one failed to start (never unhandled). */
  readonly ready: Promise<void>;
  readonly authenticators: readonly Authenticator[];
}

/**
 * Combine authenticators into one middleware: the first that recognizes the credential decides (see the
 * module comment). Challenge options default to those of the first member that has them.
 *
 * @example
 * app.use('/mcp', authenticate([apiKeyAuth({ keys }), oidcAuth({ issuer, audience })], { resourceMetadataUrl }));
 */
export function authenticate(
  authenticators: readonly Authenticator[],
  options: AuthenticateOptions = {},
): AuthenticateMiddleware {
  const factory = 'authenticate';
  if (
    !Array.isArray(authenticators) ||
    authenticators.length === 0 ||
    !authenticators.every(isAuthenticator)
  ) {
    throw new TypeError(
      `${factory}: the first argument must be a non-empty array of authenticators (apiKeyAuth(...), oidcAuth(...)); ` +
        'did you pass the factory instead of calling it?',
    );
  }
  if (typeof options !== 'object' || options === null)
    throw badOption(factory, 'options', options, 'an object');
  checkKnownOptions(factory, options, ['resourceMetadataUrl', 'realm', 'scopes', 'logger']);
  const own = resolveChallenge(factory, options);
  const challenge: ChallengeOptions = {};
  const pick = <K extends keyof ChallengeOptions>(k: K): void => {
    const v = own[k] ?? authenticators.find((a) => a.challenge[k] !== undefined)?.challenge[k];
    if (v !== undefined) challenge[k] = v;
  };
  pick('resourceMetadataUrl');
  pick('realm');
  pick('scopes');
  const logger = validateLogger(factory, options.logger);
  const members = [...authenticators];
  const mw = chainMiddleware(members, challenge, logger, factory);
  const ready = quiet(Promise.all(members.map((a) => a.ready)).then(() => undefined));
  return Object.assign(mw, { ready, authenticators: members });
}

export { validateLogger };
