/**
 * The options of `oidcAuth`, validated once when the factory is called into a frozen {@link OidcConfig}.
 * Every refusal names the option and what it expects; an unknown name is refused with the closest known one.
 *
 * @see docs/middleware/oidc-auth.md
 */
import { type ClaimMapping, type ClaimPath, defaultRolesClaims } from '../../lib/oidcclaims.js';
import { CHALLENGE_OPTIONS, type ChallengeOptions, resolveChallenge, scopeList } from '../auth/challenge.js';
import {
  OPTION_ERRORS,
  badOption,
  boolOption,
  fnOption,
  intOption,
  knownKeys,
  loggerOption,
  optionError,
  optionsObject,
  stringOption,
} from '../../core/options.js';
import { stderrLogger } from '../../core/respond.js';
import type { Logger } from '../../core/types.js';

export const FACTORY = 'oidcAuth';

/** `principal.method` and `req.locals.auth.method` of a token this authenticator accepted. */
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
   * contain it as the same string (RFC 7519 §4.1.3), one trailing `/` on either side aside; `azp` is ignored.
   */
  audience?: string | readonly string[];
  /**
   * The client id. Without `audience`, it is the audience: `aud` must contain it, exactly (`azp` is never
   * consulted, and a token without `aud` is refused). Also names the client roles.
   */
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

/** The options of jose's `jwtVerify` that `oidcAuth` sets (its declarations stay free of jose's types). */
export interface JwtChecks {
  issuer: string;
  algorithms: string[];
  clockTolerance: number;
  requiredClaims: string[];
  typ?: string;
}

/** What the token checks need. */
export interface VerifyConfig {
  readonly issuer: string;
  readonly audience: readonly string[] | undefined;
  readonly clientId: string | undefined;
  readonly requiredRoles: readonly string[];
  readonly requiredScopes: readonly string[];
  readonly mapping: ClaimMapping;
  /** For jose's `jwtVerify`: issuer, algorithm allow-list, clock tolerance, `exp` required, `typ`. */
  readonly jwtVerify: JwtChecks;
}

/** The resolved options of one `oidcAuth` instance. */
export interface OidcConfig {
  readonly issuer: string;
  readonly allowHttp: boolean;
  readonly verify: VerifyConfig;
  readonly fetchTimeoutMs: number;
  readonly cooldownMs: number;
  readonly cacheMaxAgeMs: number;
  readonly staleIfErrorMs: number;
  readonly readyTimeoutMs: number;
  readonly retry: Readonly<Required<OidcRetryOptions>> | undefined;
  /** The fetch for discovery. */
  readonly fetch: typeof fetch;
  /** The fetch handed to jose for the JWKS, when one was given (jose's own otherwise). */
  readonly jwksFetch: typeof fetch | undefined;
  readonly challenge: ChallengeOptions;
  readonly logger: Logger;
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
  ...CHALLENGE_OPTIONS,
];

