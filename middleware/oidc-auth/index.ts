/**
 * `oidcAuth({ issuer, audience, clientId, requiredRoles })`: OIDC / OAuth 2.1 access tokens (JWT) verified
 * with jose.
 *
 * Start-up: the factory stays synchronous; it starts OIDC discovery and the JWKS fetch at once, and exposes
 * `ready` (a promise: await it before listening). An unreachable or inconsistent issuer rejects `ready` and
 * logs an error (or retries, with `retry`); it never fails silently. Requests that arrive while the first
 * attempt is running wait for it (at most `readyTimeoutMs`); after a failure they get 503.
 *
 * Per request nothing is fetched, except when a token names an unknown `kid` (key rotation; jose refetches at
 * most once per `jwksCooldownMs`) or the key set is older than `jwksCacheMaxAgeMs`. When the identity
 * provider cannot be reached, the last good key set keeps verifying tokens for `jwksStaleIfErrorMs` more;
 * a token that no usable key can decide (unknown `kid` during an outage, or keys too old) is a 503, not a 401.
 *
 * Checks: signature against the issuer's JWKS with an algorithm allow-list (`none` and HMAC never verify),
 * `iss`, `exp` (required), `nbf`, audience per RFC 8707 (see `checkAudience`), `sub` present, then
 * `requiredRoles` (any-of, over roles ∪ groups) and `requiredScopes` (all-of) → 403 `insufficient_scope`.
 * Answers carry only the outcome; what was seen goes to the logger (never the whole payload).
 */
import type { IncomingMessage } from 'node:http';
import {
  type JSONWebKeySet,
  type JWTPayload,
  type JWTVerifyGetKey,
  type JWTVerifyOptions,
  type RemoteJWKSetOptions,
  createLocalJWKSet,
  createRemoteJWKSet,
  customFetch,
  errors,
  jwksCache,
  jwtVerify,
} from 'jose';
import {
  type ClaimPath,
  checkAudience,
  defaultRolesClaims,
  hasAnyRole,
  identityOf,
  missingScopes,
  peekJwt,
} from '../../lib/oidcclaims.js';
import {
  type AuthDecision,
  type AuthMiddleware,
  type ChallengeOptions,
  chainMiddleware,
  checkKnownOptions,
  quiet,
  resolveChallenge,
  scopeList,
  validateLogger,
} from '../auth/index.js';
import { badOption } from '../internal/options.js';
import type { Logger, Principal } from '../types.js';

export const OIDC_METHOD = 'oidc';

/** Asymmetric JWS algorithms jose verifies with a public key from a JWKS. */
export const ASYMMETRIC_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
] as const;

export interface OidcRetryOptions {
  /** Attempts in all, the first included. Default unlimited. */
  attempts?: number;
  /** Delay after the first failure, doubled after each one. Default 1000 ms. */
  minDelayMs?: number;
  /** Longest delay between attempts. Default 30000 ms. */
  maxDelayMs?: number;
}

