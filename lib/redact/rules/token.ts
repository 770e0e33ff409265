/**
 * token: a secret-looking parameter name (optionally prefixed: `private_token`, `client_secret`, `X-Api-Key`)
 * or `Bearer`, separators, then a value of 12+ token characters. Only the value is masked.
 */
import { maskMarker } from '../types.js';
import { type Rule, isWord } from './rule.js';

const TOKEN_RE =
  /\b((?:[a-z0-9]{1,32}[_-]){0,3}(?:bearer|token|api[_-]?key|access[_-]?key|private[_-]?key|secret|password|passwd|credentials?)["'\s:=]{1,8})([A-Za-z0-9._~+/=-]{12,256})/gi;

/** A character of a token value: [A-Za-z0-9._~+/=-]. */
export const isTokenChar = (c: number): boolean =>
  isWord(c) || c === 46 || c === 126 || c === 43 || c === 47 || c === 61 || c === 45;

export const tokenRule: Rule = {
  name: 'token',
  pass: 'token',
  next(s, from) {
    TOKEN_RE.lastIndex = from;
    const m = TOKEN_RE.exec(s);
    if (!m) return null;
    const start = m.index + m[1]!.length;
    // The pattern caps the value at 256 characters to stay bounded; a longer value is still masked whole.
    let end = m.index + m[0].length;
    while (end < s.length && isTokenChar(s.charCodeAt(end))) end++;
    return { start, end, replacement: maskMarker('token') };
  },
};
