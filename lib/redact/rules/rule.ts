/**
 * What a rule is to the engine: a scanner that finds the next match in a string, and the flag the prefilter
 * answers for it. The ASCII character classes the rules and the prefilter share are here too.
 * @see docs/middleware/redact.md
 */
import type { RuleName } from '../types.js';

/** One match: the span `[start, end)` of the text and what replaces it in mask mode. */
export interface Hit {
  start: number;
  end: number;
  replacement: string;
}

/** The options a rule reads. */
export interface RuleOptions {
  maskEmailDomain: boolean;
}

/**
 * The rule passes, in the order they run, with their flags in a `candidateRules` answer. Each rule is one pass
 * but `ip`, which is two: IPv6 first (so `::ffff:1.2.3.4` is masked whole), then IPv4.
 */
export const PASS_BITS = Object.freeze({
  jwt: 1,
  pem: 2,
  email: 4,
  token: 8,
  card: 16,
  phone: 32,
  ipv6: 64,
  ipv4: 128,
} as const);
export type PassName = keyof typeof PASS_BITS;

export interface Rule {
  /** The rule this pass belongs to: its tally entry. */
  readonly name: RuleName;
  /** This pass's name; its flag is `PASS_BITS[pass]`. */
  readonly pass: PassName;
  /**
   * The next accepted match starting at or after `from`, or null. Calls are made with increasing `from`;
   * `state` is a fresh object per scan of one string (for memos).
   */
  next(s: string, from: number, opts: RuleOptions, state: Record<string, number>): Hit | null;
}

export const isDigit = (c: number): boolean => c >= 48 && c <= 57;
export const isAlpha = (c: number): boolean => (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
/** `\w` in JS without the `u` flag: [A-Za-z0-9_]. */
export const isWord = (c: number): boolean => isAlpha(c) || isDigit(c) || c === 95;
/** base64url: [A-Za-z0-9_-]. */
export const isB64url = (c: number): boolean => isWord(c) || c === 45;
export const isHex = (c: number): boolean => isDigit(c) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102);
/** A letter in any script, for the "not glued to a word" checks of the ip rule. */
export const LETTER = /\p{L}/u;
