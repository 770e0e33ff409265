/**
 * The redaction engine: seven rules that find secrets and personal data in text, masks for them, and a walk
 * over JSON values. Pure: no I/O.
 *
 * Rules run in a fixed order, the more specific first, each on the output of the one before (mask mode):
 * `jwt`, `pem`, `email`, `token`, `card`, `phone`, `ip`. So `Bearer <jwt>` becomes `Bearer [masked:jwt]`: the
 * token rule then sees a marker (it starts with `[`) and leaves it alone. In warn mode every rule sees the
 * original text and only counts.
 *
 * Cost is linear in the input. No pattern has an unbounded or nested repetition that can backtrack: the
 * `jwt`, `pem`, `email`, `card` and IPv6 scanners are hand-written loops anchored on a literal or a digit run
 * (`eyJ`, `-----BEGIN `, `@`, digits, `:`), and the remaining regular expressions (`token`, `phone`, IPv4)
 * have bounded repeats over disjoint character classes. A cheap gate per rule (a substring or a digit count)
 * skips the rule entirely when it cannot match; gates never change results.
 *
 * Strings longer than `maxLength` are not scanned past it. In mask mode the string is cut: the engine scans a
 * window {@link REDACT_GUARD} characters longer than the cap, drops the last `REDACT_GUARD` characters of the
 * masked window (where a secret cut in half by the window could sit unrecognized), and appends
 * {@link TRUNCATED_MARKER}. Nothing beyond the cap is ever returned unscanned. In warn mode the string is
 * returned unchanged and only the window is counted.
 */

/** Rule names in the order they run. */
export const RULE_NAMES = Object.freeze(['jwt', 'pem', 'email', 'token', 'card', 'phone', 'ip'] as const);
export type RuleName = (typeof RULE_NAMES)[number];

/** `off`: nothing is scanned. `warn`: matches are counted, nothing changes. `mask`: matches are replaced. */
export type RedactMode = 'off' | 'warn' | 'mask';
export const REDACT_MODES: readonly RedactMode[] = Object.freeze(['off', 'warn', 'mask']);

/** Default cap on the characters scanned per string (1 MiB of UTF-16 code units). */
export const DEFAULT_REDACT_MAX_LENGTH = 1024 * 1024;
/** Default nesting depth walked by {@link Redactor.value}. */
export const DEFAULT_REDACT_MAX_DEPTH = 64;
/** Appended to a string cut at `maxLength` (mask mode). */
export const TRUNCATED_MARKER = '[truncated]';
/** Replaces a subtree deeper than `maxDepth` (mask mode): it was not scanned, so it must not leave. */
export const TOO_DEEP_MARKER = '[masked:too_deep]';
/**
 * Extra characters scanned past a cut, then dropped: a secret straddling the cut is either recognized whole
 * (and masked) or falls entirely into the dropped part. Longer than any bounded secret shape we recognize
 * (an e-mail is at most 64 + 1 + 63 characters before its domain's dot).
 */
export const REDACT_GUARD = 256;

/** The marker that replaces a match of `rule`. */
export function maskMarker(rule: RuleName | string): string {
  return `[masked:${rule}]`;
}

export interface RedactOptions {
  /** Default `mask`. */
  mode?: RedactMode;
  /** Rules to apply (any order; they always run in {@link RULE_NAMES} order). Default: all. */
  rules?: readonly RuleName[];
  /** Mask an e-mail's domain too (`[masked:email]` instead of `s***@acme.com`). Default false. */
  maskEmailDomain?: boolean;
  /** Characters scanned per string; see the module comment for what happens past it. Default 1 MiB. */
  maxLength?: number;
  /** Nesting depth walked in values; deeper subtrees become {@link TOO_DEEP_MARKER} in mask mode. Default 64. */
  maxDepth?: number;
}

/** Hits per rule, accumulated over one or more calls. */
export interface RedactTally {
  hits: Record<RuleName, number>;
  /** Strings cut at `maxLength` (mask) or scanned only up to it (warn). */
  truncated: number;
  /** Subtrees replaced (mask) or skipped (warn) because they were deeper than `maxDepth`. */
  tooDeep: number;
}

