/**
 * Audit times as ISO 8601 UTC text, the same as `new Date(ms).toISOString()`. Records that arrive within the same
 * second share everything but the milliseconds, so the text up to them is made once per second and the
 * milliseconds are appended; Date's own formatter runs once a second instead of once a record.
 * @see docs/performance.md#audit-times
 */

/** A formatter of one audit instance: `(ms since the epoch) → ISO 8601 UTC text`. */
export function createIsoTime(): (ms: number) => string {
  let second = NaN;
  /** `YYYY-MM-DDTHH:MM:SS.` of `second` (with the sign and six-digit year outside 0000–9999). */
  let head = '';
  return (ms) => {
    if (!Number.isFinite(ms)) return new Date(ms).toISOString();
    const whole = Math.trunc(ms);
    const s = Math.floor(whole / 1000);
    if (s !== second) {
      const text = new Date(s * 1000).toISOString();
      head = text.slice(0, text.length - 4);
      second = s;
    }
    const milli = whole - s * 1000;
    return `${head}${milli < 10 ? '00' : milli < 100 ? '0' : ''}${milli}Z`;
  };
}
