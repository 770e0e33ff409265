/**
 * The base64url alphabet check the signed tokens (`requestState`, legacy sessions) apply before decoding
 * anything. Pure.
 */

/** True for a non-empty base64url string without padding: letters, digits, `-` and `_` only. */
export function isBase64url(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const ok =
      (c >= 0x30 && c <= 0x39) ||
      (c >= 0x41 && c <= 0x5a) ||
      (c >= 0x61 && c <= 0x7a) ||
      c === 0x2d ||
      c === 0x5f;
    if (!ok) return false;
  }
  return s.length > 0;
}
