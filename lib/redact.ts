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
 * have bounded repeats over disjoint character classes. Before any rule runs, one prefilter pass over the string
 * (a character loop, no regular expression) works out which rules can possibly match it; the others are
 * skipped, and a string no rule can match comes back as is after that one pass. The prefilter never changes
 * results (see its comment). Each rule also has a cheap gate of its own, used only when the prefilter is off
 * (a reference path kept for the tests).
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
  /**
   * {@link Redactor.text} without the result: only the text, adding to `tally`. For hot paths that keep their
   * own tally; nothing is allocated when nothing matched (the same string comes back). Redactors made by
   * {@link compileRedactor} always have it; it is optional so hand-written `Redactor` objects (wrappers, test
   * doubles) stay valid: callers fall back to `text(s, tally).text`.
   */
  scanText?(s: string, tally: RedactTally): string;
  /** {@link Redactor.value} without the result, like {@link Redactor.scanText} (and optional for the same reason). */
  scanValue?<T>(v: T, tally: RedactTally): T;
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
  /** This rule's flag in a {@link candidateRules} answer. */
  bit: number;
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

/** Flags of {@link candidateRules}: one per rule pass (IPv6 and IPv4 are two passes of the `ip` rule). */
const CAN_JWT = 1;
const CAN_PEM = 2;
const CAN_EMAIL = 4;
const CAN_TOKEN = 8;
const CAN_CARD = 16;
const CAN_PHONE = 32;
const CAN_IPV6 = 64;
const CAN_IPV4 = 128;

// ---------------------------------------------------------------------------------------------------------------
// jwt: `eyJ` at a word boundary, then header `.` payload `.` signature (base64url). Also two segments when the
// payload starts with `eyJ` too (an unsigned or cut token still carries its claims).

