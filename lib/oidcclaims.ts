/**
 * OIDC access-token claims after the signature was verified: audience (RFC 8707), subject, roles, groups and
 * scopes. Also an unverified peek at a compact JWS, used only to decide whether a credential looks like a
 * token of a given issuer (never to trust anything in it). Pure: no I/O.
 *
 * @see docs/middleware/oidc-auth.md
 */
import { isJsonObject } from './json.js';

type Claims = Readonly<Record<string, unknown>>;

export type PeekResult = { ok: true; header: Claims; payload: Claims } | { ok: false; reason: 'not_a_jwt' };

const B64URL = /^[A-Za-z0-9_-]*$/;

function decodeSegment(seg: string): Claims | undefined {
  if (seg.length === 0 || !B64URL.test(seg)) return undefined;
  try {
    const v: unknown = JSON.parse(Buffer.from(seg, 'base64url').toString('utf8'));
    return isJsonObject(v) ? (v as Claims) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Decode a compact JWS without verifying it: three dot-separated base64url segments (the last may be empty,
 * as in `alg: none`), a JSON object header with a string `alg`, and a JSON object payload. The caller bounds
 * the token's length (see `MAX_TOKEN_LENGTH`).
 */
export function peekJwt(token: string): PeekResult {
  const a = token.indexOf('.');
  const b = a < 0 ? -1 : token.indexOf('.', a + 1);
  if (a < 0 || b < 0 || token.indexOf('.', b + 1) >= 0) return { ok: false, reason: 'not_a_jwt' };
  if (!B64URL.test(token.slice(b + 1))) return { ok: false, reason: 'not_a_jwt' };
  const header = decodeSegment(token.slice(0, a));
  const payload = decodeSegment(token.slice(a + 1, b));
  if (!header || !payload || typeof header.alg !== 'string') return { ok: false, reason: 'not_a_jwt' };
  return { ok: true, header, payload };
}

/**
 * The comparable form of a resource identifier: for an http(s) URL, lower-case scheme and host (the URL
 * parser does it), no fragment, no trailing slash on the path. Anything else is compared verbatim.
 *
 * Not for deciding whether a token was issued for this server: the URL parser maps Unicode to ASCII (a
 * full-width host, a soft hyphen), drops userinfo and default ports, so many strings that are not the
 * configured audience share its form. {@link checkAudience} compares strings instead.
 */
export function canonicalResource(v: string): string {
  if (!/^https?:\/\//i.test(v)) return v;
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    return v;
  }
  let path = u.pathname;
  if (path.endsWith('/')) path = path.slice(0, -1);
  return `${u.protocol}//${u.host}${path}${u.search}`;
}

export type AudienceResult = { ok: true } | { ok: false; reason: 'wrong_audience' };

function audList(aud: unknown): string[] {
  if (typeof aud === 'string') return [aud];
  if (Array.isArray(aud)) return aud.filter((x): x is string => typeof x === 'string');
  return [];
}

/** `v` without one trailing `/` (the one spelling difference of a resource URI an audience check forgives). */
function withoutTrailingSlash(v: string): string {
  return v.length > 1 && v.charCodeAt(v.length - 1) === 0x2f ? v.slice(0, -1) : v;
}

/**
 * True when the audience value `aud` names `want`: the same string (RFC 7519 §4.1.3 compares audiences as
 * case-sensitive strings), or the same string but for one trailing `/` on either side. Nothing is decoded,
 * lower-cased or parsed, so no other spelling (case, percent-encoding, default port, userinfo, Unicode
 * look-alikes, invisible characters) names this server.
 */
export function audienceMatches(aud: string, want: string): boolean {
  return aud === want || withoutTrailingSlash(aud) === withoutTrailingSlash(want);
}

/**
 * RFC 8707 audience check: `aud` (a string or an array of strings) must contain a value that
 * {@link audienceMatches} one of `audience`. Without `audience`, the client id is the audience, compared
 * exactly (no trailing-slash rule): `aud` must contain it. `azp` is never consulted: it names the client the
 * token was issued to, not the resource it was issued for, so a token minted for the same client and another
 * resource (or with no `aud` at all) does not open this one.
 */
export function checkAudience(
  payload: Claims,
  opts: { audience?: readonly string[] | undefined; clientId?: string | undefined },
): AudienceResult {
  const aud = audList(payload.aud);
  if (opts.audience && opts.audience.length > 0) {
    const want = opts.audience;
    return aud.some((a) => want.some((w) => audienceMatches(a, w)))
      ? { ok: true }
      : { ok: false, reason: 'wrong_audience' };
  }
  const clientId = opts.clientId;
  if (clientId !== undefined && clientId !== '' && aud.includes(clientId)) return { ok: true };
  return { ok: false, reason: 'wrong_audience' };
}

/** A claim: a top-level name, or a path of member names into nested objects (`['realm_access', 'roles']`). */
export type ClaimPath = string | readonly string[];

/**
 * The claim path as one dotted name, for messages and logs (`['realm_access', 'roles']` →
 * `realm_access.roles`).
 * @see docs/lib.md
 * @example
 * ```ts
 * import { claimName } from 'mcpware/lib';
 *
 * console.log(claimName(['realm_access', 'roles'])); // 'realm_access.roles'
 * ```
 */
export function claimName(path: ClaimPath): string {
  return typeof path === 'string' ? path : path.join('.');
}

function readPath(payload: Claims, path: ClaimPath): unknown {
  const parts = typeof path === 'string' ? [path] : path;
  let v: unknown = payload;
  for (const p of parts) {
    if (!isJsonObject(v)) return undefined;
    if (!Object.hasOwn(v, p)) return undefined;
    v = (v as Record<string, unknown>)[p];
  }
  return v;
}

export type NamesResult =
  { ok: true; values: string[] } | { ok: false; reason: 'invalid_claim'; claim: string };

/**
 * Read a list of names from a claim: absent (or `null`) → none, a string → one, an array of strings → those.
 * Any other type is an error: a claim the server cannot read must not silently mean "no roles".
 * `stripSlash` drops one leading `/` (Keycloak writes full group paths such as `/admins`).
 */
export function readNames(payload: Claims, path: ClaimPath, stripSlash = false): NamesResult {
  const v = readPath(payload, path);
  const fix = (s: string): string => (stripSlash && s.startsWith('/') ? s.slice(1) : s);
  if (v === undefined || v === null) return { ok: true, values: [] };
  if (typeof v === 'string') return { ok: true, values: v === '' ? [] : [fix(v)] };
  if (Array.isArray(v) && v.every((x) => typeof x === 'string')) {
    return { ok: true, values: (v as string[]).filter((s) => s !== '').map(fix) };
  }
  return { ok: false, reason: 'invalid_claim', claim: claimName(path) };
}

/** Scopes granted: `scope` (space-separated, RFC 9068) or, failing that, `scp` (a list or a string). */
export function scopesOf(payload: Claims): string[] {
  const s = payload.scope;
  if (typeof s === 'string') return s.split(' ').filter((x) => x !== '');
  const scp = payload.scp;
  if (typeof scp === 'string') return scp.split(' ').filter((x) => x !== '');
  if (Array.isArray(scp)) return scp.filter((x): x is string => typeof x === 'string' && x !== '');
  return [];
}

export interface ClaimMapping {
  /** Claims whose names become roles. */
  rolesClaims: readonly ClaimPath[];
  /** The claim whose names become groups. */
  groupsClaim: ClaimPath;
}

/** The default role claims: `roles`, Keycloak's `realm_access.roles` and, with a client id, its client roles. */
export function defaultRolesClaims(clientId: string | undefined): ClaimPath[] {
  const out: ClaimPath[] = ['roles', ['realm_access', 'roles']];
  if (clientId !== undefined) out.push(['resource_access', clientId, 'roles']);
  return out;
}

export type IdentityResult =
  | { ok: true; userId: string; email?: string; roles: string[]; groups: string[]; scopes: string[] }
  | { ok: false; reason: 'missing_subject' | 'invalid_claim'; claim: string };

function union(into: string[], more: readonly string[]): void {
  for (const x of more) if (!into.includes(x)) into.push(x);
}

/** Who the verified token speaks for: `sub`, `email`, roles (union of the role claims), groups, scopes. */
export function identityOf(payload: Claims, mapping: ClaimMapping): IdentityResult {
  const sub = payload.sub;
  if (typeof sub !== 'string' || sub === '') return { ok: false, reason: 'missing_subject', claim: 'sub' };
  const roles: string[] = [];
  for (const path of mapping.rolesClaims) {
    const r = readNames(payload, path);
    if (!r.ok) return r;
    union(roles, r.values);
  }
  const g = readNames(payload, mapping.groupsClaim, true);
  if (!g.ok) return g;
  const groups: string[] = [];
  union(groups, g.values);
  const out: IdentityResult = { ok: true, userId: sub, roles, groups, scopes: scopesOf(payload) };
  if (typeof payload.email === 'string' && payload.email !== '') out.email = payload.email;
  return out;
}

/** `requiredRoles` is any-of over roles ∪ groups. An empty requirement passes (it never "matches anything"). */
export function hasAnyRole(
  identity: { roles: readonly string[]; groups: readonly string[] },
  required: readonly string[],
): boolean {
  if (required.length === 0) return true;
  return required.some((r) => identity.roles.includes(r) || identity.groups.includes(r));
}

/** `requiredScopes` is all-of, as OAuth scopes are. */
export function missingScopes(scopes: readonly string[], required: readonly string[]): string[] {
  return required.filter((s) => !scopes.includes(s));
}
