/**
 * email: local part (1–64 of [\w.+-], starting with \w) `@` label (1–63 of [\w-]) `.` rest (2–253 of [\w.-],
 * ending on a word character). Mask: first character of the local part + `***@` + domain.
 */
import { maskMarker } from '../types.js';
import { type Rule, isWord } from './rule.js';

/** A character of an e-mail's local part: [\w.+-]. */
export const isLocal = (c: number): boolean => isWord(c) || c === 46 || c === 43 || c === 45;
const isDomainRest = (c: number): boolean => isWord(c) || c === 46 || c === 45;

export const emailRule: Rule = {
  name: 'email',
  pass: 'email',
  next(s, from, opts) {
    const n = s.length;
    let at = s.indexOf('@', from);
    while (at >= 0) {
      // Local part: walk left over [\w.+-], at most 64, never into the previous match.
      let ls = at;
      const floor = Math.max(from, at - 64);
      while (ls > floor && isLocal(s.charCodeAt(ls - 1))) ls--;
      while (ls < at && !isWord(s.charCodeAt(ls))) ls++;
      if (ls < at) {
        let d = at + 1;
        const labelStop = Math.min(n, d + 63);
        while (d < labelStop && (isWord(s.charCodeAt(d)) || s.charCodeAt(d) === 45)) d++;
        if (d > at + 1 && s.charCodeAt(d) === 46) {
          const restAt = d + 1;
          let e = restAt;
          const restStop = Math.min(n, restAt + 253);
          while (e < restStop && isDomainRest(s.charCodeAt(e))) e++;
          while (e > restAt && !isWord(s.charCodeAt(e - 1))) e--; // end on a word boundary, as `\b` would
          if (e - restAt >= 2) {
            const replacement = opts.maskEmailDomain
              ? maskMarker('email')
              : `${s[ls]}***@${s.slice(at + 1, e)}`;
            return { start: ls, end: e, replacement };
          }
        }
      }
      at = s.indexOf('@', at + 1);
    }
    return null;
  },
};