const jwtRule: Rule = {
  name: 'jwt',
  bit: CAN_JWT,
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
  bit: CAN_PEM,
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
  bit: CAN_EMAIL,
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
  bit: CAN_TOKEN,
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
  bit: CAN_CARD,
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
  bit: CAN_PHONE,
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
  bit: CAN_IPV6,
  gate: (s) => s.includes(':') && countDigits(s, 1),
  next: (s, from) => nextIPv6(s, from),
};
const ipv4Rule: Rule = {
  name: 'ip',
  bit: CAN_IPV4,
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
// The prefilter: one pass over a string that tells which rules can possibly match it, so a clean string costs
// one linear scan instead of every rule's gate and scan. Each flag stands for a condition that every match of
// its rule needs (the flags over-approximate, never under-approximate), so skipping a rule whose flag is clear
// never changes the result; a set flag only means "run the rule". The conditions, and why each is necessary:
//
// - jwt: `eyJ` not preceded by a word character (the scanner skips any other `eyJ`).
// - pem: `-----BEGIN ` (the scanner starts there).
// - email: `@` with a local-part character before it and a word character or `-` after it (the scanner walks
//   the local part left from the `@` and the domain label right from it; both must be non-empty).
// - token: a run of ASCII letters that ends in a keyword's last word (`bearer`, `token`, `key`, `secret`,
//   `passwd`, `password`, `credential`, `credentials`, in any case) right before one of ["'\s:=], and somewhere
//   a run of 12 token characters (the value). The pattern puts one of ["'\s:=] right after the keyword, and
//   none of them is a letter, so the keyword ends a letter run; `api_key`-like names end in `key`. Without the
//   `u` flag, `i` never folds a non-ASCII character onto an ASCII one, so only ASCII letters count.
// - card: 13 digits in one run of digit groups joined by single spaces or dashes (what the scanner reads).
// - phone: 9 digits in one run of [\d\s().-]: after the `+` (international) or from the `8` (national) every
//   character of a match is in that class, and a match holds 9–15 digits.
// - IPv6: a run of [0-9A-Fa-f:.] with two colons and a digit (the scanner's own condition on that run).
// - IPv4: a run of [0-9.] with three dots and four digits (`\d{1,3}\.` three times, then `\d{1,3}`).
//
// The flags are computed once per string, on the text the first rule sees, though in mask mode each rule sees
// the previous rules' output. That is sound because masking never creates a candidate for a later rule:
// - a masked text is the original with some spans replaced by a marker `[masked:<rule>]` (or, for an e-mail,
//   the local part after its first character replaced by `***`), and `[`, `]` and `*` belong to no class
//   above, so every run of the masked text lies either inside a replacement or inside unchanged text;
// - a run inside unchanged text is part of a run of the original, with at most the same counts; a point
//   condition (`-----BEGIN `, `@` and its neighbours, a keyword and the separator after it) that holds there
//   held in the original too, as a replacement's first and last characters fail all of them; the `eyJ`
//   boundary is the exception, but jwt is the first rule, so it always sees the original;
// - inside a marker there are no digits, no `@`, no `-----BEGIN `, no token run of 12, and no keyword before a
//   separator (`masked:` is the only letter run followed by one).
// The tests check the markers against this, and the engine with and without the prefilter against each other.

/** Character classes of ASCII code units for the prefilter, as bit sets. */
const K_DIGIT = 1;
const K_ALPHA = 2; // [A-Za-z]
const K_HEX_ALPHA = 4; // [A-Fa-f]
const K_TOKEN = 8; // [A-Za-z0-9._~+/=-]: the token rule's value characters
const K_PHONE_SEP = 16; // [\s().-] (ASCII part): what the phone pattern allows between digits
const K_IPV6 = 32; // [0-9A-Fa-f:.]
const K_MARK = 64; // `J` and `B`: the letters the jwt and pem anchors are checked on
const K_TOKEN_SEP = 128; // ["'\s:=] (ASCII part): what the token pattern allows between a keyword and the value
const CHAR_CLASS = ((): Uint8Array => {
  const t = new Uint8Array(128);
  for (let c = 0; c < 128; c++) {
    let k = 0;
    if (isDigit(c)) k |= K_DIGIT | K_TOKEN | K_IPV6;
    if (isAlpha(c)) k |= K_ALPHA | K_TOKEN;
    if (isAlpha(c) && isHex(c)) k |= K_HEX_ALPHA | K_IPV6;
    if (isTokenChar(c)) k |= K_TOKEN;
    if ((c >= 9 && c <= 13) || c === 32 || c === 40 || c === 41 || c === 46 || c === 45) k |= K_PHONE_SEP;
    if (c === 58 || c === 46) k |= K_IPV6;
    if (c === 74 || c === 66) k |= K_MARK;
    if ((c >= 9 && c <= 13) || c === 32 || c === 34 || c === 39 || c === 58 || c === 61) k |= K_TOKEN_SEP;
    t[c] = k;
  }
  return t;
})();

/** `\s` (without the `u` flag) beyond ASCII: these continue a phone run; every other non-ASCII unit ends all runs. */
const isNonAsciiSpace = (c: number): boolean =>
  c === 0xa0 ||
  c === 0x1680 ||
  (c >= 0x2000 && c <= 0x200a) ||
  c === 0x2028 ||
  c === 0x2029 ||
  c === 0x202f ||
  c === 0x205f ||
  c === 0x3000 ||
  c === 0xfeff;

/** True when the ASCII-letter run `s[start, end)` ends with `word` (lower case), in any case. */
function endsWithWord(s: string, start: number, end: number, word: string): boolean {
  const n = word.length;
  if (end - start < n) return false;
  for (let j = 0; j < n; j++) {
    if ((s.charCodeAt(end - n + j) | 32) !== word.charCodeAt(j)) return false;
  }
  return true;
}

/** True when the letter run `s[start, end)` ends with a token keyword's last word (see the list above). */
function endsWithKeyword(s: string, start: number, end: number): boolean {
  switch (s.charCodeAt(end - 1) | 32) {
    case 114: // r
      return endsWithWord(s, start, end, 'bearer');
    case 110: // n
      return endsWithWord(s, start, end, 'token');
    case 121: // y
      return endsWithWord(s, start, end, 'key');
    case 116: // t
      return endsWithWord(s, start, end, 'secret');
    case 100: // d
      return endsWithWord(s, start, end, 'passwd') || endsWithWord(s, start, end, 'password');
    case 108: // l
      return endsWithWord(s, start, end, 'credential');
    case 115: // s
      return endsWithWord(s, start, end, 'credentials');
    default:
      return false;
  }
}

/**
 * The rule passes that can possibly match `s`, as `CAN_*` flags; 0 when none can. One linear scan with a few
 * counters of the current runs; no regular expression.
 */
function candidateRules(s: string): number {
  const n = s.length;
  let found = 0;
  let letters = -1; // start of the current run of ASCII letters, or -1
  let keyword = false; // a letter run ended in a token keyword
  let tokenRun = 0; // length of the current run of token characters
  let longTokenRun = false; // a run of 12 token characters was seen
  let cardDigits = 0; // digits in the current run of digit groups joined by single spaces or dashes
  let phoneDigits = 0; // digits in the current run of [\d\s().-]
  let ip6Colons = 0; // colons and digits in the current run of [0-9A-Fa-f:.]
  let ip6Digits = 0;
  let ip4Dots = 0; // dots and digits in the current run of [0-9.]
  let ip4Digits = 0;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    const k = c < 128 ? CHAR_CLASS[c]! : isNonAsciiSpace(c) ? K_PHONE_SEP | K_TOKEN_SEP : 0;
    if (k & K_ALPHA) {
      // Letters are most of any text: only note where their run starts; it is accounted for as a whole below,
      // at its end. `J` and `B` (the jwt and pem anchors) are looked at here.
      if (letters < 0) letters = i;
      if (k & K_MARK) found |= markedLetter(s, i, c);
      continue;
    }
    if (letters >= 0) {
      // The letter run s[letters, i) ends: it continues the token run, ends every digit run, and ends the IPv6
      // run unless all its letters are hex digits (only looked at when an IPv6 run is under way).
      tokenRun += i - letters;
      if (tokenRun >= 12) longTokenRun = true;
      cardDigits = 0;
      phoneDigits = 0;
      ip4Dots = 0;
      ip4Digits = 0;
      if ((ip6Colons !== 0 || ip6Digits !== 0) && !allHex(s, letters, i)) {
        ip6Colons = 0;
        ip6Digits = 0;
      }
      if (!keyword && (k & K_TOKEN_SEP) !== 0 && i - letters >= 3) keyword = endsWithKeyword(s, letters, i);
      letters = -1;
    }
    if (k & K_DIGIT) {
      if (++tokenRun >= 12) longTokenRun = true;
      if (++cardDigits >= 13) found |= CAN_CARD;
      if (++phoneDigits >= 9) found |= CAN_PHONE;
      if (++ip4Digits >= 4 && ip4Dots >= 3) found |= CAN_IPV4;
      ip6Digits++;
      if (ip6Colons >= 2) found |= CAN_IPV6;
      continue;
    }
    // Punctuation, white space, control and non-ASCII characters.
    if (k & K_TOKEN) {
      if (++tokenRun >= 12) longTokenRun = true;
    } else tokenRun = 0;
    if ((c !== 32 && c !== 45) || !isDigit(s.charCodeAt(i - 1)) || !isDigit(s.charCodeAt(i + 1)))
      cardDigits = 0;
    if ((k & K_PHONE_SEP) === 0) phoneDigits = 0;
    if (c === 46) {
      if (++ip4Dots >= 3 && ip4Digits >= 4) found |= CAN_IPV4;
    } else {
      ip4Dots = 0;
      ip4Digits = 0;
    }
    if (k & K_IPV6) {
      if (c === 58 && ++ip6Colons >= 2 && ip6Digits > 0) found |= CAN_IPV6;
    } else {
      ip6Colons = 0;
      ip6Digits = 0;
    }
    if (c === 64 && i > 0 && isLocal(s.charCodeAt(i - 1))) {
      const d = s.charCodeAt(i + 1);
      if (isWord(d) || d === 45) found |= CAN_EMAIL;
    }
  }
  // A letter run at the very end can still complete a token value; no separator follows it, so no keyword.
  if (letters >= 0 && tokenRun + (n - letters) >= 12) longTokenRun = true;
  if (keyword && longTokenRun) found |= CAN_TOKEN;
  return found;
}