function isLoopback(u: URL): boolean {
  const h = u.hostname;
  return h === 'localhost' || h === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/** True when the URL may be fetched: https, or http on loopback (or anywhere with `allowHttp`). */
export function fetchableUrl(u: URL, allowHttp: boolean): boolean {
  if (u.username !== '' || u.password !== '') return false;
  return u.protocol === 'https:' || (u.protocol === 'http:' && (allowHttp || isLoopback(u)));
}

/** A URL, or `undefined` when the value is not a string or does not parse. */
export function parseUrl(v: unknown): URL | undefined {
  if (typeof v !== 'string') return undefined;
  try {
    return new URL(v);
  } catch {
    return undefined;
  }
}

function nameArray(name: string, v: unknown): string[] {
  if (!Array.isArray(v) || !v.every((s) => typeof s === 'string' && s !== '' && s.length <= 256)) {
    throw badOption(FACTORY, name, v, 'an array of non-empty strings');
  }
  return [...(v as string[])];
}

function claimPath(name: string, v: unknown): ClaimPath {
  if (typeof v === 'string' && v !== '') return v;
  if (Array.isArray(v) && v.length > 0 && v.every((s) => typeof s === 'string' && s !== ''))
    return [...(v as string[])];
  throw badOption(FACTORY, name, v, 'a claim name or a non-empty array of member names (a path)');
}

function resolveIssuer(o: OidcAuthOptions, allowHttp: boolean): string {
  const u = parseUrl(o.issuer);
  if (!u || !fetchableUrl(u, allowHttp) || u.search !== '' || u.hash !== '') {
    throw badOption(
      FACTORY,
      'issuer',
      o.issuer,
      'an https URL without query or fragment (http only on loopback or with allowHttp)',
    );
  }
  return o.issuer;
}

function resolveAudience(o: OidcAuthOptions): Pick<VerifyConfig, 'audience' | 'clientId'> {
  let audience: string[] | undefined;
  if (o.audience !== undefined) {
    audience = typeof o.audience === 'string' ? [o.audience] : nameArray('audience', o.audience);
    if (audience.length === 0 || audience.some((a) => a === ''))
      throw badOption(FACTORY, 'audience', o.audience, 'a non-empty string or array of strings');
  }
  const clientId = stringOption(FACTORY, 'clientId', o.clientId, undefined);
  if (audience === undefined && clientId === undefined) {
    throw optionError(
      OPTION_ERRORS.missing,
      FACTORY,
      `${FACTORY}: set "audience" (this server's resource URI, RFC 8707) or "clientId": a token must be checked ` +
        'for having been issued to this server',
    );
  }
  return { audience, clientId };
}

function resolveClaims(o: OidcAuthOptions, clientId: string | undefined): ClaimMapping {
  let rolesClaims: ClaimPath[];
  if (o.rolesClaims === undefined) rolesClaims = defaultRolesClaims(clientId);
  else {
    if (!Array.isArray(o.rolesClaims))
      throw badOption(FACTORY, 'rolesClaims', o.rolesClaims, 'an array of claim names or paths');
    rolesClaims = o.rolesClaims.map((p, i) => claimPath(`rolesClaims[${i}]`, p));
  }
  const groupsClaim = o.groupsClaim === undefined ? 'groups' : claimPath('groupsClaim', o.groupsClaim);
  return { rolesClaims, groupsClaim };
}

function resolveAlgorithms(v: unknown): string[] {
  if (v === undefined) return [...ASYMMETRIC_ALGORITHMS];
  const algorithms = nameArray('algorithms', v);
  for (const a of algorithms) {
    if (a.toLowerCase() === 'none' || /^HS\d{3}$/i.test(a)) {
      throw badOption(
        FACTORY,
        'algorithms',
        v,
        `asymmetric algorithms only ("${a}" would let a token verify without the issuer's private key)`,
      );
    }
    if (!(ASYMMETRIC_ALGORITHMS as readonly string[]).includes(a)) {
      throw badOption(FACTORY, 'algorithms', v, `a list drawn from ${ASYMMETRIC_ALGORITHMS.join(', ')}`);
    }
  }
  if (algorithms.length === 0) throw badOption(FACTORY, 'algorithms', v, 'a non-empty list');
  return algorithms;
}

function resolveClockTolerance(c: unknown): number {
  if (c === undefined) return 5;
  if (typeof c !== 'number' || !Number.isFinite(c) || c < 0 || c > 3600)
    throw badOption(FACTORY, 'clockTolerance', c, 'a number of seconds between 0 and 3600');
  return c;
}

/** Milliseconds: a non-negative integer, or `Infinity` where `infinite` allows it. */
function ms(name: string, v: unknown, fallback: number, infinite = false): number {
  return infinite && v === Infinity ? Infinity : intOption(FACTORY, name, v, fallback, 0);
}

function resolveRetry(r: unknown): Required<OidcRetryOptions> | undefined {
  if (r === undefined || r === false) return undefined;
  if (r === true) return { attempts: Infinity, minDelayMs: 1000, maxDelayMs: 30_000 };
  if (typeof r !== 'object' || r === null || Array.isArray(r))
    throw badOption(FACTORY, 'retry', r, 'a boolean or { attempts, minDelayMs, maxDelayMs }');
  const o = r as OidcRetryOptions;
  knownKeys(`${FACTORY}: retry`, o, ['attempts', 'minDelayMs', 'maxDelayMs']);
  const attempts =
    o.attempts === undefined || o.attempts === Infinity
      ? Infinity
      : intOption(FACTORY, 'retry.attempts', o.attempts, 1, 1);
  return {
    attempts,
    minDelayMs: ms('retry.minDelayMs', o.minDelayMs, 1000),
    maxDelayMs: ms('retry.maxDelayMs', o.maxDelayMs, 30_000),
  };
}

function resolveVerify(o: OidcAuthOptions, issuer: string): VerifyConfig {
  const { audience, clientId } = resolveAudience(o);
  const requiredRoles = o.requiredRoles === undefined ? [] : nameArray('requiredRoles', o.requiredRoles);
  const requiredScopes =
    o.requiredScopes === undefined ? [] : scopeList(FACTORY, 'requiredScopes', o.requiredScopes);
  const mapping = resolveClaims(o, clientId);
  const jwtVerify: JwtChecks = {
    issuer,
    algorithms: resolveAlgorithms(o.algorithms),
    clockTolerance: resolveClockTolerance(o.clockTolerance),
    requiredClaims: ['exp'],
  };
  const typ = stringOption(FACTORY, 'typ', o.typ, undefined);
  if (typ !== undefined) jwtVerify.typ = typ;
  return { issuer, audience, clientId, requiredRoles, requiredScopes, mapping, jwtVerify };
}

/** Validate every option of `oidcAuth` (throws a TypeError naming the option) and resolve the defaults. */
export function resolveOidcOptions(options: OidcAuthOptions | undefined): OidcConfig {
  const o = optionsObject(FACTORY, options);
  knownKeys(FACTORY, o, KNOWN);
  const allowHttp = boolOption(FACTORY, 'allowHttp', o.allowHttp, false);
  const issuer = resolveIssuer(o, allowHttp);
  const verify = resolveVerify(o, issuer);
  const jwksFetch = fnOption<typeof fetch>(FACTORY, 'fetch', o.fetch);
  return Object.freeze({
    issuer,
    allowHttp,
    verify,
    fetchTimeoutMs: ms('fetchTimeoutMs', o.fetchTimeoutMs, 5000),
    cooldownMs: ms('jwksCooldownMs', o.jwksCooldownMs, 30_000),
    cacheMaxAgeMs: ms('jwksCacheMaxAgeMs', o.jwksCacheMaxAgeMs, 600_000, true),
    staleIfErrorMs: ms('jwksStaleIfErrorMs', o.jwksStaleIfErrorMs, 3_600_000),
    readyTimeoutMs: ms('readyTimeoutMs', o.readyTimeoutMs, 5000),
    retry: resolveRetry(o.retry),
    fetch: jwksFetch ?? globalThis.fetch,
    jwksFetch,
    challenge: resolveChallenge(FACTORY, o),
    logger: loggerOption(FACTORY, o.logger, stderrLogger),
  });
}
