/**
 * The prefilter: one pass over a string that tells which rule passes can possibly match it, so a clean
 * string costs one linear scan instead of every rule's scan. Each flag stands for a condition that every match
 * of its rule needs (the flags over-approximate, never under-approximate), so skipping a rule whose flag is
 * clear never changes the result; a set flag only means "run the rule". The conditions, and why each is necessary:
 *
 * - jwt: `eyJ` not preceded by a word character (the scanner skips any other `eyJ`).
 * - pem: `-----BEGIN ` (the scanner starts there).
 * - email: `@` with a local-part character before it and a word character or `-` after it (the scanner walks
 *   the local part left from the `@` and the domain label right from it; both must be non-empty).
 * - token: a run of ASCII letters that ends in a keyword's last word (`bearer`, `token`, `key`, `secret`,
 *   `passwd`, `password`, `credential`, `credentials`, in any case) right before one of ["'\s:=], and somewhere
 *   a run of 12 token characters (the value). The pattern puts one of ["'\s:=] right after the keyword, and
 *   none of them is a letter, so the keyword ends a letter run; `api_key`-like names end in `key`. Without the
 *   `u` flag, `i` never folds a non-ASCII character onto an ASCII one, so only ASCII letters count.
 * - card: 13 digits in one run of digit groups joined by single spaces or dashes (what the scanner reads).
 * - phone: 9 digits in one run of [\d\s().-]: after the `+` (international) or from the `8` (national) every
 *   character of a match is in that class, and a match holds 9–15 digits.
 * - IPv6: a run of [0-9A-Fa-f:.] with two colons and a digit (the scanner's own condition on that run).
 * - IPv4: a run of [0-9.] with three dots and four digits (`\d{1,3}\.` three times, then `\d{1,3}`).
 *
 * The flags are computed once per string, on the text the first rule sees, though in mask mode each rule sees
 * the previous rules' output. That is sound because masking never creates a candidate for a later rule:
 * - a masked text is the original with some spans replaced by a marker `[masked:<rule>]` (or, for an e-mail,
 *   the local part after its first character replaced by `***`), and `[`, `]` and `*` belong to no class
 *   above, so every run of the masked text lies either inside a replacement or inside unchanged text;
 * - a run inside unchanged text is part of a run of the original, with at most the same counts; a point
 *   condition (`-----BEGIN `, `@` and its neighbours, a keyword and the separator after it) that holds there
 *   held in the original too, as a replacement's first and last characters fail all of them; the `eyJ`
 *   boundary is the exception, but jwt is the first rule, so it always sees the original;
 * - inside a marker there are no digits, no `@`, no `-----BEGIN `, no token run of 12, and no keyword before a
 *   separator (`masked:` is the only letter run followed by one).
 * test/lib/redact/prefilter.test.ts checks the markers against this, and the engine against a reference
 * that runs every pass on every string.
 * @see docs/middleware/redact.md
 */
import { PASS_BITS, isAlpha, isDigit, isHex, isWord } from './rules/rule.js';
import { isLocal } from './rules/email.js';
import { PEM_BEGIN } from './rules/pem.js';
import { isTokenChar } from './rules/token.js';

const CAN_JWT = PASS_BITS.jwt;
const CAN_PEM = PASS_BITS.pem;
const CAN_EMAIL = PASS_BITS.email;
const CAN_TOKEN = PASS_BITS.token;
const CAN_CARD = PASS_BITS.card;
const CAN_PHONE = PASS_BITS.phone;
const CAN_IPV6 = PASS_BITS.ipv6;
const CAN_IPV4 = PASS_BITS.ipv4;

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
 * The rule passes that can possibly match `s`, as `PASS_BITS` flags; 0 when none can. One linear scan with a few
 * counters of the current runs; no regular expression.
 */
export function candidateRules(s: string): number {
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