/** True when the letters s[start, end) are all hex digits. */
function allHex(s: string, start: number, end: number): boolean {
  for (let p = start; p < end; p++) if ((CHAR_CLASS[s.charCodeAt(p)]! & K_HEX_ALPHA) === 0) return false;
  return true;
}

/** The jwt or pem flag for the letter `c` (`J` or `B`) at `i`: `eyJ` at a word boundary; the `B` of `-----BEGIN `. */
function markedLetter(s: string, i: number, c: number): number {
  if (c === 74) {
    if (i >= 2 && s.charCodeAt(i - 1) === 121 && s.charCodeAt(i - 2) === 101) {
      if (i === 2 || !isWord(s.charCodeAt(i - 3))) return CAN_JWT;
    }
    return 0;
  }
  return i >= 5 && s.startsWith(PEM_BEGIN, i - 5) ? CAN_PEM : 0;
}

// ---------------------------------------------------------------------------------------------------------------
// The engine.

/**
 * Run one rule over `s`: returns the new text (unchanged unless masking) and adds hits to the tally. `gate`:
 * ask the rule's own gate first (not needed after the prefilter, whose conditions imply every gate's).
 */
function runRule(
  rule: Rule,
  s: string,
  mask: boolean,
  opts: EngineOptions,
  tally: RedactTally,
  gate: boolean,
): string {
  if (gate && !rule.gate(s)) return s;
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
  return compile(options, true);
}

