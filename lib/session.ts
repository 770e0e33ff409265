/**
 * A legacy (2025-11-25) session that needs no storage: the `Mcp-Session-Id` minted at `initialize` carries what
 * the client negotiated (the protocol version, the client capabilities that decide which server-to-client
 * requests it may receive, a keyed hash of the principal it was minted for, an expiry), signed with HMAC-SHA256.
 * Any replica holding the key verifies it; none stores it.
 *
 * - The token is `s1.<payload>.<mac>`, both base64url: visible ASCII only (the transport allows 0x21-0x7E), at
 *   most {@link MAX_SESSION_ID_LENGTH} characters; a longer value is refused before anything is decoded.
 * - The payload names its purpose (`"p":"session"`) and the prefix differs from a `requestState` token's, so
 *   neither verifies as the other although both are signed with the same keys.
 * - The MAC is checked in constant time before the payload is decoded; the encoding must be canonical and the
 *   payload exactly the members a session has.
 * - The principal is a hash keyed with the signing key: the token does not show who it was minted for.
 *
 * Signed, not encrypted: the client can read the version and capabilities it declared. Pure: keys are passed in.
 */
import type { JsonObject } from './jsonrpc.js';
import { isJsonObject } from './json.js';
import { hasExactly, openToken, principalTag, signToken } from './signed-token.js';

/** The client capabilities a session keeps: those that allow a server-to-client request. */
export const SESSION_CAPABILITIES: readonly string[] = ['elicitation', 'sampling', 'roots'];

/** Longest `Mcp-Session-Id` accepted (characters), checked before anything is decoded. */
export const MAX_SESSION_ID_LENGTH = 1024;

/** Most members kept of one declared capability (e.g. `elicitation.form`, `elicitation.url`). */
const MAX_MEMBERS = 8;
/** Longest member name kept. */
const MAX_MEMBER_NAME = 32;
/** Longest protocol version kept. */
const MAX_VERSION_LENGTH = 32;

const PREFIX = 's1';
const PURPOSE = 'session';

/** What a session carries. */
export interface SessionClaims {
  /** The protocol version negotiated at `initialize`. */
  version: string;
  /** The declared client capabilities among {@link SESSION_CAPABILITIES} (see {@link sessionCapabilities}). */
  capabilities: JsonObject;
  /** Expiry, ms since the epoch. */
  expiresAt: number;
}

export type SessionVerifyReason = 'malformed' | 'too_large' | 'bad_signature' | 'expired' | 'foreign';

export type SessionVerifyResult = ({ ok: true } & SessionClaims) | { ok: false; reason: SessionVerifyReason };

/**
 * The part of declared client capabilities a session keeps: `elicitation`, `sampling` and `roots` when declared
 * as objects, each with at most 8 members of short names, a member's value kept as `true`/`false` or `{}`.
 * Bounded whatever the client sent; enough to tell which requests the client may receive.
 */
export function sessionCapabilities(declared: unknown): JsonObject {
  const out: JsonObject = {};
  if (!isJsonObject(declared)) return out;
  for (const cap of SESSION_CAPABILITIES) {
    if (!Object.hasOwn(declared, cap)) continue;
    const v = declared[cap];
    if (!isJsonObject(v)) continue;
    // Member names are the client's: kept on an object without a prototype.
    const kept = Object.create(null) as JsonObject;
    let n = 0;
    for (const member of Object.keys(v)) {
      if (n === MAX_MEMBERS) break;
      if (member.length === 0 || member.length > MAX_MEMBER_NAME) continue;
      const x = v[member];
      if (typeof x === 'boolean') kept[member] = x;
      else if (isJsonObject(x)) kept[member] = {};
      else continue;
      n++;
    }
    out[cap] = kept;
  }
  return out;
}

/** Whether `v` is exactly what {@link sessionCapabilities} produces (a decoded payload must be). */
function isSessionCapabilities(v: unknown): v is JsonObject {
  if (!isJsonObject(v)) return false;
  for (const cap of Object.keys(v)) {
    if (!SESSION_CAPABILITIES.includes(cap)) return false;
    const c = v[cap];
    if (!isJsonObject(c)) return false;
    const members = Object.keys(c);
    if (members.length > MAX_MEMBERS) return false;
    for (const m of members) {
      const x = c[m];
      if (m.length === 0 || m.length > MAX_MEMBER_NAME) return false;
      if (typeof x !== 'boolean' && !(isJsonObject(x) && Object.keys(x).length === 0)) return false;
    }
  }
  return true;
}

/** The label of the principal's keyed hash in a session. */
const PRINCIPAL_LABEL = 'mcpware-session-principal';

/**
 * Mint a session id for `principal` (`principalKey()` of lib/principal.ts) carrying `claims`, signed with `key`.
 * The capabilities are reduced with {@link sessionCapabilities} and the version clipped, so the id stays
 * within {@link MAX_SESSION_ID_LENGTH}.
 */
export function signSession(claims: SessionClaims, principal: string, key: Uint8Array): string {
  const payload = {
    p: PURPOSE,
    v: claims.version.slice(0, MAX_VERSION_LENGTH),
    c: sessionCapabilities(claims.capabilities),
    u: principalTag(key, PRINCIPAL_LABEL, principal),
    e: Math.floor(claims.expiresAt),
  };
  return signToken(PREFIX, payload, key);
}

const PAYLOAD_MEMBERS = ['p', 'v', 'c', 'u', 'e'];

/**
 * Verify a session id against every key (the first signs; the others are older keys still accepted during a
 * rotation), then check it is unexpired at `now` and was minted for `principal`. The length is checked first,
 * the MAC before the payload is decoded.
 */
export function verifySession(
  token: unknown,
  principal: string,
  keys: readonly Uint8Array[],
  now: number,
): SessionVerifyResult {
  const opened = openToken(token, PREFIX, MAX_SESSION_ID_LENGTH, keys);
  if (!opened.ok) return opened;
  const payload = opened.payload;
  if (!isClaimsPayload(payload)) return { ok: false, reason: 'malformed' };
  if (now >= payload.e) return { ok: false, reason: 'expired' };
  if (payload.u !== principalTag(opened.signer, PRINCIPAL_LABEL, principal))
    return { ok: false, reason: 'foreign' };
  return { ok: true, version: payload.v, capabilities: payload.c, expiresAt: payload.e };
}

interface ClaimsPayload {
  p: string;
  v: string;
  c: JsonObject;
  u: string;
  e: number;
}

/** Exactly the members a session payload has, each of its type and bounds. */
function isClaimsPayload(v: unknown): v is ClaimsPayload {
  if (!hasExactly(v, PAYLOAD_MEMBERS)) return false;
  return (
    v.p === PURPOSE &&
    typeof v.v === 'string' &&
    v.v.length > 0 &&
    v.v.length <= MAX_VERSION_LENGTH &&
    typeof v.u === 'string' &&
    typeof v.e === 'number' &&
    Number.isSafeInteger(v.e) &&
    isSessionCapabilities(v.c)
  );
}
