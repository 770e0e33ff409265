import fc from 'fast-check';
import { decodeHeaderValue, encodeHeaderValue, isPlainHeaderValue } from '../../lib/sentinel';

describe('Base64 sentinel: encode', () => {
  test.each([
    ['my-tool', 'my-tool'],
    ['file:///tmp/foo.txt', 'file:///tmp/foo.txt'],
    ['', ''],
    ['a b', 'a b'],
    ['Hello, 世界', '=?base64?SGVsbG8sIOS4lueVjA==?='],
    [' padded ', '=?base64?IHBhZGRlZCA=?='],
    ['line1\nline2', '=?base64?bGluZTEKbGluZTI=?='],
    ['=?base64?literal?=', '=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?='],
    ['café-résumé', '=?base64?Y2Fmw6ktcsOpc3Vtw6k=?='],
    ['工具', '=?base64?5bel5YW3?='],
    ['bad\rname', '=?base64?YmFkDW5hbWU=?='],
    ['a\x7Fb', '=?base64?YX9i?='],
    ['=?base64?bXktdG9vbA==?=', '=?base64?PT9iYXNlNjQ/YlhrdGRHOXZiQT09Pz0=?='],
    ['=?base64?x', '=?base64?x'],
    ['x?=', 'x?='],
    ['trailing\t', '=?base64?dHJhaWxpbmcJ?='],
  ])('%j → %j', (input, expected) => {
    expect(encodeHeaderValue(input)).toBe(expected);
  });
});

describe('Base64 sentinel: decode', () => {
  test.each([
    ['my-tool', 'my-tool', false],
    ['', '', false],
    ['=?base64?bXktdG9vbA==?=', 'my-tool', true],
    ['=?base64?Z2V0X3dlYXRoZXI=?=', 'get_weather', true],
    ['=?base64??=', '', true],
    ['=?BASE64?bXktdG9vbA==?=', '=?BASE64?bXktdG9vbA==?=', false],
    ['=?base64?abc', '=?base64?abc', false],
    ['=?base64?=', '=?base64?=', false],
  ])('%j decodes to %j', (input, value, encoded) => {
    expect(decodeHeaderValue(input)).toEqual({ ok: true, value, encoded });
  });

  test.each([
    '=?base64?Z2V0X3dlYXRoZXI?=', // missing padding
    '=?base64?!!!?=',
    '=?base64?!!!!?=',
    '=?base64?not-valid-base64!!?=',
    '=?base64?bXktdG9vbA?=',
    '=?base64?Zh==?=', // non-canonical trailing bits
    '=?base64?a?=',
    '=?base64?/w==?=', // 0xFF is not UTF-8
    '=?base64?b X k=?=',
    '=?base64?bXk-dG9v?=', // URL-safe alphabet
  ])('%j is malformed', (input) => {
    expect(decodeHeaderValue(input)).toEqual({ ok: false, reason: 'malformed_sentinel' });
  });
});

describe('Base64 sentinel: properties', () => {
  const anyString = fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.string({ unit: 'grapheme' }));
  const wellFormed = anyString.filter((s) => s.isWellFormed());

  test('decode(encode(s)) === s for any well-formed string', () => {
    fc.assert(
      fc.property(wellFormed, (s) => {
        const d = decodeHeaderValue(encodeHeaderValue(s));
        expect(d).toEqual({ ok: true, value: s, encoded: expect.any(Boolean) });
      }),
      { numRuns: 2000 },
    );
  });

  test('encoded values are always legal header values', () => {
    fc.assert(
      fc.property(wellFormed, (s) => {
        const e = encodeHeaderValue(s);
        expect(isPlainHeaderValue(e)).toBe(true);
        // RFC 9110 field-value: visible ASCII plus inner SP/HTAB; no leading or trailing whitespace.
        expect(/^(?:[\x21-\x7e](?:[\x20\x09\x21-\x7e]*[\x21-\x7e])?)?$/.test(e)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  test('decode never throws on arbitrary input', () => {
    fc.assert(
      fc.property(anyString, (s) => {
        const d = decodeHeaderValue(s);
        expect(typeof d.ok).toBe('boolean');
        const d2 = decodeHeaderValue('=?base64?' + s + '?=');
        expect(typeof d2.ok).toBe('boolean');
      }),
      { numRuns: 2000 },
    );
  });
});
