/**
 * Making caller-authored strings safe to write into a log (CWE-117, CWE-150). Pure: no I/O.
 *
 * {@link sanitizeText} removes what could forge a line or drive a terminal, and collapses whitespace:
 * - ANSI/VT escape sequences: CSI (`ESC [` … final byte), OSC/DCS/SOS/PM/APC strings (`ESC ]` … BEL or ST,
 *   which covers OSC 52 clipboard writes and window titles), nF and two-character escapes; the 8-bit forms
 *   (U+009B CSI, U+009D OSC, U+0090 DCS, U+0098, U+009E, U+009F) alike. A sequence that does not end within a
 *   bounded length loses only its introducer, so a lone ESC cannot swallow the rest of the record.
 * - line breaks (CR, LF, VT, FF, U+0085 NEL, U+2028, U+2029) and tabs become spaces;
 * - every other C0/C1 control and DEL is dropped, and so are bidirectional overrides and marks (U+202A–U+202E,
 *   U+2066–U+2069, U+200E, U+200F, U+061C: "Trojan Source" reordering);
 * - a lone surrogate becomes U+FFFD (it would not survive UTF-8 encoding intact);
 * - whitespace runs (any Unicode space) collapse to one space, and both ends are trimmed;
 * - the result is cut at a number of characters (code points), never inside a surrogate pair.
 *
 * JSON log formats escape C0 controls already, but not U+009B, U+2028/2029 or bidi controls, and text formats
 * escape nothing; this makes every format safe.
 *
 * {@link cleanText} is the audit pipeline for one field: bound the work, sanitize, mask with a redactor, and
 * only then cut to the cap, so a cut can never leave half an address or half a token in the log.
 *
 * {@link escapeIdentity} is for who a record names (a principal's id and source): it never drops a character,
 * it writes the ones that would not read as themselves as visible escapes, so two identities never read alike.
 */
import { createHash } from 'node:crypto';
import { REDACT_GUARD, type RedactTally, type Redactor } from './redact/types.js';

/** Longest CSI or nF sequence removed as a unit (parameters and intermediates included). */
export const MAX_ESCAPE_LEN = 32;
/** Longest OSC/DCS/SOS/PM/APC string removed as a unit (OSC 52 payloads can be long). */
export const MAX_STRING_ESCAPE_LEN = 512;

const ESC = 0x1b;
const BEL = 0x07;
const ST8 = 0x9c;

/** Introducers (after ESC, or as an 8-bit C1 control) of strings that end with BEL or ST. */
function isStringIntroducer7(c: number): boolean {
  return (
    c === 0x5d /* ] OSC */ ||
    c === 0x50 /* P DCS */ ||
    c === 0x58 /* X SOS */ ||
    c === 0x5e /* ^ PM */ ||
    c === 0x5f
  ); /* _ APC */
}
function isStringIntroducer8(c: number): boolean {
  return c === 0x9d || c === 0x90 || c === 0x98 || c === 0x9e || c === 0x9f;
}

/** End (exclusive) of a CSI body starting at `j` (parameters, intermediates, final byte), or -1. */
function csiEnd(s: string, j: number): number {
  const stop = Math.min(s.length, j + MAX_ESCAPE_LEN);
  for (let k = j; k < stop; k++) {
    const c = s.charCodeAt(k);
    if (c >= 0x20 && c <= 0x3f) continue; // parameter and intermediate bytes
    if (c >= 0x40 && c <= 0x7e) return k + 1; // final byte
    return -1;
  }
  return -1;
}

/** End (exclusive) of a control string starting at `j`, through its terminator (BEL, ESC \, ST), or -1. */
function stringEnd(s: string, j: number): number {
  const stop = Math.min(s.length, j + MAX_STRING_ESCAPE_LEN);
  for (let k = j; k < stop; k++) {
    const c = s.charCodeAt(k);
    if (c === BEL || c === ST8) return k + 1;
    if (c === ESC && s.charCodeAt(k + 1) === 0x5c) return k + 2;
  }
  return -1;
}

/** Characters that end a line or separate text: turned into a space. */
function isBreak(c: number): boolean {
  return (
    c === 0x0a ||
    c === 0x0d ||
    c === 0x09 ||
    c === 0x0b ||
    c === 0x0c ||
    c === 0x85 ||
    c === 0x2028 ||
    c === 0x2029
  );
}

