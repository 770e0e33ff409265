/**
 * A forwarded (2025-11-25) session bound to the caller that opened it, with no storage: the server behind
 * `sdk()` or `proxy()` names its session in `Mcp-Session-Id`; the client receives instead a token carrying that
 * id, a keyed hash of the principal it was opened for and an expiry, signed with HMAC-SHA256. A request carrying
 * the token is forwarded with the server's id only when the token verifies for the same principal, unexpired.
 *
 * - The token is `f1.<payload>.<mac>`, both base64url: visible ASCII only, at most
 *   {@link MAX_FORWARD_SESSION_LENGTH} characters; a longer value is refused before anything is decoded.
 * - The payload names its purpose (`"p":"forward-session"`) and the prefix differs from a dispatch session's
 *   (`s1`) and a `requestState` token's, so none verifies as another.
 * - The MAC is checked in constant time before the payload is decoded; the encoding must be canonical and the
 *   payload exactly the members a forwarded session has.
 * - The principal is a hash keyed with the signing key: the token does not show who it was minted for.
 *
 * Signed, not encrypted: the client can read the server's session id. Pure: keys are passed in.
 */
import { hasExactly, openToken, principalTag, signToken } from './signed-token.js';

/** Longest `Mcp-Session-Id` token accepted (characters), checked before anything is decoded. */
export const MAX_FORWARD_SESSION_LENGTH = 1024;

/** Longest server session id a token carries (characters of visible ASCII). */
export const MAX_SERVER_SESSION_ID = 256;

const PREFIX = 'f1';
const PURPOSE = 'forward-session';
const PAYLOAD_MEMBERS = ['p', 's', 'u', 'e'];

export type ForwardSessionVerifyReason = 'malformed' | 'too_large' | 'bad_signature' | 'expired' | 'foreign';

export type ForwardSessionVerifyResult =
  { ok: true; serverId: string; expiresAt: number } | { ok: false; reason: ForwardSessionVerifyReason };

/** True for 1 to {@link MAX_SERVER_SESSION_ID} characters of visible ASCII (0x21-0x7E), as the transport allows. */
export function isServerSessionId(v: unknown): v is string {
  if (typeof v !== 'string' || v.length === 0 || v.length > MAX_SERVER_SESSION_ID) return false;
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (c < 0x21 || c > 0x7e) return false;
  }
  return true;
}

/** The label of the principal's keyed hash in a forwarded session. */
const PRINCIPAL_LABEL = 'mcpware-forward-session-principal';

/**
 * Wrap the server's session id `serverId` for `principal` (`principalKey()` of lib/principal.ts), valid until
 * `expiresAt` (ms since the epoch), signed with `key`. `undefined` when `serverId` is not 1 to
 * {@link MAX_SERVER_SESSION_ID} characters of visible ASCII.
 */
export function signForwardSession(
  serverId: string,
  principal: string,
  expiresAt: number,
  key: Uint8Array,
): string | undefined {
  if (!isServerSessionId(serverId)) return undefined;
  const payload = {
    p: PURPOSE,
    s: serverId,
    u: principalTag(key, PRINCIPAL_LABEL, principal),
    e: Math.floor(expiresAt),
  };
  return signToken(PREFIX, payload, key);
}

/**
 * Verify a forwarded session token against every key (the first signs; the others are older keys still
 * accepted during a rotation), then check it is unexpired at `now` and was minted for `principal`. The length
 * is checked first, the MAC before the payload is decoded.
 */
export function verifyForwardSession(
  token: unknown,
  principal: string,
  keys: readonly Uint8Array[],
  now: number,
): ForwardSessionVerifyResult {
  const opened = openToken(token, PREFIX, MAX_FORWARD_SESSION_LENGTH, keys);
  if (!opened.ok) return opened;
  const payload = opened.payload;
  if (!isPayload(payload)) return { ok: false, reason: 'malformed' };
  if (now >= payload.e) return { ok: false, reason: 'expired' };
  if (payload.u !== principalTag(opened.signer, PRINCIPAL_LABEL, principal))
    return { ok: false, reason: 'foreign' };
  return { ok: true, serverId: payload.s, expiresAt: payload.e };
}

interface Payload {
  p: string;
  s: string;
  u: string;
  e: number;
}

/** Exactly the members a forwarded session payload has, each of its type and bounds. */
function isPayload(v: unknown): v is Payload {
  if (!hasExactly(v, PAYLOAD_MEMBERS)) return false;
  return (
    v.p === PURPOSE &&
    isServerSessionId(v.s) &&
    typeof v.u === 'string' &&
    typeof v.e === 'number' &&
    Number.isSafeInteger(v.e)
  );
}
