/**
 * pem: `-----BEGIN <LABEL>-----` … `-----END <LABEL>-----`, the whole block. A BEGIN without a valid END
 * masks everything after it: a cut key is still a key.
 */
import { maskMarker } from '../types.js';
import type { Rule } from './rule.js';

export const PEM_BEGIN = '-----BEGIN ';
const PEM_END = '-----END ';

/** Length of `<LABEL>-----` at `i` (label: 1–64 of [A-Z ]), or -1. */
function pemLabel(s: string, i: number): number {
  let j = i;
  const stop = Math.min(s.length, i + 64);
  while (j < stop) {
    const c = s.charCodeAt(j);
    if ((c >= 65 && c <= 90) || c === 32) j++;
    else break;
  }
  if (j === i || !s.startsWith('-----', j)) return -1;
  return j + 5 - i;
}

/**
 * The first valid `-----END <LABEL>-----` at or after `pos`, or -1. `state` remembers the last answer, so many
 * BEGINs without an END cost one forward scan, not one each (positions only grow within a scan).
 */
function pemEnd(s: string, pos: number, state: Record<string, number>): number {
  const memoFrom = state.endFrom;
  const memoAt = state.endAt;
  if (memoFrom !== undefined && memoAt !== undefined && pos >= memoFrom && (memoAt === -1 || memoAt >= pos)) {
    return memoAt;
  }
  let k = s.indexOf(PEM_END, pos);
  while (k >= 0 && pemLabel(s, k + PEM_END.length) < 0) k = s.indexOf(PEM_END, k + 1);
  state.endFrom = pos;
  state.endAt = k;
  return k;
}

export const pemRule: Rule = {
  name: 'pem',
  pass: 'pem',
  next(s, from, _opts, state) {
    let i = s.indexOf(PEM_BEGIN, from);
    while (i >= 0) {
      const l = pemLabel(s, i + PEM_BEGIN.length);
      if (l > 0) {
        const k = pemEnd(s, i + PEM_BEGIN.length + l, state);
        if (k < 0) return { start: i, end: s.length, replacement: maskMarker('pem') };
        return {
          start: i,
          end: k + PEM_END.length + pemLabel(s, k + PEM_END.length),
          replacement: maskMarker('pem'),
        };
      }
      i = s.indexOf(PEM_BEGIN, i + 1);
    }
    return null;
  },
};
