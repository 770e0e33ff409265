/**
 * jwt: `eyJ` at a word boundary, then header `.` payload `.` signature (base64url). Also two segments when the
 * payload starts with `eyJ` too (an unsigned or cut token still carries its claims).
 */
import { maskMarker } from '../types.js';
import { type Rule, isB64url, isWord } from './rule.js';

export const jwtRule: Rule = {
  name: 'jwt',
  pass: 'jwt',
  next(s, from) {
    let i = s.indexOf('eyJ', from);
    while (i >= 0) {
      if (i > 0 && isWord(s.charCodeAt(i - 1))) {
        i = s.indexOf('eyJ', i + 1);
        continue;
      }
      const n = s.length;
      let h = i + 3;
      while (h < n && isB64url(s.charCodeAt(h))) h++;
      if (h - (i + 3) >= 5 && s.charCodeAt(h) === 46) {
        let p = h + 1;
        while (p < n && isB64url(s.charCodeAt(p))) p++;
        if (p - (h + 1) >= 5) {
          if (s.charCodeAt(p) === 46) {
            let g = p + 1;
            while (g < n && isB64url(s.charCodeAt(g))) g++;
            if (g > p + 1) return { start: i, end: g, replacement: maskMarker('jwt') };
          }
          if (s.startsWith('eyJ', h + 1)) return { start: i, end: p, replacement: maskMarker('jwt') };
        }
      }
      // Any later `eyJ` inside the same base64url run ends at the same place and has a shorter header, so it
      // fails the same way: skip the run (this keeps the scan linear on `eyJ-eyJ-eyJ-…`).
      i = s.indexOf('eyJ', Math.max(h, i + 1));
    }
    return null;
  },
};
