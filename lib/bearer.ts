/**
 * Bearer credentials (RFC 6750): reading `Authorization: Bearer <token>` and writing the `WWW-Authenticate`
 * challenge. Pure: takes header strings, returns values.
 *
 * Tokens are read from the `Authorization` header only. A token in the query string (`?access_token=`) or a
 * form body is never looked at: MCP forbids clients to send one there, and a URL ends up in access logs,
 * browser history and `Referer` headers.
 *
 * @see docs/middleware/auth.md
 */

/** The longest token read (bytes of the header after the scheme). Longer ones are treated as malformed. */
export const MAX_TOKEN_LENGTH = 16 * 1024;

/** What the `Authorization` header holds. */
export type Credential =
  /** No header, or `Bearer` with nothing after it. */
  | { kind: 'none' }
  /** Another scheme (`Basic`, `Digest`...): not ours to read; treated as missing. */
  | { kind: 'other_scheme'; scheme: string }
  /** `Bearer` followed by something that is not a single token. */
  | { kind: 'malformed' }
  | { kind: 'bearer'; token: string };

/** True for the characters a token may hold here: visible ASCII (RFC 6750's b64token, widened for API keys). */
function isTokenChars(v: string): boolean {
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (c < 0x21 || c > 0x7e) return false;
  }
  return true;
}

/**
 * How many `Authorization` lines a request carried, counted in its raw header list (names at even positions,
 * any case). node:http keeps only the first line in `headers.authorization`, so a request with two would be
 * served as whoever the first names while a proxy or log may have read the other: a caller sends one.
 */
export function authorizationLines(rawHeaders: readonly string[] | undefined): number {
  if (!Array.isArray(rawHeaders)) return 0;
  let n = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i];
    if (typeof name === 'string' && name.length === 13 && name.toLowerCase() === 'authorization') n++;
  }
  return n;
}

/** Read the credential from the `Authorization` header value. The scheme is case-insensitive. */
export function readBearer(header: string | readonly string[] | undefined): Credential {
  // Node keeps only the first `Authorization` header; an array can only come from a hand-built request.
  const value = typeof header === 'string' ? header : header?.[0];
  if (value === undefined) return { kind: 'none' };
  const v = value.trim();
  if (v === '') return { kind: 'none' };
  let sp = 0;
  while (sp < v.length && v.charCodeAt(sp) !== 0x20 && v.charCodeAt(sp) !== 0x09) sp++;
  const scheme = v.slice(0, sp);
  if (scheme.toLowerCase() !== 'bearer') return { kind: 'other_scheme', scheme: scheme.slice(0, 32) };
  const token = v.slice(sp).trim();
  if (token === '') return { kind: 'none' };
  if (token.length > MAX_TOKEN_LENGTH || !isTokenChars(token)) return { kind: 'malformed' };
  return { kind: 'bearer', token };
}

/** True when `v` can travel inside a quoted-string of a header: no control characters, at most 2048 chars. */
export function isQuotable(v: string): boolean {
  if (v.length > 2048) return false;
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if ((c < 0x20 && c !== 0x09) || c === 0x7f || c > 0xff) return false;
  }
  return true;
}

/** RFC 7230 quoted-string: backslash before `"` and `\`. */
function quote(v: string): string {
  let out = '"';
  for (const ch of v) out += ch === '"' || ch === '\\' ? '\\' + ch : ch;
  return out + '"';
}

export interface ChallengeParams {
  realm?: string | undefined;
  /** The RFC 9728 protected-resource metadata URL (`resource_metadata`). */
  resourceMetadata?: string | undefined;
  /** Space-separated scopes (`scope`), when the server knows which it needs. */
  scope?: string | undefined;
  /** RFC 6750 §3.1 error code. Omitted when the request carried no credential at all. */
  error?: 'invalid_request' | 'invalid_token' | 'insufficient_scope' | undefined;
}

/**
 * The `WWW-Authenticate` value: `Bearer` followed by the parameters that are set, in a fixed order
 * (`realm`, `resource_metadata`, `scope`, `error`). Values that cannot be quoted safely are dropped rather than
 * allowed to break the header; the factories validate configured values, so this is only a last guard.
 */
export function bearerChallenge(p: ChallengeParams): string {
  const params: string[] = [];
  const add = (name: string, v: string | undefined): void => {
    if (v !== undefined && v !== '' && isQuotable(v)) params.push(`${name}=${quote(v)}`);
  };
  add('realm', p.realm);
  add('resource_metadata', p.resourceMetadata);
  add('scope', p.scope);
  add('error', p.error);
  return params.length === 0 ? 'Bearer' : `Bearer ${params.join(', ')}`;
}