export interface OidcAuthOptions extends ChallengeOptions {
  /** The issuer URL, exactly as the tokens' `iss` and the discovery document's `issuer` spell it. Required. */
  issuer: string;
  /**
   * This server's resource identifier (RFC 8707), e.g. `https://mcp.example.com/mcp`. With it, `aud` must
   * contain it (scheme and host compared case-insensitively, trailing slash ignored) and `azp` is ignored.
   */
  audience?: string | readonly string[];
  /** The client id: without `audience`, `aud` must contain it or `azp` must equal it. Also names the client roles. */
  clientId?: string;
  /** Any one of these, found in roles ∪ groups, is enough. Default none (any valid token). */
  requiredRoles?: readonly string[];
  /** All of these must be in the token's `scope` (or `scp`). Default none. */
  requiredScopes?: readonly string[];
  /** Claims read as roles. Default `roles`, `realm_access.roles`, `resource_access.<clientId>.roles`. */
  rolesClaims?: readonly ClaimPath[];
  /** The claim read as groups (a leading `/` is stripped). Default `groups`. */
  groupsClaim?: ClaimPath;
  /** Accepted JWS algorithms. Default every asymmetric one; `none` and `HS*` are refused. */
  algorithms?: readonly string[];
  /** Clock skew allowed on `exp` and `nbf`, in seconds. Default 5. */
  clockTolerance?: number;
  /** Required `typ` header, e.g. `at+jwt` (RFC 9068) to refuse ID tokens. Default not checked. */
  typ?: string;
  /** Timeout of the discovery and JWKS requests. Default 5000 ms. */
  fetchTimeoutMs?: number;
  /** After a JWKS fetch, an unknown `kid` triggers no new fetch for this long. Default 30000 ms (jose's). */
  jwksCooldownMs?: number;
  /** Keys older than this are refetched before use. Default 600000 ms (jose's). */
  jwksCacheMaxAgeMs?: number;
  /** When a refetch fails, the last good keys stay usable this much longer. Default 3600000 ms; 0 disables. */
  jwksStaleIfErrorMs?: number;
  /** How long a request waits for start-up before a 503. Default 5000 ms. */
  readyTimeoutMs?: number;
  /** Retry start-up instead of failing: `true` (unlimited, 1 s doubling to 30 s) or options. Default `false`. */
  retry?: boolean | OidcRetryOptions;
  /** Allow a plain-http issuer or JWKS that is not on loopback. Default `false`. */
  allowHttp?: boolean;
  /** The fetch used for discovery and JWKS (proxies, metrics). Default the global `fetch`. */
  fetch?: typeof fetch;
  /** Where refusals, outages and start-up failures go. Default: stderr. */
  logger?: Logger;
}

export type OidcPhase = 'starting' | 'retrying' | 'ready' | 'failed' | 'closed';

export interface OidcStatus {
  phase: OidcPhase;
  /** The JWKS URL found by discovery. */
  jwksUri?: string;
  /** Last successful JWKS fetch (epoch ms). */
  jwksFetchedAt?: number;
  /** True while the identity provider cannot be reached and stale keys are in use. */
  outage: boolean;
}

export interface OidcAuthMiddleware extends AuthMiddleware {
  /** Resolves when discovery and the first JWKS fetch succeeded; rejects when start-up failed. */
  readonly ready: Promise<void>;
  status(): OidcStatus;
  /** Stop start-up retries (and make `ready` reject if it has not settled). */
  close(): void;
}

const KNOWN = [
  'issuer',
  'audience',
  'clientId',
  'requiredRoles',
  'requiredScopes',
  'rolesClaims',
  'groupsClaim',
  'algorithms',
  'clockTolerance',
  'typ',
  'fetchTimeoutMs',
  'jwksCooldownMs',
  'jwksCacheMaxAgeMs',
  'jwksStaleIfErrorMs',
  'readyTimeoutMs',
  'retry',
  'allowHttp',
  'fetch',
  'logger',
  'resourceMetadataUrl',
  'realm',
  'scopes',
];

/** Thrown by the key resolver when no usable key set can be had: the IdP's fault, not the caller's. */
class KeysUnavailable extends Error {
  constructor(readonly reason: string) {
    super(`signing keys unavailable: ${reason}`);
    this.name = 'KeysUnavailable';
  }
}

