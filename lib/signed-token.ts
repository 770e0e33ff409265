/**
 * The signed tokens that carry state without storage (an input-required round's `requestState`, a legacy
 * session's `Mcp-Session-Id`, a forwarded session's): `<prefix>.<payload>.<mac>`, the payload base64url JSON, the MAC base64url HMAC-SHA256 over
 * `<prefix>.<payload>`. Opening one checks, in this order, the length, the shape and alphabet, the canonical
 * encoding, the MAC in constant time against every key (the first signs; the others are older keys still
 * accepted during a rotation), and only then decodes the payload: unauthenticated input is never parsed.
 * Each kind of token has its own prefix and names its purpose inside the payload, so none verifies as another.
 *
 * Pure: keys are passed in.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { isBase64url } from './base64url.js';
import { isJsonObject } from './json.js';

/** Why a token did not open. */
export type SignedTokenFailure = 'malformed' | 'too_large' | 'bad_signature';

export type OpenedToken =
  { ok: true; payload: unknown; signer: Uint8Array } | { ok: false; reason: SignedTokenFailure };

/** HMAC-SHA256 of `text` with `key`. */
export function hmacSha256(key: Uint8Array, text: string): Buffer {
  return createHmac('sha256', key).update(text).digest();
}

/** The principal as a token holds it: a hash keyed with the signing key and labelled with the token's kind. */
export function principalTag(key: Uint8Array, label: string, principal: string): string {
  return hmacSha256(key, `${label}\u0000${principal}`).subarray(0, 16).toString('base64url');
}

/** Sign `payload` (JSON) under `prefix` with `key`. */
export function signToken(prefix: string, payload: unknown, key: Uint8Array): string {
  const signed = `${prefix}.${Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url')}`;
  return `${signed}.${hmacSha256(key, signed).toString('base64url')}`;
}

/** Open a token of `prefix`, at most `maxLength` characters, signed with one of `keys`: its payload and signer. */
export function openToken(
  token: unknown,
  prefix: string,
  maxLength: number,
  keys: readonly Uint8Array[],
): OpenedToken {
  if (typeof token !== 'string') return { ok: false, reason: 'malformed' };
  if (token.length > maxLength) return { ok: false, reason: 'too_large' };
  const first = token.indexOf('.');
  const last = token.lastIndexOf('.');
  if (first < 0 || last === first) return { ok: false, reason: 'malformed' };
  const body = token.slice(first + 1, last);
  const sig = token.slice(last + 1);
  if (token.slice(0, first) !== prefix || !isBase64url(body) || !isBase64url(sig)) {
    return { ok: false, reason: 'malformed' };
  }
  const given = Buffer.from(sig, 'base64url');
  // Canonical encoding only: stray trailing bits would otherwise decode to the same bytes.
  if (given.toString('base64url') !== sig) return { ok: false, reason: 'malformed' };
  const signed = token.slice(0, last);
  let signer: Uint8Array | undefined;
  for (const key of keys) {
    const expected = hmacSha256(key, signed);
    if (expected.length === given.length && timingSafeEqual(expected, given) && signer === undefined) {
      signer = key;
    }
  }
  if (signer === undefined) return { ok: false, reason: 'bad_signature' };
  const bytes = Buffer.from(body, 'base64url');
  if (bytes.toString('base64url') !== body) return { ok: false, reason: 'malformed' };
  try {
    return { ok: true, payload: JSON.parse(bytes.toString('utf8')), signer };
  } catch {
    return { ok: false, reason: 'malformed' };
  }
}

/** True for a JSON object whose own members are exactly `members` (a token's payload has no other). */
export function hasExactly(v: unknown, members: readonly string[]): v is Record<string, unknown> {
  if (!isJsonObject(v)) return false;
  return Object.keys(v).length === members.length && members.every((k) => Object.hasOwn(v, k));
}
