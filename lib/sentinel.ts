/**
 * The Base64 header sentinel of MCP 2026-07-28 (`=?base64?…?=`), used by `Mcp-Name` and `Mcp-Param-*`.
 */

export const SENTINEL_PREFIX = '=?base64?';
export const SENTINEL_SUFFIX = '?=';
const MIN_SENTINEL = SENTINEL_PREFIX.length + SENTINEL_SUFFIX.length;

/** True when `v` has the sentinel's prefix and suffix without overlap (lower case only). */
export function isSentinel(v: string): boolean {
  return v.length >= MIN_SENTINEL && v.startsWith(SENTINEL_PREFIX) && v.endsWith(SENTINEL_SUFFIX);
}

/** True when `v` may travel as a plain header value: visible ASCII, inner spaces/tabs, no edge whitespace. */
export function isPlainHeaderValue(v: string): boolean {
  const n = v.length;
  if (n === 0) return true;
  for (let i = 0; i < n; i++) {
    const c = v.charCodeAt(i);
    if (c >= 0x21 && c <= 0x7e) continue;
    if ((c === 0x20 || c === 0x09) && i !== 0 && i !== n - 1) continue;
    return false;
  }
  return true;
}

/**
 * Encode a value for a header: plain when it is plain visible ASCII and not itself sentinel-shaped, otherwise
 * `=?base64?<standard padded Base64 of the UTF-8 bytes>?=`.
 */
export function encodeHeaderValue(v: string): string {
  if (isPlainHeaderValue(v) && !isSentinel(v)) return v;
  return SENTINEL_PREFIX + Buffer.from(v, 'utf8').toString('base64') + SENTINEL_SUFFIX;
}

export type DecodeResult =
  { ok: true; value: string; encoded: boolean } | { ok: false; reason: 'malformed_sentinel' };

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Decode a header value. A value that is not sentinel-shaped (including `=?BASE64?…?=` in upper case) is
 * returned literally. A sentinel must hold canonical standard Base64 (RFC 4648 alphabet, `=` padding, no
 * stray bits) of valid UTF-8; anything else is an error.
 */
export function decodeHeaderValue(v: string): DecodeResult {
  if (!isSentinel(v)) return { ok: true, value: v, encoded: false };
  const payload = v.slice(SENTINEL_PREFIX.length, v.length - SENTINEL_SUFFIX.length);
  if (payload.length % 4 !== 0) return { ok: false, reason: 'malformed_sentinel' };
  const bytes = Buffer.from(payload, 'base64');
  // Node's decoder is lenient; re-encoding catches bad alphabet, padding and trailing bits in one comparison.
  if (bytes.toString('base64') !== payload) return { ok: false, reason: 'malformed_sentinel' };
  try {
    return { ok: true, value: utf8.decode(bytes), encoded: true };
  } catch {
    return { ok: false, reason: 'malformed_sentinel' };
  }
}
