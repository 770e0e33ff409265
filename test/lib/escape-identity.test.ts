/**
 * escapeIdentity: who a record names, never a character dropped. Distinct identities give distinct text
 * (checked by fast-check over arbitrary strings, long ones and lone surrogates included), and the text holds no
 * control, bidi or line-break character and is left alone by the log sanitizer.
 */
import fc from 'fast-check';
import { escapeIdentity, sanitizeText } from '../../lib/sanitize';

const CAP = 256;
/** What no escaped identity may hold: C0/C1 controls, DEL, line breaks, bidi and other format characters. */
const UNSAFE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/u;

describe('escapeIdentity: the look-alikes of victim', () => {
  test.each<[string, string, string]>([
    ['itself', 'victim', 'victim'],
    ['a leading space', ' victim', '\\u{0020}victim'],
    ['a trailing space', 'victim ', 'victim\\u{0020}'],
    ['a leading NUL', '\u0000victim', '\\u{0000}victim'],
    ['a trailing NUL', 'victim\u0000', 'victim\\u{0000}'],
    ['a left-to-right mark', 'victim\u200e', 'victim\\u{200E}'],
    ['a right-to-left override', 'victim\u202e', 'victim\\u{202E}'],
    ['a zero-width space', 'vic\u200btim', 'vic\\u{200B}tim'],
    ['a soft hyphen', 'vic\u00adtim', 'vic\\u{00AD}tim'],
    ['a no-break space', 'vic\u00a0tim', 'vic\\u{00A0}tim'],
    ['a line separator', 'vic\u2028tim', 'vic\\u{2028}tim'],
    ['a newline', 'victim\n', 'victim\\u{000A}'],
    ['two inner spaces', 'vic  tim', 'vic \\u{0020}tim'],
    ['a Hangul filler', 'victim\u3164', 'victim\\u{3164}'],
    ['a leading combining mark', '\u0301victim', '\\u{0301}victim'],
    ['decomposed (not NFC)', 'vi\u0301ctim', 'vi\\u{0301}ctim'],
    ['an ohm sign (not NFC)', 'victim\u2126', 'victim\\u{2126}'],
    ['a written escape', 'victim\\u{0020}', 'victim\\\\u{0020}'],
    ['an ellipsis', 'victim…', 'victim\\u{2026}'],
    ['a lone surrogate', 'victim\ud800', 'victim\\u{D800}'],
  ])('%s', (_name, input, shown) => {
    expect(escapeIdentity(input, CAP)).toBe(shown);
  });

  test('composed letters, other scripts and emoji are themselves', () => {
    for (const s of ['José', 'Ωmega', 'ｍｃｐ', 'алиса', '李小龙', 'a 😀 b', 'नमस्ते'])
      expect(escapeIdentity(s, CAP)).toBe(s);
  });

  test('a long identity is cut between pieces and ends with a digest of the whole', () => {
    const a = escapeIdentity('x'.repeat(300) + 'a', 64);
    const b = escapeIdentity('x'.repeat(300) + 'b', 64);
    expect(a).not.toBe(b);
    expect([...a]).toHaveLength(64);
    expect(a).toMatch(/^x{46}…#[0-9a-f]{16}$/);
    expect(escapeIdentity('\u202e'.repeat(40), 64)).toMatch(/^(\\u\{202E\}){5}…#[0-9a-f]{16}$/);
  });
});

describe('escapeIdentity: properties', () => {
  const identity = fc.oneof(
    fc.string({ unit: 'binary', maxLength: 40 }),
    fc.string({ unit: 'grapheme', maxLength: 20 }),
    fc.string({
      unit: fc.constantFrom('a', ' ', '\\', 'u', '{', '}', '\u202e', '\u0000', '…', '\u0301', 'é'),
      maxLength: 30,
    }),
    fc.string({
      unit: fc.constantFrom('v', ' ', '\u200b', '\ud800', '\udc00'),
      minLength: 250,
      maxLength: 400,
    }),
  );

  test('distinct identities are shown distinctly (injective)', () => {
    fc.assert(
      fc.property(identity, identity, (a, b) => {
        fc.pre(a !== b && a !== '' && b !== '');
        expect(escapeIdentity(a, CAP)).not.toBe(escapeIdentity(b, CAP));
      }),
      { numRuns: 3000 },
    );
  });

  test('a look-alike built from victim never reads as victim', () => {
    const edge = fc.constantFrom(' ', '\u0000', '\u200e', '\u202e', '\u200b', '\u00ad', '\ufeff', '\\', '\t');
    fc.assert(
      fc.property(fc.array(edge, { maxLength: 3 }), fc.array(edge, { maxLength: 3 }), (pre, post) => {
        const s = pre.join('') + 'victim' + post.join('');
        fc.pre(s !== 'victim');
        expect(escapeIdentity(s, CAP)).not.toBe('victim');
      }),
    );
  });

  /** Read an escaped identity back: `\\\\` is a backslash, `\\u{X}` the code point X, anything else itself. */
  const unescape = (out: string): string =>
    out.replace(/\\(\\|u\{([0-9A-F]{4,6})\})/g, (_m, what: string, hex: string | undefined) =>
      hex === undefined ? what : String.fromCodePoint(parseInt(hex, 16)),
    );

  test('an identity within its cap reads back to itself: the escape is a code, so no two collide', () => {
    fc.assert(
      fc.property(identity, (s) => {
        const out = escapeIdentity(s, 100_000);
        expect(unescape(out)).toBe(s);
      }),
      { numRuns: 3000 },
    );
  });

  test('the output holds no control, bidi or format character, fits the cap and is a sanitizer fixed point', () => {
    fc.assert(
      fc.property(identity, fc.integer({ min: 18, max: 300 }), (s, cap) => {
        const out = escapeIdentity(s, cap);
        expect(out).not.toMatch(UNSAFE);
        expect([...out].length).toBeLessThanOrEqual(cap);
        expect(sanitizeText(out)).toBe(out);
      }),
      { numRuns: 2000 },
    );
  });
});
