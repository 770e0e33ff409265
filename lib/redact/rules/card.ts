/**
 * card: 13–19 digits, either one unbroken run or groups joined by single spaces or dashes. Accepted when it
 * passes Luhn, is not an unbroken 10/13/16/19-digit run starting with 1 (epoch seconds, milliseconds, …), and,
 * when grouped, every group has 3–6 digits (real layouts: 4-4-4-4, 4-6-5, 4-6-4, 4-4-4-4-3; a list of dates or
 * a version does not qualify). The number must not be glued to a word (`\b` on both sides).
 *
 * Scanned by hand rather than with `\b(?:\d[ -]?){13,19}\b`: the regex's greedy candidate swallows a
 * neighbouring number (`4242 4242 4242 4242 1` fails Luhn as 17 digits and the card leaks), and refused
 * candidates on `1 1 1 …` cost a rescan each. Here each run of groups is read once and every window of
 * consecutive groups is tried, leftmost first, longest first; a window holds at most 6 groups (or 1).
 * A separator right after the card is swallowed when a letter follows it (`[masked:card]today`, as the
 * reference vectors pin).
 */
import { maskMarker } from '../types.js';
import { type Rule, isAlpha, isDigit, isWord } from './rule.js';

/**
 * True when a string of decimal digits passes the Luhn check, as a payment card number does; the card rule
 * masks only such numbers.
 * @see docs/middleware/redact.md
 * @example
 * ```ts
 * import { luhn } from 'mcpware/lib';
 *
 * console.log(luhn('4111111111111111'), luhn('4111111111111112')); // true false
 * ```
 */
export function luhn(digits: string): boolean {
  let sum = 0;
  let dbl = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48;
    if (dbl) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    dbl = !dbl;
  }
  return sum % 10 === 0;
}

const isSep = (c: number): boolean => c === 32 || c === 45;

/** The best card window in one run of groups (`starts[i]`..`ends[i]` are digit groups), or null. */
function cardInRun(s: string, starts: number[], ends: number[]): { start: number; end: number } | null {
  const g = starts.length;
  for (let i = 0; i < g; i++) {
    let best = -1;
    let digits = 0;
    for (let j = i; j < g && j < i + 6; j++) {
      const len = ends[j]! - starts[j]!;
      digits += len;
      if (digits > 19) break;
      const multi = j > i;
      if (multi) {
        const first = ends[i]! - starts[i]!;
        if (len < 3 || len > 6 || first < 3 || first > 6) break;
      }
      if (digits < 13) continue;
      const text = s.slice(starts[i], ends[j]).replace(/[ -]/g, '');
      if (!multi && text.charCodeAt(0) === 49 && (len === 10 || len === 13 || len === 16 || len === 19))
        continue;
      if (luhn(text)) best = j;
    }
    if (best >= 0) return { start: starts[i]!, end: ends[best]! };
  }
  return null;
}

export const cardRule: Rule = {
  name: 'card',
  pass: 'card',
  next(s, from) {
    const n = s.length;
    let i = from;
    while (i < n) {
      if (!isDigit(s.charCodeAt(i))) {
        i++;
        continue;
      }
      // A run of digit groups joined by single separators, starting at i.
      const starts: number[] = [];
      const ends: number[] = [];
      let total = 0;
      let k = i;
      for (;;) {
        const gs = k;
        while (k < n && isDigit(s.charCodeAt(k))) k++;
        starts.push(gs);
        ends.push(k);
        total += k - gs;
        if (k + 1 < n && isSep(s.charCodeAt(k)) && isDigit(s.charCodeAt(k + 1))) k++;
        else break;
      }
      if (total >= 13) {
        // `\b` on both sides: a word glued on the left rules out windows starting at the first group, one glued
        // on the right rules out windows ending at the last.
        const lo = i > 0 && isWord(s.charCodeAt(i - 1)) ? 1 : 0;
        const hi = k < n && isWord(s.charCodeAt(k)) ? starts.length - 1 : starts.length;
        const hit = hi > lo ? cardInRun(s, starts.slice(lo, hi), ends.slice(lo, hi)) : null;
        if (hit) {
          let end = hit.end;
          if (
            end + 1 < n &&
            isSep(s.charCodeAt(end)) &&
            (isAlpha(s.charCodeAt(end + 1)) || s.charCodeAt(end + 1) === 95)
          )
            end++;
          return { start: hit.start, end, replacement: maskMarker('card') };
        }
      }
      i = k;
    }
    return null;
  },
};