function isLoopback(u: URL): boolean {
  const h = u.hostname;
  return h === 'localhost' || h === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/** True when the URL may be fetched: https, or http on loopback (or anywhere with `allowHttp`). */
function fetchableUrl(u: URL, allowHttp: boolean): boolean {
  if (u.username !== '' || u.password !== '') return false;
  return u.protocol === 'https:' || (u.protocol === 'http:' && (allowHttp || isLoopback(u)));
}

function clip(v: unknown): unknown {
  if (typeof v === 'string') return v.length > 128 ? v.slice(0, 128) + '…' : v;
  if (Array.isArray(v)) return v.slice(0, 10).map(clip);
  if (typeof v === 'number' || typeof v === 'boolean' || v === null || v === undefined) return v;
  return `[${typeof v}]`;
}

/** A short description of a fetch or start-up failure for the log. */
function describe(err: unknown): string {
  if (err instanceof KeysUnavailable) return err.reason;
  // Duck-typed: errors thrown by fetch (undici) may come from another realm, where `instanceof Error` fails.
  if (typeof err === 'object' && err !== null && typeof (err as Error).message === 'string') {
    const e = err as Error & { code?: unknown; cause?: { code?: unknown } };
    if (e.name === 'TimeoutError' || e.code === 'ERR_JWKS_TIMEOUT') return 'timed out';
    const code = e.cause && typeof e.cause.code === 'string' ? ` (${e.cause.code})` : '';
    return `${e.message}${code}`;
  }
  return String(err);
}

/** Errors from the key resolver that are about the token (its `alg`/`kid`), not about the IdP. */
function isTokenKeyError(err: unknown): boolean {
  return (
    err instanceof errors.JWKSNoMatchingKey ||
    err instanceof errors.JWKSMultipleMatchingKeys ||
    err instanceof errors.JOSENotSupported
  );
}

function nonNegativeInt(factory: string, name: string, v: unknown, dflt: number): number {
  if (v === undefined) return dflt;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0)
    throw badOption(factory, name, v, 'a non-negative integer (milliseconds)');
  return v;
}

function nameArray(factory: string, name: string, v: unknown): string[] {
  if (!Array.isArray(v) || !v.every((s) => typeof s === 'string' && s !== '' && s.length <= 256)) {
    throw badOption(factory, name, v, 'an array of non-empty strings');
  }
  return [...(v as string[])];
}

function claimPath(factory: string, name: string, v: unknown): ClaimPath {
  if (typeof v === 'string' && v !== '') return v;
  if (Array.isArray(v) && v.length > 0 && v.every((s) => typeof s === 'string' && s !== ''))
    return [...(v as string[])];
  throw badOption(factory, name, v, 'a claim name or a non-empty array of member names (a path)');
}

function discoveryUrl(issuer: string): string {
  let end = issuer.length;
  while (end > 0 && issuer.charCodeAt(end - 1) === 0x2f) end--;
  return issuer.slice(0, end) + '/.well-known/openid-configuration';
}

function sleep(ms: number, cancel: { fn?: () => void }): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    // A retry loop must not keep a process alive that has nothing else to do.
    t.unref?.();
    cancel.fn = () => {
      clearTimeout(t);
      resolve();
    };
  });
}

/**
 * OIDC bearer-token authentication. Returns a middleware that is also an authenticator for
 * {@link authenticate}. Await `ready` before accepting traffic.
 *
 * @example
 * const oidc = oidcAuth({ issuer: 'https://idp.example.com/realms/acme', audience: 'https://mcp.example.com/mcp' });
 * await oidc.ready;
 * app.use('/mcp', oidc);
 */