export interface RedactResult {
  hits: Partial<Record<RuleName, number>>;
  total: number;
  /** The rules that matched at least once, in rule order. */
  fired: RuleName[];
  truncated: number;
  tooDeep: number;
}

export interface Redactor {
  readonly mode: RedactMode;
  readonly rules: readonly RuleName[];
  /** Mask (or count) one string. Never throws. Pass a tally to accumulate over several calls. */
  text(s: string, tally?: RedactTally): { text: string; result: RedactResult };
  /**
   * Walk a JSON-like value: strings are masked, object keys never; numbers, booleans and null are kept.
   * Copy-on-write: containers are copied only where something changed, the input is never mutated.
   */
  value<T>(v: T, tally?: RedactTally): { value: T; result: RedactResult };
}

export type CompileResult =
  | { ok: true; redactor: Redactor }
  | {
      ok: false;
      reason: 'unknown_mode' | 'unknown_rule' | 'bad_option';
      option: string;
      value: unknown;
      message: string;
    };

/** A fresh tally: pass it to several `text`/`value` calls to add their hits up. */
export function newTally(): RedactTally {
  return { hits: { jwt: 0, pem: 0, email: 0, token: 0, card: 0, phone: 0, ip: 0 }, truncated: 0, tooDeep: 0 };
}

/** The result view of a tally: hits of the rules that fired, their total, and their names in rule order. */
export function redactResultOf(t: RedactTally): RedactResult {
  const hits: Partial<Record<RuleName, number>> = {};
  const fired: RuleName[] = [];
  let total = 0;
  for (const r of RULE_NAMES) {
    const n = t.hits[r];
    if (n > 0) {
      hits[r] = n;
      fired.push(r);
      total += n;
    }
  }
  return { hits, total, fired, truncated: t.truncated, tooDeep: t.tooDeep };
}

/**
 * Parse a mode as an operator writes it (an environment variable): trimmed, case-folded; `off`, `warn`,
 * `mask`/`redact`. Anything else → undefined, including the empty string: unlike mcpkit (where `""` means
 * off), an empty variable must not silently switch masking off.
 */
export function parseRedactMode(s: string): RedactMode | undefined {
  if (typeof s !== 'string') return undefined;
  const v = s.trim().toLowerCase();
  if (v === 'off') return 'off';
  if (v === 'warn') return 'warn';
  if (v === 'mask' || v === 'redact') return 'mask';
  return undefined;
}

// ---------------------------------------------------------------------------------------------------------------
// Character classes (ASCII, as the rules are ASCII-defined).

const isDigit = (c: number): boolean => c >= 48 && c <= 57;
const isAlpha = (c: number): boolean => (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
/** `\w` in JS without the `u` flag: [A-Za-z0-9_]. */
const isWord = (c: number): boolean => isAlpha(c) || isDigit(c) || c === 95;
/** base64url: [A-Za-z0-9_-]. */
const isB64url = (c: number): boolean => isWord(c) || c === 45;
const isHex = (c: number): boolean => isDigit(c) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102);
/** A letter in any script, for the IPv4 "not glued to a word" check. */
const LETTER = /\p{L}/u;

interface Hit {
  start: number;
  end: number;
  replacement: string;
}
interface Rule {
  name: RuleName;
  /** False when the rule cannot match `s` (a pure optimisation). */
  gate(s: string): boolean;
  /**
   * The next accepted match starting at or after `from`, or null. Calls are made with increasing `from`;
   * `state` is a fresh object per scan of one string (for memos).
   */
  next(s: string, from: number, opts: EngineOptions, state: Record<string, number>): Hit | null;
}
interface EngineOptions {
  maskEmailDomain: boolean;
}

// ---------------------------------------------------------------------------------------------------------------
// jwt: `eyJ` at a word boundary, then header `.` payload `.` signature (base64url). Also two segments when the
// payload starts with `eyJ` too (an unsigned or cut token still carries its claims).

