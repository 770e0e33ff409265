/**
 * ip: IPv6 (validated), then IPv4 (every octet ≤ 255, not glued to a letter or a longer dotted number). One
 * rule, run as two passes: IPv6 first, so `::ffff:1.2.3.4` is masked whole.
 */
import { maskMarker } from '../types.js';
import { type Hit, LETTER, type Rule, isDigit, isHex, isWord } from './rule.js';

const IPV4_RE = /\b(?:\d{1,3}\.){3}\d{1,3}\b/g;

function isIPv4(s: string): boolean {
  const parts = s.split('.');
  if (parts.length !== 4) return false;
  for (const p of parts) {
    if (p.length < 1 || p.length > 3 || !/^\d+$/.test(p) || Number(p) > 255) return false;
  }
  return true;
}

/**
 * True for a textual IPv6 address (RFC 4291 §2.2: eight groups, `::` once, an IPv4 tail), with at least three
 * written groups (an IPv4 tail counts as two) and a decimal digit. The extra conditions keep `::1`, `fe80::1`,
 * Python slices (`a[1::2]`) and `dead::beef` out; they are not masked.
 */
export function isMaskableIPv6(s: string): boolean {
  if (s.length < 2 || s.length > 45 || !/\d/.test(s)) return false;
  let hex = s;
  const lastColon = s.lastIndexOf(':');
  const tail = s.slice(lastColon + 1);
  if (tail.includes('.')) {
    if (!isIPv4(tail)) return false;
    hex = s.slice(0, lastColon + 1) + '0:0'; // the tail stands for two groups
  }
  if (hex.includes('.')) return false;
  const dbl = hex.indexOf('::');
  if (dbl !== hex.lastIndexOf('::')) return false;
  const validGroup = (g: string): boolean => /^[0-9A-Fa-f]{1,4}$/.test(g);
  let groups: string[];
  if (dbl >= 0) {
    const left = hex.slice(0, dbl);
    const right = hex.slice(dbl + 2);
    const lg = left === '' ? [] : left.split(':');
    const rg = right === '' ? [] : right.split(':');
    groups = [...lg, ...rg];
    if (groups.length > 7) return false;
  } else {
    groups = hex.split(':');
    if (groups.length !== 8) return false;
  }
  if (!groups.every(validGroup)) return false;
  return groups.length >= 3;
}

const isIp6Char = (c: number): boolean => isHex(c) || c === 58 || c === 46;

function nextIPv6(s: string, from: number): Hit | null {
  const n = s.length;
  let i = s.indexOf(':', from);
  while (i >= 0) {
    // The maximal run of [0-9A-Fa-f:.] around this colon; a maskable address has at least two colons and a digit.
    let a = i;
    while (a > from && isIp6Char(s.charCodeAt(a - 1))) a--;
    let b = i + 1;
    let colons = 1;
    let digit = false;
    while (b < n && isIp6Char(s.charCodeAt(b))) {
      const c = s.charCodeAt(b);
      if (c === 58) colons++;
      else if (isDigit(c)) digit = true;
      b++;
    }
    if (colons >= 2 && (digit || /\d/.test(s.slice(a, i))) && b - a <= 46) {
      const before = a > 0 ? s.charCodeAt(a - 1) : 32;
      const after = b < n ? s.charCodeAt(b) : 32;
      if (!isWord(before) && !isWord(after) && !LETTER.test(String.fromCharCode(before))) {
        let e = b;
        while (e > a && s.charCodeAt(e - 1) === 46) e--; // a sentence's full stop
        let cand = s.slice(a, e);
        if (!isMaskableIPv6(cand) && cand.endsWith(':') && !cand.endsWith('::')) {
          e--;
          cand = s.slice(a, e);
        }
        if (isMaskableIPv6(cand)) return { start: a, end: e, replacement: maskMarker('ip') };
      }
    }
    i = s.indexOf(':', b);
  }
  return null;
}

function nextIPv4(s: string, from: number): Hit | null {
  IPV4_RE.lastIndex = from;
  for (;;) {
    const m = IPV4_RE.exec(s);
    if (!m) return null;
    const start = m.index;
    const end = start + m[0].length;
    if (!isIPv4(m[0])) continue;
    if (start > 0) {
      const prev = s[start - 1]!;
      if (prev === '.' || LETTER.test(prev)) continue;
    }
    if (s.charCodeAt(end) === 46 && isDigit(s.charCodeAt(end + 1))) continue;
    return { start, end, replacement: maskMarker('ip') };
  }
}

export const ipv6Rule: Rule = { name: 'ip', pass: 'ipv6', next: (s, from) => nextIPv6(s, from) };
export const ipv4Rule: Rule = { name: 'ip', pass: 'ipv4', next: (s, from) => nextIPv4(s, from) };