export function oidcAuth(options: OidcAuthOptions): OidcAuthMiddleware {
  const factory = 'oidcAuth';
  if (typeof options !== 'object' || options === null)
    throw badOption(factory, 'options', options, 'an object with "issuer"');
  checkKnownOptions(factory, options, KNOWN);

  const allowHttp = options.allowHttp ?? false;
  if (typeof allowHttp !== 'boolean') throw badOption(factory, 'allowHttp', allowHttp, 'a boolean');

  const issuer = options.issuer;
  let issuerUrl: URL | undefined;
  try {
    issuerUrl = typeof issuer === 'string' ? new URL(issuer) : undefined;
  } catch {
    issuerUrl = undefined;
  }
  if (!issuerUrl || !fetchableUrl(issuerUrl, allowHttp) || issuerUrl.search !== '' || issuerUrl.hash !== '') {
    throw badOption(
      factory,
      'issuer',
      issuer,
      'an https URL without query or fragment (http only on loopback or with allowHttp)',
    );
  }

  let audience: string[] | undefined;
  if (options.audience !== undefined) {
    audience =
      typeof options.audience === 'string'
        ? [options.audience]
        : nameArray(factory, 'audience', options.audience);
    if (audience.length === 0 || audience.some((a) => a === ''))
      throw badOption(factory, 'audience', options.audience, 'a non-empty string or array of strings');
  }
  let clientId: string | undefined;
  if (options.clientId !== undefined) {
    if (typeof options.clientId !== 'string' || options.clientId === '')
      throw badOption(factory, 'clientId', options.clientId, 'a non-empty string');
    clientId = options.clientId;
  }
  if (audience === undefined && clientId === undefined) {
    throw new TypeError(
      `${factory}: set "audience" (this server's resource URI, RFC 8707) or "clientId": a token must be checked ` +
        'for having been issued to this server',
    );
  }
  const requiredRoles =
    options.requiredRoles === undefined ? [] : nameArray(factory, 'requiredRoles', options.requiredRoles);
  const requiredScopes =
    options.requiredScopes === undefined ? [] : scopeList(factory, 'requiredScopes', options.requiredScopes);
  let rolesClaims: ClaimPath[];
  if (options.rolesClaims === undefined) rolesClaims = defaultRolesClaims(clientId);
  else {
    if (!Array.isArray(options.rolesClaims))
      throw badOption(factory, 'rolesClaims', options.rolesClaims, 'an array of claim names or paths');
    rolesClaims = options.rolesClaims.map((p, i) => claimPath(factory, `rolesClaims[${i}]`, p));
  }
  const groupsClaim =
    options.groupsClaim === undefined ? 'groups' : claimPath(factory, 'groupsClaim', options.groupsClaim);

  let algorithms: string[] = [...ASYMMETRIC_ALGORITHMS];
  if (options.algorithms !== undefined) {
    algorithms = nameArray(factory, 'algorithms', options.algorithms);
    for (const a of algorithms) {
      if (a.toLowerCase() === 'none' || /^HS\d{3}$/i.test(a)) {
        throw badOption(
          factory,
          'algorithms',
          options.algorithms,
          `asymmetric algorithms only ("${a}" would let a token verify without the issuer's private key)`,
        );
      }
      if (!(ASYMMETRIC_ALGORITHMS as readonly string[]).includes(a)) {
        throw badOption(
          factory,
          'algorithms',
          options.algorithms,
          `a list drawn from ${ASYMMETRIC_ALGORITHMS.join(', ')}`,
        );
      }
    }
    if (algorithms.length === 0)
      throw badOption(factory, 'algorithms', options.algorithms, 'a non-empty list');
  }
  let clockTolerance = 5;
  if (options.clockTolerance !== undefined) {
    const c = options.clockTolerance;
    if (typeof c !== 'number' || !Number.isFinite(c) || c < 0 || c > 3600)
      throw badOption(factory, 'clockTolerance', c, 'a number of seconds between 0 and 3600');
    clockTolerance = c;
  }
  let typ: string | undefined;
  if (options.typ !== undefined) {
    if (typeof options.typ !== 'string' || options.typ === '')
      throw badOption(factory, 'typ', options.typ, 'a non-empty string such as "at+jwt"');
    typ = options.typ;
  }
  const fetchTimeoutMs = nonNegativeInt(factory, 'fetchTimeoutMs', options.fetchTimeoutMs, 5000);
  const cooldownMs = nonNegativeInt(factory, 'jwksCooldownMs', options.jwksCooldownMs, 30_000);
  let cacheMaxAgeMs = 600_000;
  if (options.jwksCacheMaxAgeMs === Infinity) cacheMaxAgeMs = Infinity;
  else cacheMaxAgeMs = nonNegativeInt(factory, 'jwksCacheMaxAgeMs', options.jwksCacheMaxAgeMs, 600_000);
  const staleIfErrorMs = nonNegativeInt(factory, 'jwksStaleIfErrorMs', options.jwksStaleIfErrorMs, 3_600_000);
  const readyTimeoutMs = nonNegativeInt(factory, 'readyTimeoutMs', options.readyTimeoutMs, 5000);
  let retry: Required<OidcRetryOptions> | undefined;
  if (options.retry === true) retry = { attempts: Infinity, minDelayMs: 1000, maxDelayMs: 30_000 };
  else if (options.retry !== undefined && options.retry !== false) {
    const r = options.retry;
    if (typeof r !== 'object' || r === null)
      throw badOption(factory, 'retry', r, 'a boolean or { attempts, minDelayMs, maxDelayMs }');
    checkKnownOptions(`${factory}: retry`, r, ['attempts', 'minDelayMs', 'maxDelayMs']);
    const attempts =
      r.attempts === undefined || r.attempts === Infinity
        ? Infinity
        : nonNegativeInt(factory, 'retry.attempts', r.attempts, 0);
    if (attempts < 1) throw badOption(factory, 'retry.attempts', r.attempts, 'at least 1');
    retry = {
      attempts,
      minDelayMs: nonNegativeInt(factory, 'retry.minDelayMs', r.minDelayMs, 1000),
      maxDelayMs: nonNegativeInt(factory, 'retry.maxDelayMs', r.maxDelayMs, 30_000),
    };
  }
  const fetchImpl = options.fetch ?? globalThis.fetch;
  if (typeof fetchImpl !== 'function') throw badOption(factory, 'fetch', options.fetch, 'a fetch function');
  const challenge = resolveChallenge(factory, options);
  const logger = validateLogger(factory, options.logger);
  const by = factory;

  // ---- start-up -------------------------------------------------------------------------------------------
  let phase: OidcPhase = 'starting';
  let remote: ReturnType<typeof createRemoteJWKSet> | undefined;
  let jwksUri: string | undefined;
  let closed = false;
  const cancelSleep: { fn?: () => void } = {};
  // jose writes every successful fetch here (uat, jwks): it is how the last good set is found during an outage.
  const cache: { uat?: number; jwks?: JSONWebKeySet } = {};

  const safeLog = (
    level: 'error' | 'warn' | 'info',
    message: string,
    meta: Record<string, unknown>,
  ): void => {
    try {
      const fn =
        level === 'error' ? logger.error : level === 'warn' ? (logger.warn ?? logger.error) : logger.info;
      fn?.call(logger, message, meta);
    } catch {
      // a broken logger must not break authentication
    }
  };

  const discover = async (): Promise<string> => {
    const url = discoveryUrl(issuer);
    let res: Response;
    try {
      res = await fetchImpl(url, {
        method: 'GET',
        redirect: 'manual',
        signal: AbortSignal.timeout(fetchTimeoutMs),
        headers: { accept: 'application/json' },
      });
    } catch (err) {
      throw new Error(`discovery at ${url} failed: ${describe(err)}`);
    }
    if (res.status !== 200) throw new Error(`discovery at ${url} answered HTTP ${res.status}`);
    let doc: unknown;
    try {
      doc = await res.json();
    } catch (err) {
      throw new Error(`discovery at ${url} did not answer JSON: ${describe(err)}`);
    }
    if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
      throw new Error(`discovery at ${url} did not answer a JSON object`);
    const d = doc as Record<string, unknown>;
    // OIDC Discovery §4.3: the document's issuer must be identical to the one configured.
    if (d.issuer !== issuer) {
      throw new Error(
        `discovery at ${url} names issuer ${JSON.stringify(clip(d.issuer))}, expected ${JSON.stringify(issuer)}`,
      );
    }
    const uri = d.jwks_uri;
    let u: URL | undefined;
    try {
      u = typeof uri === 'string' ? new URL(uri) : undefined;
    } catch {
      u = undefined;
    }
    if (!u || !fetchableUrl(u, allowHttp)) {
      throw new Error(
        `discovery at ${url} has no usable jwks_uri (${JSON.stringify(clip(uri))}); https is required off loopback`,
      );
    }
    return u.href;
  };

  const attempt = async (): Promise<void> => {
    const uri = await discover();
    const jwksOptions: RemoteJWKSetOptions = {
      timeoutDuration: fetchTimeoutMs,
      cooldownDuration: cooldownMs,
      cacheMaxAge: cacheMaxAgeMs,
      [jwksCache]: cache as Record<string, never>,
    };
    if (options.fetch) jwksOptions[customFetch] = options.fetch;
    const set = createRemoteJWKSet(new URL(uri), jwksOptions);
    try {
      await set.reload();
    } catch (err) {
      throw new Error(`JWKS at ${uri} could not be fetched: ${describe(err)}`);
    }
    const keys = set.jwks()?.keys ?? [];
    if (keys.length === 0) throw new Error(`JWKS at ${uri} holds no keys`);
    remote = set;
    jwksUri = uri;
  };

  const start = async (): Promise<void> => {
    for (let n = 1; ; n++) {
      try {
        await attempt();
        if (closed) throw new Error(`${factory}: closed during start-up`);
        phase = 'ready';
        safeLog('info', `${factory}: ready`, { issuer, jwksUri });
        return;
      } catch (err) {
        const msg = err instanceof Error ? err.message : String(err);
        if (closed) {
          phase = 'closed';
          throw new Error(`${factory}: closed during start-up (${msg})`);
        }
        if (!retry || n >= retry.attempts) {
          phase = 'failed';
          safeLog('error', `${factory}: start-up failed for issuer ${issuer}: ${msg}`, {
            issuer,
            attempts: n,
          });
          throw new Error(`${factory}: cannot start for issuer ${issuer}: ${msg}`);
        }
        phase = 'retrying';
        const delay = Math.min(retry.maxDelayMs, retry.minDelayMs * 2 ** Math.min(n - 1, 30));
        safeLog(
          'error',
          `${factory}: start-up attempt ${n} failed for issuer ${issuer}: ${msg}; retrying in ${delay} ms`,
          { issuer, attempt: n },
        );
        await sleep(delay, cancelSleep);
        if (closed) {
          phase = 'closed';
          throw new Error(`${factory}: closed during start-up`);
        }
      }
    }
  };
  // `quiet`: whoever awaits `ready` sees the rejection; nobody awaiting it does not crash the process.
  const ready = quiet(start());

  const whenReady = async (): Promise<boolean> => {
    if (phase === 'ready') return true;
    if (phase !== 'starting') return false;
    let t: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<void>((resolve) => {
      t = setTimeout(resolve, readyTimeoutMs);
      t.unref?.();
    });
    await Promise.race([ready.then(noop, noop), timeout]);
    clearTimeout(t);
    return (phase as OidcPhase) === 'ready';
  };

  // ---- keys during an outage ------------------------------------------------------------------------------
  let outage = false;
  let lastFailure = -Infinity;
  let stale: { uat: number; get: ReturnType<typeof createLocalJWKSet> } | undefined;

  const getKey: JWTVerifyGetKey = async (header, token) => {
    const set = remote!;
    let failure: unknown;
    // Right after a failed refetch, go straight to the last good keys instead of waiting on a dead IdP again.
    if (Date.now() >= lastFailure + cooldownMs) {
      try {
        const key = await set(header, token);
        if (outage) {
          outage = false;
          safeLog('warn', `${factory}: JWKS reachable again`, { issuer, jwksUri });
        }
        return key;
      } catch (err) {
        if (isTokenKeyError(err)) throw err;
        lastFailure = Date.now();
        failure = err;
        if (!outage) {
          outage = true;
          safeLog('error', `${factory}: JWKS refetch failed: ${describe(err)}`, { issuer, jwksUri });
        }
      }
    }
    const uat = cache.uat;
    if (cache.jwks === undefined || uat === undefined || Date.now() >= uat + cacheMaxAgeMs + staleIfErrorMs) {
      throw new KeysUnavailable(
        failure === undefined ? 'identity provider unreachable, no fresh keys' : describe(failure),
      );
    }
    if (!stale || stale.uat !== uat) stale = { uat, get: createLocalJWKSet(cache.jwks) };
    try {
      return await stale.get(header, token);
    } catch (err) {
      // An unknown kid while the IdP is down may well be a new key: nobody can tell, so it is an outage.
      if (err instanceof errors.JWKSNoMatchingKey)
        throw new KeysUnavailable('unknown kid while the identity provider is unreachable');
      throw err;
    }
  };

  const verifyOptions: JWTVerifyOptions = { issuer, algorithms, clockTolerance, requiredClaims: ['exp'] };
  if (typ !== undefined) verifyOptions.typ = typ;
  const mapping = { rolesClaims, groupsClaim };

  const check = async (token: string, _req: IncomingMessage): Promise<AuthDecision> => {
    const peek = peekJwt(token);
    if (!peek.ok) return { kind: 'pass', why: 'not_a_jwt' };
    if (peek.payload.iss !== issuer) return { kind: 'pass', why: 'other_issuer' };
    const seen = { alg: clip(peek.header.alg), kid: clip(peek.header.kid), sub: clip(peek.payload.sub) };
    if (!(await whenReady())) {
      return { kind: 'refuse', outcome: 'unavailable', why: `not_ready:${phase}`, detail: { issuer } };
    }
    let payload: JWTPayload;
    try {
      payload = (await jwtVerify(token, getKey, verifyOptions)).payload;
    } catch (err) {
      if (err instanceof KeysUnavailable)
        return {
          kind: 'refuse',
          outcome: 'unavailable',
          why: 'jwks_unavailable',
          detail: { ...seen, error: err.reason },
        };
      if (err instanceof errors.JWTExpired)
        return {
          kind: 'refuse',
          outcome: 'expired',
          why: err.code,
          detail: { ...seen, claim: err.claim, reason: err.reason },
        };
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
    const aud = checkAudience(payload, { audience, clientId });
    if (!aud.ok) {
      return {
        kind: 'refuse',
        outcome: 'invalid',
        why: aud.reason,
        detail: { ...seen, aud: clip(payload.aud), azp: clip(payload.azp), expected: audience ?? clientId },
      };
    }
    const id = identityOf(payload, mapping);
    if (!id.ok)
      return { kind: 'refuse', outcome: 'invalid', why: id.reason, detail: { ...seen, claim: id.claim } };
    if (!hasAnyRole(id, requiredRoles)) {
      return {
        kind: 'refuse',
        outcome: 'forbidden',
        why: 'missing_role',
        detail: { sub: clip(id.userId), roles: clip(id.roles), groups: clip(id.groups), requiredRoles },
      };
    }
    const lacking = missingScopes(id.scopes, requiredScopes);
    if (lacking.length > 0) {
      return {
        kind: 'refuse',
        outcome: 'forbidden',
        why: 'missing_scope',
        detail: { sub: clip(id.userId), scopes: clip(id.scopes), requiredScopes },
        scope: requiredScopes,
      };
    }
    const principal: Principal = {
      userId: id.userId,
      groups: Object.freeze(id.groups),
      roles: Object.freeze(id.roles),
      method: OIDC_METHOD,
      claims: Object.freeze({ ...payload }),
    };
    if (id.email !== undefined) principal.email = id.email;
    return { kind: 'ok', principal };
  };

  const self = {
    method: OIDC_METHOD,
    by,
    ready,
    challenge,
    check,
    status(): OidcStatus {
      const s: OidcStatus = { phase, outage };
      if (jwksUri !== undefined) s.jwksUri = jwksUri;
      if (cache.uat !== undefined) s.jwksFetchedAt = cache.uat;
      return s;
    },
    close(): void {
      if (closed) return;
      closed = true;
      if ((phase as OidcPhase) !== 'ready') phase = 'closed';
      cancelSleep.fn?.();
    },
  };
  const mw = chainMiddleware([self], challenge, logger, by);
  return Object.assign(mw, self);
}

function noop(): void {
  // nothing
}

// Re-exported so users can write claim paths with the same type.
export type { ClaimPath } from '../../lib/oidcclaims.js';
// So `mcpware/oidc-auth` alone is enough to chain authenticators.
export { authenticate } from '../auth/index.js';
export type {
  AuthDecision,
  AuthMiddleware,
  Authenticator,
  AuthenticateOptions,
  ChallengeOptions,
} from '../auth/index.js';