/** Unicode whitespace as JS `\s` knows it (besides the breaks above). */
function isSpace(c: number): boolean {
  return (
    c === 0x20 ||
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}

/** Invisible reordering controls (bidi embeddings, overrides, isolates, marks). */
function isBidi(c: number): boolean {
  return (
    c === 0x061c ||
    c === 0x200e ||
    c === 0x200f ||
    (c >= 0x202a && c <= 0x202e) ||
    (c >= 0x2066 && c <= 0x2069)
  );
}

/**
 * True when {@link sanitizeText} would return `s` unchanged (given a cap of at least `s.length`): every unit is
 * printable ASCII (U+0020–U+007E), and spaces are single and inside. Why that is a fixed point: sanitizeText
 * only changes ESC and C0/C1 controls, DEL, line breaks, tabs and other (non-ASCII) whitespace, bidi controls,
 * surrogates, and runs of whitespace (collapsed to one space, dropped at both ends); printable ASCII holds none
 * of these but the space, and a single inner space is kept as it is. Such a string has as many code points as
 * UTF-16 units, so a cap of at least `s.length` cuts nothing either.
 */
function isPlain(s: string): boolean {
  const n = s.length;
  if (s.charCodeAt(0) === 0x20 || s.charCodeAt(n - 1) === 0x20) return false;
  let prevSpace = false;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c > 0x20 && c < 0x7f) prevSpace = false;
    else if (c === 0x20 && !prevSpace) prevSpace = true;
    else return false;
  }
  return true;
}

/**
 * Remove control characters and terminal escapes, turn line breaks into spaces, collapse whitespace, and cut at
 * `maxChars` code points (default: no cap). Linear in the input; never throws on a string.
 */
export function sanitizeText(s: string, maxChars: number = Number.POSITIVE_INFINITY): string {
  if (typeof s !== 'string' || s.length === 0 || maxChars <= 0) return '';
  // Most strings (a method name, a tool name, a user agent) are already clean: answer them without building a
  // copy piece by piece (see isPlain for why the result is the input).
  if (s.length <= maxChars && isPlain(s)) return s;
  const n = s.length;
  let out = '';
  let chars = 0;
  let pendingSpace = false;
  let i = 0;
  /** Append a piece (and the pending collapsed space before it) if both fit; false when the cap is reached. */
  const emit = (piece: string, count: number): boolean => {
    const sp = pendingSpace && chars > 0 ? 1 : 0;
    if (chars + sp + count > maxChars) return false;
    if (sp) out += ' ';
    out += piece;
    chars += sp + count;
    pendingSpace = false;
    return true;
  };
  while (i < n) {
    const c = s.charCodeAt(i);
    // A run of printable ASCII is copied whole.
    if (c > 0x20 && c < 0x7f) {
      let j = i + 1;
      while (j < n) {
        const d = s.charCodeAt(j);
        if (d > 0x20 && d < 0x7f) j++;
        else break;
      }
      const room = maxChars - chars - (pendingSpace && chars > 0 ? 1 : 0);
      if (room <= 0) break;
      if (j - i > room) {
        emit(s.slice(i, i + room), room);
        break;
      }
      emit(s.slice(i, j), j - i);
      i = j;
      continue;
    }
    if (c === ESC) {
      const d = s.charCodeAt(i + 1);
      let end = -1;
      if (d === 0x5b) end = csiEnd(s, i + 2);
      else if (isStringIntroducer7(d)) end = stringEnd(s, i + 2);
      else if (d >= 0x20 && d <= 0x2f) {
        // nF: intermediates then one final byte 0x30–0x7E.
        let k = i + 1;
        const stop = Math.min(n, i + MAX_ESCAPE_LEN);
        while (k < stop && s.charCodeAt(k) >= 0x20 && s.charCodeAt(k) <= 0x2f) k++;
        const f = s.charCodeAt(k);
        if (k < stop && f >= 0x30 && f <= 0x7e) end = k + 1;
      } else if (d >= 0x30 && d <= 0x7e) end = i + 2; // Fp, Fe, Fs: ESC 7, ESC D, ESC c, …
      if (end < 0) end = d >= 0x20 && d <= 0x7e ? i + 2 : i + 1; // unterminated: drop the introducer only
      i = end;
      continue;
    }
    if (c === 0x9b) {
      const end = csiEnd(s, i + 1);
      i = end < 0 ? i + 1 : end;
      continue;
    }
    if (isStringIntroducer8(c)) {
      const end = stringEnd(s, i + 1);
      i = end < 0 ? i + 1 : end;
      continue;
    }
    if (isBreak(c) || isSpace(c)) {
      pendingSpace = true;
      i++;
      continue;
    }
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f) || isBidi(c)) {
      i++;
      continue;
    }
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        if (!emit(s.slice(i, i + 2), 1)) break;
        i += 2;
        continue;
      }
      if (!emit('\ufffd', 1)) break;
      i++;
      continue;
    }
    if (c >= 0xdc00 && c <= 0xdfff) {
      if (!emit('\ufffd', 1)) break;
      i++;
      continue;
    }
    if (!emit(s[i]!, 1)) break;
    i++;
  }
  return out;
}