/**
 * FOR TESTS ONLY, not part of the API (it may change or go away in any release): entry points that let tests
 * compare the engine with its prefilter against the engine without it (every rule behind its own gate, as
 * before the prefilter existed), and look at the prefilter's answer.
 * @internal
 */
export const redactTestHooks = Object.freeze({
  /** {@link compileRedactor} with the prefilter switched off. */
  compileWithoutPrefilter: (options: RedactOptions = {}): CompileResult => compile(options, false),
  /** The rule passes the prefilter lets run on `s`: rule names, with `ip` split into `ipv6` and `ipv4`. */
  candidates(s: string): string[] {
    const f = candidateRules(s);
    const passes: [string, number][] = [
      ['jwt', CAN_JWT],
      ['pem', CAN_PEM],
      ['email', CAN_EMAIL],
      ['token', CAN_TOKEN],
      ['card', CAN_CARD],
      ['phone', CAN_PHONE],
      ['ipv6', CAN_IPV6],
      ['ipv4', CAN_IPV4],
    ];
    return passes.filter(([, bit]) => (f & bit) !== 0).map(([name]) => name);
  },
});

function compile(options: RedactOptions, prefilter: boolean): CompileResult {
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
  return {
    ok: true,
    redactor: makeRedactor(mode, rules, { maskEmailDomain }, maxLength, maxDepth, prefilter),
  };
}

function makeRedactor(
  mode: RedactMode,
  rules: readonly RuleName[],
  opts: EngineOptions,
  maxLength: number,
  maxDepth: number,
  prefilter: boolean,
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
      if (prefilter) {
        // Asked once, on the window: masking never adds a candidate for a later rule (see the prefilter's
        // comment), so the flags still hold for the text each later rule sees.
        const can = candidateRules(window);
        if (can !== 0) {
          for (let i = 0; i < chain.length; i++) {
            const r = chain[i]!;
            if ((can & r.bit) !== 0) out = runRule(r, out, mask, opts, tally, false);
          }
        }
      } else {
        for (const r of chain) out = runRule(r, out, mask, opts, tally, true);
      }
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

  const scanText = (s: string, tally: RedactTally): string => (typeof s === 'string' ? scan(s, tally) : s);
  const scanValue = <T>(v: T, tally: RedactTally): T => {
    if (mode === 'off') return v;
    try {
      return walk(v, 0, tally) as T;
    } catch {
      return (mask ? maskMarker('error') : v) as T;
    }
  };

  return {
    mode,
    rules,
    text(s, tally) {
      const t = tally ?? newTally();
      return { text: scanText(s, t), result: redactResultOf(t) };
    },
    value<T>(v: T, tally?: RedactTally) {
      const t = tally ?? newTally();
      return { value: scanValue(v, t), result: redactResultOf(t) };
    },
    scanText,
    scanValue,
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
