import fc from 'fast-check';
import { compileRedactor } from '../../lib/redact';
import { REDACT_GUARD } from '../../lib/redact/types';
import { charLength, cleanText, cutChars, rawBudget, sanitizeText } from '../../lib/sanitize';

const redactor = (() => {
  const c = compileRedactor({ mode: 'mask', maxLength: rawBudget(4096) });
  if (!c.ok) throw new Error(c.message);
  return c.redactor;
})();

describe('sanitizeText (reference/mcpkit.md §7.3 vectors)', () => {
  test.each([
    ['a\nb\r\nc', 100, 'a b c'],
    ['a\tb', 100, 'a b'],
    ['\x1b[31mred\x1b[0m', 100, 'red'],
    ['\x1b[31mred text\x1b[0m', 100, 'red text'],
    ['a\x00\x07b', 100, 'ab'],
    ['a     b', 100, 'a b'],
    ['', 100, ''],
    ['ыыыыы', 3, 'ыыы'],
    ['ы'.repeat(10), 4, 'ыыыы'],
    ['ok\nevent=audit decision=allow', 100, 'ok event=audit decision=allow'],
  ])('%j (max %d) → %j', (input, max, output) => {
    expect(sanitizeText(input, max)).toBe(output);
  });

  test('a lone ESC does not swallow the rest of the record', () => {
    const out = sanitizeText('\x1b' + '1'.repeat(64) + ' tail', 200);
    expect(out).toContain('tail');
    expect(out.length).toBeGreaterThan(40);
  });
});

describe('sanitizeText: terminal and line-forging sequences (reliability.md T84, T85)', () => {
  test.each([
    ['clear screen', 'a\x1b[2Jb', 'ab'],
    ['cursor movement with parameters', 'a\x1b[1;31;40mb\x1b[10Ac', 'abc'],
    ['OSC 52 clipboard write, BEL-terminated', 'a\x1b]52;c;ZWNobyBoaQ==\x07b', 'ab'],
    ['OSC window title, ST-terminated', 'a\x1b]0;pwned\x1b\\b', 'ab'],
    ['OSC 8 hyperlink', '\x1b]8;;http://evil\x1b\\click\x1b]8;;\x1b\\', 'click'],
    ['DCS string', 'a\x1bPq#0;2;0;0;0\x1b\\b', 'ab'],
    ['8-bit CSI U+009B', 'a\u009b31mb', 'ab'],
    ['8-bit OSC U+009D … ST U+009C', 'a\u009d0;title\u009cb', 'ab'],
    ['other C1 controls', 'a\u0085b\u0080c\u009fd', 'a bcd'],
    ['two-character escapes (ESC c reset, ESC 7)', 'a\x1bcb\x1b7c', 'abc'],
    ['nF escape (ESC ( B)', 'a\x1b(Bb', 'ab'],
    ['U+2028 and U+2029', 'a\u2028b\u2029c', 'a b c'],
    ['vertical tab and form feed', 'a\x0bb\x0cc', 'a b c'],
    ['bidi override (Trojan Source)', 'user\u202eresu\u202c ok', 'userresu ok'],
    ['bidi isolates and marks', 'a\u2066b\u2069\u200ec\u200f', 'abc'],
    ['DEL', 'a\x7fb', 'ab'],
    ['CRLF log forging', 'x\r\n{"level":"info","msg":"admin ok"}', 'x {"level":"info","msg":"admin ok"}'],
    ['unicode spaces collapse', 'a\u00a0\u2003\u3000b', 'a b'],
    ['leading and trailing space trimmed', '  \n a b \t ', 'a b'],
    ['lone surrogates become U+FFFD', 'a\ud800b\udc00c', 'a\ufffdb\ufffdc'],
    ['surrogate pairs kept', 'a😀b', 'a😀b'],
    ['an unterminated CSI drops only its introducer', 'a\x1b[' + '1;'.repeat(40), 'a' + '1;'.repeat(40)],
    [
      'an unterminated OSC drops only its introducer',
      'a\x1b]52;c;' + 'A'.repeat(600),
      'a52;c;' + 'A'.repeat(600),
    ],
  ])('%s', (_label, input, output) => {
    expect(sanitizeText(input)).toBe(output);
  });

  test('the cut counts code points and never splits a surrogate pair', () => {
    expect(sanitizeText('😀😀😀', 2)).toBe('😀😀');
    expect(cutChars('a😀b', 2)).toBe('a😀');
    expect(charLength('a😀b')).toBe(3);
  });

  const dangerous = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]/;
  test('property: output has no control, line-break, bidi or escape characters, no lone surrogates, no double spaces', () => {
    const tricky = fc.string({
      unit: fc.constantFrom(
        'a',
        'b',
        ' ',
        '\n',
        '\r',
        '\t',
        '\x1b',
        '[',
        ']',
        '\\',
        '\x07',
        '\u009b',
        '\u009c',
        '\u009d',
        '\u2028',
        '\u202e',
        '\ud800',
        '\udc00',
        '😀',
        '1',
        ';',
        'm',
      ),
    });
    fc.assert(
      fc.property(
        fc.oneof(fc.string({ unit: 'binary' }), tricky),
        fc.integer({ min: 1, max: 50 }),
        (s, max) => {
          const out = sanitizeText(s, max);
          if (dangerous.test(out)) return false;
          if (/\s\s/.test(out) || out !== out.trim()) return false;
          if (charLength(out) > max) return false;
          if (!out.isWellFormed()) return false;
          return true;
        },
      ),
      { numRuns: 3000 },
    );
  });
});