/** Number of code points in `s`. */
export function charLength(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

/** The first `maxChars` code points of `s` (a surrogate pair is never split). */
export function cutChars(s: string, maxChars: number): string {
  if (s.length <= maxChars) return s;
  let n = 0;
  let i = 0;
  while (i < s.length && n < maxChars) {
    const c = s.charCodeAt(i);
    i += c >= 0xd800 && c <= 0xdbff && i + 1 < s.length ? 2 : 1;
    n++;
  }
  return s.slice(0, i);
}

/** The raw input looked at per field is bounded: this many times the cap, plus slack. */
const RAW_FACTOR = 8;

/** How much raw input {@link cleanText} reads for a cap. Build the audit redactor with at least this `maxLength`. */
export function rawBudget(cap: number): number {
  return cap * RAW_FACTOR + 2 * REDACT_GUARD;
}

/**
 * The audit treatment of one caller-authored string: sanitize, mask (always, before cutting), cut at `cap`
 * code points. Work is bounded: at most {@link rawBudget}(cap) characters of the input are read; when the
 * input is longer, the last {@link REDACT_GUARD} characters of what was read are dropped before masking (a secret cut
 * by that bound can only sit there) and `…` marks the cut. Never throws.
 */
export function cleanText(s: string, cap: number, redactor?: Redactor, tally?: RedactTally): string {
  if (typeof s !== 'string' || s.length === 0 || cap <= 0) return '';
  try {
    // A clean string within its cap (isPlain) reads no more than the budget (cap <= rawBudget(cap)), is its own
    // sanitized form, and stays within the cap unless masking lengthens it: only the redactor has work left.
    if (s.length <= cap && isPlain(s)) return redactor ? cutChars(maskWith(redactor, s, tally), cap) : s;
    const budget = rawBudget(cap);
    let raw = s;
    let cut = false;
    if (raw.length > budget) {
      raw = cutUnits(raw, budget);
      cut = true;
    }
    let clean = sanitizeText(raw);
    if (cut) clean = cutUnits(clean, Math.max(0, clean.length - REDACT_GUARD)) + '…';
    const masked = redactor ? maskWith(redactor, clean, tally) : clean;
    return cutChars(masked, cap);
  } catch {
    return '';
  }
}

/** The masked text: `scanText` when the redactor has it (no result object), else `text()`. */
function maskWith(redactor: Redactor, s: string, tally: RedactTally | undefined): string {
  return redactor.scanText && tally ? redactor.scanText(s, tally) : redactor.text(s, tally).text;
}

/** The first `n` UTF-16 units of `s`, one fewer when that would split a surrogate pair. */
function cutUnits(s: string, n: number): string {
  if (s.length <= n) return s;
  const c = s.charCodeAt(n - 1);
  return s.slice(0, c >= 0xd800 && c <= 0xdbff ? n - 1 : n);
}

/**
 * Characters an identity shows as an escape: controls, format characters (bidi controls, soft hyphen,
 * zero-width space and joiners, BOM), line and paragraph separators, every space but U+0020, lone
 * surrogates, private-use and unassigned code points, and other default-ignorable ones (fillers, variation
 * selectors): each either does not show, shows as something else, or moves the text around it. Also `…`
 * (U+2026), which marks the cut of an identity longer than its cap.
 */
const IDENTITY_HIDDEN =
  /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\p{Co}\p{Cn}\p{Default_Ignorable_Code_Point}\u2026]|(?! )\p{Zs}/u;
