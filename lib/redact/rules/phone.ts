/**
 * phone: international (`+` digit … digit, 9–19 characters) or the `8 XXX XXX-XX-XX` national form; 9–15
 * digits in the match.
 */
import { maskMarker } from '../types.js';
import type { Rule } from './rule.js';

const PHONE_RE = /\+\d[\d\s().-]{7,17}\d|\b8[\s(-]?\d{3}[\s)-]?\d{3}[\s-]?\d{2}[\s-]?\d{2}\b/g;

export const phoneRule: Rule = {
  name: 'phone',
  pass: 'phone',
  next(s, from) {
    PHONE_RE.lastIndex = from;
    for (;;) {
      const m = PHONE_RE.exec(s);
      if (!m) return null;
      const d = m[0].replace(/\D/g, '').length;
      if (d >= 9 && d <= 15)
        return { start: m.index, end: m.index + m[0].length, replacement: maskMarker('phone') };
    }
  },
};