describe('cleanText: mask before the cut (reference/mcpkit.md §7.2)', () => {
  test.each([
    ["SELECT 1\n  WHERE email = 'sergey@acme.com'", 2048, "SELECT 1 WHERE email = 's***@acme.com'"],
    [
      "SELECT * FROM users WHERE email = 'alice@acme.com'",
      2048,
      "SELECT * FROM users WHERE email = 'a***@acme.com'",
    ],
    ['docs://users/alice@acme.com.md', 2048, 'docs://users/a***@acme.com.md'],
  ])('%j', (input, cap, output) => {
    expect(cleanText(input, cap, redactor)).toBe(output);
  });

  test('an address straddling the cap is masked whole: the cut can only shorten the mask', () => {
    for (let k = 2030; k <= 2050; k++) {
      const out = cleanText('x'.repeat(k) + ' sergey@acme.com tail', 2048, redactor);
      expect(out).not.toContain('se');
      expect(charLength(out)).toBeLessThanOrEqual(2048);
    }
  });

  test('intent with a card and an address keeps the words, drops the digits and the address', () => {
    const out = cleanText('look up card 4111 1111 1111 1111 for sergey@acme.com', 120, redactor);
    expect(out).toContain('look up card');
    expect(out).not.toMatch(/4111/);
    expect(out).not.toContain('sergey');
  });

  test('an escape sequence inside an address cannot hide it from the redactor', () => {
    expect(cleanText('ser\x1b[0mgey@acme.com', 100, redactor)).toBe('s***@acme.com');
  });

  test('caps in characters', () => {
    expect(charLength(cleanText('a'.repeat(4096), 2048, redactor))).toBe(2048);
    expect(cleanText('ы'.repeat(4096), 2048, redactor)).toBe('ы'.repeat(2048));
  });

  test('huge input: bounded work, the raw cut cannot leave half a secret', () => {
    // A flood of escapes shrinks to nothing after sanitizing; the raw budget then cuts a token in half.
    const cap = 64;
    const flood = '\x1b[0m'.repeat(Math.floor((rawBudget(cap) - 20) / 4));
    const out = cleanText(flood + 'password=ABCDEFGHIJKLMNOPQRSTUVWXYZ', cap, redactor);
    expect(out).not.toContain('ABCD');
    const big = cleanText('a@x.com '.repeat(1_000_000), cap, redactor);
    expect(charLength(big)).toBeLessThanOrEqual(cap);
    expect(big).not.toMatch(/a@x/);
  });

  test('property: for any prefix length, a masked address never shows its local part', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 200 }), fc.integer({ min: 20, max: 120 }), (k, cap) => {
        const out = cleanText('x'.repeat(k) + ' sergey@acme.com password=ABCDEFGHIJKLMNOP', cap, redactor);
        return !out.includes('se') && !out.includes('AB') && charLength(out) <= cap;
      }),
      { numRuns: 1000 },
    );
  });

  test('REDACT_GUARD is larger than the longest bounded secret shape (local 64 + @ + label 63)', () => {
    expect(REDACT_GUARD).toBeGreaterThanOrEqual(64 + 1 + 63 + 1);
  });
});