/** A combining mark: escaped at the start of an identity, where it would sit on the character before it. */
const MARK = /^\p{M}$/u;
/** Hex digits of the digest that ends an identity cut at its cap. */
const IDENTITY_DIGEST_HEX = 16;

/** `\u{XXXX}`: the code point in upper-case hex, at least four digits. */
function escapeCodePoint(cp: number): string {
  return `\\u{${cp.toString(16).toUpperCase().padStart(4, '0')}}`;
}

const ESCAPED_SPACE = escapeCodePoint(0x20);

/**
 * The pieces of `s` as an identity shows them, one per code point (itself or its escape), until they hold more
 * than `limit` code points; `whole` tells whether every code point of `s` got its piece. With `allAscii`, every
 * character past U+007E is escaped.
 */
function identityPieces(
  s: string,
  limit: number,
  allAscii: boolean,
): { pieces: string[]; chars: number; whole: boolean } {
  const pieces: string[] = [];
  let chars = 0;
  let prevSpace = true; // a space at the start does not show: escaped like one after a space
  for (const ch of s) {
    if (chars > limit) return { pieces, chars, whole: false };
    let piece = ch;
    if (ch === '\\') piece = '\\\\';
    else if (ch === ' ') piece = prevSpace ? ESCAPED_SPACE : ch;
    else if (
      (allAscii && ch.charCodeAt(0) > 0x7e) ||
      IDENTITY_HIDDEN.test(ch) ||
      (pieces.length === 0 && MARK.test(ch))
    ) {
      piece = escapeCodePoint(ch.codePointAt(0)!);
    }
    prevSpace = ch === ' ';
    pieces.push(piece);
    chars += piece.length; // escapes are ASCII; a kept character is one code point
    if (piece === ch && ch.length === 2) chars -= 1;
  }
  // A space at the end does not show either.
  const last = pieces.length - 1;
  if (last >= 0 && pieces[last] === ' ') {
    pieces[last] = ESCAPED_SPACE;
    chars += ESCAPED_SPACE.length - 1;
  }
  return { pieces, chars, whole: true };
}

/**
 * An identity (a principal's id, its source) as a record or a log line shows it: never a character dropped, so
 * two different identities never read the same. A backslash is written `\\`; a control, format or bidi
 * character, a space at either end or after another space, any other space character, a lone surrogate, a
 * private-use, unassigned or other invisible code point, and `…` are written `\u{XXXX}` (hex, at least four
 * digits); everything else is itself. Reading it back is unambiguous: a `\` always starts `\\` or `\u{…}`. The
 * result holds no control, bidi or line-break character and {@link sanitizeText} leaves it as it is.
 *
 * Longer than `cap` code points, it is cut between two pieces and ends with `…#` and the first 16 hex digits of
 * the SHA-256 of the whole input: an identity that is not cut never holds a raw `…`, and two long identities
 * that share their start end differently. Letters of different scripts that look alike (Latin `a`, Cyrillic
 * `а`) are letters and are shown as they are. An identity that is not in Unicode NFC could read like its
 * composed twin (`e` and U+0301 like `é`): all its non-ASCII characters are escaped. `cap` must leave room for
 * the suffix (at least 18).
 */
export function escapeIdentity(s: string, cap: number): string {
  if (typeof s !== 'string' || s.length === 0 || cap <= 0) return '';
  if (s.length <= cap && isPlain(s) && s.indexOf('\\') < 0) return s;
  // Not in NFC, it may spell a composed identity another way (`e` and U+0301 for `é`, U+2126 for `Ω`).
  const { pieces, chars, whole } = identityPieces(s, cap, s.normalize('NFC') !== s);
  if (whole && chars <= cap) return pieces.join('');
  const digest = createHash('sha256').update(s, 'utf16le').digest('hex').slice(0, IDENTITY_DIGEST_HEX);
  const suffix = `…#${digest}`;
  const room = Math.max(0, cap - suffix.length);
  let out = '';
  let used = 0;
  for (const p of pieces) {
    const n = charLength(p);
    if (used + n > room) break;
    out += p;
    used += n;
  }
  // A space just before the cut would not show.
  if (out.endsWith(' ')) {
    out = out.slice(0, -1);
    if (used - 1 + ESCAPED_SPACE.length <= room) out += ESCAPED_SPACE;
  }
  return out + suffix;
}
