/**
 * Shortening caller-supplied strings before they go into an error message or a log line.
 */

/** `s` cut to `max` characters (UTF-16 code units) with `…` appended when it was longer. */
export function clip(s: string, max = 64): string {
  return s.length > max ? s.slice(0, max) + '…' : s;
}