const jwtRule: Rule = {
  name: 'jwt',
  gate: (s) => s.includes('eyJ'),
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

// ---------------------------------------------------------------------------------------------------------------
// pem: `-----BEGIN <LABEL>-----` … `-----END <LABEL>-----`, the whole block. A BEGIN without a valid END
// masks everything after it: a cut key is still a key.

const PEM_BEGIN = '-----BEGIN ';
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

const pemRule: Rule = {
  name: 'pem',
  gate: (s) => s.includes(PEM_BEGIN),
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

// ---------------------------------------------------------------------------------------------------------------
// email: local part (1–64 of [\w.+-], starting with \w) `@` label (1–63 of [\w-]) `.` rest (2–253 of [\w.-],
// ending on a word character). Mask: first character of the local part + `***@` + domain.

const isLocal = (c: number): boolean => isWord(c) || c === 46 || c === 43 || c === 45;
const isDomainRest = (c: number): boolean => isWord(c) || c === 46 || c === 45;

const emailRule: Rule = {
  name: 'email',
  gate: (s) => s.includes('@'),
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

// ---------------------------------------------------------------------------------------------------------------
// token: a secret-looking parameter name (optionally prefixed: `private_token`, `client_secret`, `X-Api-Key`)
// or `Bearer`, separators, then a value of 12+ token characters. Only the value is masked.

const TOKEN_RE =
  /\b((?:[a-z0-9]{1,32}[_-]){0,3}(?:bearer|token|api[_-]?key|access[_-]?key|private[_-]?key|secret|password|passwd|credentials?)["'\s:=]{1,8})([A-Za-z0-9._~+/=-]{12,256})/gi;
const TOKEN_GATE = /bearer|token|key|secret|passw|credential/i;
const isTokenChar = (c: number): boolean =>
  isWord(c) || c === 46 || c === 126 || c === 43 || c === 47 || c === 61 || c === 45;

const tokenRule: Rule = {
  name: 'token',
  gate: (s) => TOKEN_GATE.test(s),
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

// ---------------------------------------------------------------------------------------------------------------
// card: 13–19 digits, either one unbroken run or groups joined by single spaces or dashes. Accepted when it
// passes Luhn, is not an unbroken 10/13/16/19-digit run starting with 1 (epoch seconds, milliseconds, …), and,
// when grouped, every group has 3–6 digits (real layouts: 4-4-4-4, 4-6-5, 4-6-4, 4-4-4-4-3; a list of dates or
// a version does not qualify). The number must not be glued to a word (`\b` on both sides).
//
// Scanned by hand rather than with `\b(?:\d[ -]?){13,19}\b`: the regex's greedy candidate swallows a
// neighbouring number (`4242 4242 4242 4242 1` fails Luhn as 17 digits and the card leaks), and refused
// candidates on `1 1 1 …` cost a rescan each. Here each run of groups is read once and every window of
// consecutive groups is tried, leftmost first, longest first; a window holds at most 6 groups (or 1).
// A separator right after the card is swallowed when a letter follows it (`[masked:card]today`, as the
// reference vectors pin).

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

const cardRule: Rule = {
  name: 'card',
  gate: (s) => countDigits(s, 13),
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

// ---------------------------------------------------------------------------------------------------------------
// phone: international (`+` digit … digit, 9–19 characters) or the `8 XXX XXX-XX-XX` national form; 9–15
// digits in the match.

const PHONE_RE = /\+\d[\d\s().-]{7,17}\d|\b8[\s(-]?\d{3}[\s)-]?\d{3}[\s-]?\d{2}[\s-]?\d{2}\b/g;

const phoneRule: Rule = {
  name: 'phone',
  gate: (s) => countDigits(s, 9),
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

// ---------------------------------------------------------------------------------------------------------------
// ip: IPv6 (validated), then IPv4 (every octet ≤ 255, not glued to a letter or a longer dotted number).

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

// IPv6 and IPv4 are one rule, applied as two passes (IPv6 first, so `::ffff:1.2.3.4` is masked whole).
const ipv6Rule: Rule = {
  name: 'ip',
  gate: (s) => s.includes(':') && countDigits(s, 1),
  next: (s, from) => nextIPv6(s, from),
};
const ipv4Rule: Rule = {
  name: 'ip',
  gate: (s) => countDigits(s, 4),
  next: (s, from) => nextIPv4(s, from),
};

/** True when `s` has at least `min` ASCII digits. */
function countDigits(s: string, min: number): boolean {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    if (isDigit(s.charCodeAt(i)) && ++n >= min) return true;
  }
  return false;
}

// ---------------------------------------------------------------------------------------------------------------
// The engine.

/** Run one rule over `s`: returns the new text (unchanged unless masking) and adds hits to the tally. */
function runRule(rule: Rule, s: string, mask: boolean, opts: EngineOptions, tally: RedactTally): string {
  if (!rule.gate(s)) return s;
  const state: Record<string, number> = {};
  let from = 0;
  let last = 0;
  let out = '';
  let hits = 0;
  while (from <= s.length) {
    const h = rule.next(s, from, opts, state);
    if (!h) break;
    hits++;
    if (mask) {
      out += s.slice(last, h.start) + h.replacement;
      last = h.end;
    }
    from = h.end > h.start ? h.end : h.start + 1;
  }
  tally.hits[rule.name] += hits;
  return mask && hits > 0 ? out + s.slice(last) : s;
}

/** Compile options into a redactor, or say which option is wrong. */
export function compileRedactor(options: RedactOptions = {}): CompileResult {
  const mode = options.mode ?? 'mask';
  if (!REDACT_MODES.includes(mode)) {
    return {
      ok: false,
      reason: 'unknown_mode',
      option: 'mode',
      value: mode,
      message: `unknown mode ${JSON.stringify(mode)}, want one of off, warn, mask`,
    };
  }
  let rules: RuleName[] = [...RULE_NAMES];
  if (options.rules !== undefined) {
    if (!Array.isArray(options.rules)) {
      return {
        ok: false,
        reason: 'bad_option',
        option: 'rules',
        value: options.rules,
        message: 'rules must be an array of rule names',
      };
    }
    const want = new Set<RuleName>();
    for (const r of options.rules as unknown[]) {
      const name = typeof r === 'string' ? r.trim().toLowerCase() : r;
      if (typeof name !== 'string' || !(RULE_NAMES as readonly string[]).includes(name)) {
        return {
          ok: false,
          reason: 'unknown_rule',
          option: 'rules',
          value: r,
          message: `unknown rule ${JSON.stringify(r)}, want one of ${RULE_NAMES.join(', ')}`,
        };
      }
      want.add(name as RuleName);
    }
    if (want.size > 0) rules = RULE_NAMES.filter((n) => want.has(n));
  }
  const maskEmailDomain = options.maskEmailDomain ?? false;
  if (typeof maskEmailDomain !== 'boolean') {
    return {
      ok: false,
      reason: 'bad_option',
      option: 'maskEmailDomain',
      value: maskEmailDomain,
      message: 'maskEmailDomain must be a boolean',
    };
  }
  const maxLength = options.maxLength ?? DEFAULT_REDACT_MAX_LENGTH;
  if (!Number.isSafeInteger(maxLength) || maxLength < 1) {
    return {
      ok: false,
      reason: 'bad_option',
      option: 'maxLength',
      value: maxLength,
      message: 'maxLength must be a positive integer',
    };
  }
  const maxDepth = options.maxDepth ?? DEFAULT_REDACT_MAX_DEPTH;
  if (!Number.isSafeInteger(maxDepth) || maxDepth < 1) {
    return {
      ok: false,
      reason: 'bad_option',
      option: 'maxDepth',
      value: maxDepth,
      message: 'maxDepth must be a positive integer',
    };
  }
  return { ok: true, redactor: makeRedactor(mode, rules, { maskEmailDomain }, maxLength, maxDepth) };
}

function makeRedactor(
  mode: RedactMode,
  rules: readonly RuleName[],
  opts: EngineOptions,
  maxLength: number,
  maxDepth: number,
): Redactor {
  const chain: Rule[] = [];
  for (const name of rules) {
    if (name === 'jwt') chain.push(jwtRule);
    else if (name === 'pem') chain.push(pemRule);
    else if (name === 'email') chain.push(emailRule);
    else if (name === 'token') chain.push(tokenRule);
    else if (name === 'card') chain.push(cardRule);
    else if (name === 'phone') chain.push(phoneRule);
    else chain.push(ipv6Rule, ipv4Rule);
  }
  const mask = mode === 'mask';

  const scan = (s: string, tally: RedactTally): string => {
    if (mode === 'off' || s.length === 0) return s;
    let window = s;
    const cut = s.length > maxLength;
    if (cut) {
      tally.truncated++;
      // Never split a surrogate pair at the window's edge.
      let w = Math.min(s.length, maxLength + REDACT_GUARD);
      if (w < s.length && isHighSurrogate(s.charCodeAt(w - 1))) w--;
      window = s.slice(0, w);
    }
    let out = window;
    try {
      for (const r of chain) out = runRule(r, out, mask, opts, tally);
    } catch {
      // The rules are total functions; this is a last line of defence so a bug can never leak or crash.
      // Fail closed: nothing of an unscannable string leaves in mask mode.
      return mask ? maskMarker('error') : s;
    }
    if (!mask) return s;
    if (!cut) return out;
    let keep = Math.max(0, out.length - REDACT_GUARD);
    if (keep > 0 && isHighSurrogate(out.charCodeAt(keep - 1))) keep--;
    return out.slice(0, keep) + TRUNCATED_MARKER;
  };

  const walk = (v: unknown, depth: number, tally: RedactTally): unknown => {
    if (typeof v === 'string') return scan(v, tally);
    if (v === null || typeof v !== 'object') return v;
    if (depth >= maxDepth) {
      tally.tooDeep++;
      return mask ? TOO_DEEP_MARKER : v;
    }
    if (Array.isArray(v)) {
      let copy: unknown[] | undefined;
      for (let i = 0; i < v.length; i++) {
        const x: unknown = v[i];
        const y = walk(x, depth + 1, tally);
        if (y !== x) {
          copy ??= v.slice();
          copy[i] = y;
        }
      }
      return copy ?? v;
    }
    // Walk what JSON.stringify would send: the result of toJSON() when there is one, else own enumerable keys.
    const json = (v as { toJSON?: unknown }).toJSON;
    if (typeof json === 'function') {
      const j: unknown = json.call(v);
      const y = walk(j, depth + 1, tally); // depth + 1: a toJSON returning `this` must still terminate
      return y === j ? v : y;
    }
    let copy: Record<string, unknown> | undefined;
    const obj = v as Record<string, unknown>;
    for (const k of Object.keys(obj)) {
      const x = obj[k];
      const y = walk(x, depth + 1, tally);
      if (y !== x) {
        copy ??= { ...obj };
        // defineProperty, not assignment: a key named `__proto__` must stay an own data property.
        Object.defineProperty(copy, k, { value: y, enumerable: true, writable: true, configurable: true });
      }
    }
    return copy ?? v;
  };

  return {
    mode,
    rules,
    text(s, tally) {
      const t = tally ?? newTally();
      const text = typeof s === 'string' ? scan(s, t) : s;
      return { text, result: redactResultOf(t) };
    },
    value<T>(v: T, tally?: RedactTally) {
      const t = tally ?? newTally();
      let out: unknown;
      try {
        out = mode === 'off' ? v : walk(v, 0, t);
      } catch {
        out = mask ? maskMarker('error') : v;
      }
      return { value: out as T, result: redactResultOf(t) };
    },
  };
}

const isHighSurrogate = (c: number): boolean => c >= 0xd800 && c <= 0xdbff;

/**
 * Mask one string with the given options. Bad options return the input unchanged and an empty result (the
 * package-level convenience never throws; use {@link compileRedactor} to see the error).
 */
export function redactText(s: string, options: RedactOptions = {}): { text: string; result: RedactResult } {
  const c = compileRedactor(options);
  if (!c.ok) return { text: s, result: redactResultOf(newTally()) };
  return c.redactor.text(s);
}

/** Walk a value with the given options (see {@link Redactor.value}); bad options return it unchanged. */
export function redactValue<T>(v: T, options: RedactOptions = {}): { value: T; result: RedactResult } {
  const c = compileRedactor(options);
  if (!c.ok) return { value: v, result: redactResultOf(newTally()) };
  return c.redactor.value(v);
}
