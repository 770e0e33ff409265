/**
 * The authenticator contract and the chain that runs authenticators over a request's bearer credential. Every
 * auth middleware is a chain: `authenticate([...])` of several members, `apiKeyAuth()` and `oidcAuth()` of one.
 *
 * - The credential is read from `Authorization: Bearer <token>` only, never from the query string. No header,
 *   another scheme, or `Bearer` with nothing after it is **missing** (a challenge without an `error`, RFC 6750
 *   §3.1); a `Bearer` value that is not one token is **invalid**. Two `Authorization` lines are a malformed
 *   request (400 `invalid_request`): node:http keeps only the first, which a proxy may not have read.
 * - Each member answers `ok` (a principal), `pass` (not its credential) or `refuse` (its credential, refused).
 *   The first member that does not pass decides; when every member passes the credential is **invalid**.
 * - The outcome is recorded on `req.locals.auth`, the principal on `req.locals.principal`. Answers name the
 *   outcome only; what was seen goes to the logger.
 * - `OPTIONS` requests (CORS preflights, which never carry credentials) pass untouched. The body is not read.
 *
 * @see docs/middleware/auth.md
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { authorizationLines, readBearer } from '../../lib/bearer.js';
import { localsOf, sendInternalError } from '../../core/respond.js';
import { isThenable } from '../../core/maybe-promise.js';
import { log } from '../../core/log.js';
import { mountOrderCheck } from '../../core/mount-order.js';
import type { Logger, Middleware, Principal } from '../../core/types.js';
import {
  type ChallengeOptions,
  type Decided,
  recordAuth,
  sendAuthRefusal,
  sendAuthorizationTwice,
} from './challenge.js';

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

/** A middleware that can also serve as a member of an `authenticate` chain. */
export interface AuthMiddleware extends Authenticator {
  (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void): void;
}

/** True for an object that has what the chain calls (so `authenticate([apiKeyAuth])` is caught). */
export function isAuthenticator(v: unknown): v is Authenticator {
  if ((typeof v !== 'object' && typeof v !== 'function') || v === null) return false;
  const a = v as Partial<Authenticator>;
  return typeof a.check === 'function' && typeof a.method === 'string' && typeof a.by === 'string';
}

/** Make sure a promise's rejection is never reported as unhandled, and return it unchanged. */
export function quiet<T>(p: Promise<T>): Promise<T> {
  p.catch(() => undefined);
  return p;
}

interface Chain {
  readonly members: readonly Authenticator[];
  readonly challenge: Readonly<ChallengeOptions>;
  readonly logger: Logger;
  readonly by: string;
}

type Next = (err?: unknown) => void;
type Passed = { method: string; why: string }[];

/** The middleware that runs `members` in order over the request's bearer credential. */
export function chainMiddleware(
  members: readonly Authenticator[],
  challenge: Readonly<ChallengeOptions>,
  logger: Logger,
  by: string,
): Middleware {
  const chain: Chain = { members, challenge, logger, by };
  // Mounted after dispatch(): logged once; a request already answered goes on, any other is still decided.
  const late = mountOrderCheck(by, logger);
  return function authenticateRequest(req, res, next) {
    if (late(req, res)) return next();
    if (req.method === 'OPTIONS') {
      next();
      return;
    }
    try {
      if (authorizationLines(req.rawHeaders) > 1) {
        log(logger, 'warn', `${by}: Authorization sent more than once`, { outcome: 'invalid' });
        sendAuthorizationTwice(req, res, challenge, by);
        return;
      }
      const cred = readBearer(req.headers.authorization);
      if (cred.kind === 'none' || cred.kind === 'other_scheme') {
        log(logger, 'debug', `${by}: no bearer credential`, {
          outcome: 'missing',
          scheme: cred.kind === 'other_scheme' ? cred.scheme : undefined,
        });
        sendAuthRefusal(req, res, challenge, { outcome: 'missing', by });
        return;
      }
      if (cred.kind === 'malformed') {
        log(logger, 'warn', `${by}: malformed bearer credential`, { outcome: 'invalid' });
        sendAuthRefusal(req, res, challenge, { outcome: 'invalid', by });
        return;
      }
      decide(chain, req, res, cred.token, next)?.catch((err: unknown) =>
        sendInternalError(req, res, err, by, logger),
      );
    } catch (err) {
      sendInternalError(req, res, err, by, logger);
    }
  };
}

/**
 * Ask each member in turn from `from`; the first that does not pass decides. Synchronous while the members
 * answer synchronously (API keys); from the first member that answers with a promise, the rest runs after it.
 */
function decide(
  chain: Chain,
  req: IncomingMessage,
  res: ServerResponse,
  token: string,
  next: Next,
  from = 0,
  passed: Passed = [],
): Promise<void> | undefined {
  for (let i = from; i < chain.members.length; i++) {
    const a = chain.members[i]!;
    const d = a.check(token, req);
    if (isThenable(d)) {
      return Promise.resolve(d).then((settled) =>
        apply(chain, req, res, a, settled, next, passed)
          ? decide(chain, req, res, token, next, i + 1, passed)
          : undefined,
      );
    }
    if (!apply(chain, req, res, a, d, next, passed)) return undefined;
  }
  log(chain.logger, 'warn', `${chain.by}: credential not recognized`, { outcome: 'invalid', passed });
  sendAuthRefusal(req, res, chain.challenge, { outcome: 'invalid', by: chain.by });
  return undefined;
}

/** Act on one member's decision; true when it passed (the next member is asked). */
function apply(
  chain: Chain,
  req: IncomingMessage,
  res: ServerResponse,
  a: Authenticator,
  d: AuthDecision,
  next: Next,
  passed: Passed,
): boolean {
  if (d.kind === 'pass') {
    passed.push({ method: a.method, why: d.why });
    return true;
  }
  if (d.kind === 'ok') {
    const locals = localsOf(req);
    locals.principal = d.principal;
    recordAuth(locals, 'ok', a.method);
    next();
    return false;
  }
  log(chain.logger, d.outcome === 'unavailable' ? 'error' : 'warn', `${a.by}: ${d.outcome} credential`, {
    outcome: d.outcome,
    method: a.method,
    why: d.why,
    ...(d.detail ?? {}),
  });
  const decided: Decided = { outcome: d.outcome, method: a.method, by: a.by };
  if (d.scope) decided.scope = d.scope;
  sendAuthRefusal(req, res, chain.challenge, decided);
  return false;
}
