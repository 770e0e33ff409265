import fc from 'fast-check';
import { isBase64url } from '../../lib/base64url';

test.each([
  ['abc-_XYZ019', true],
  ['', false],
  ['ab=', false],
  ['a+b', false],
  ['a/b', false],
  ['a b', false],
  ['é', false],
])('isBase64url(%j) is %s', (s, expected) => {
  expect(isBase64url(s)).toBe(expected);
});

test('every non-empty base64url encoding passes; a string with one character outside the alphabet does not', () => {
  fc.assert(
    fc.property(fc.uint8Array({ minLength: 1, maxLength: 64 }), (bytes) => {
      expect(isBase64url(Buffer.from(bytes).toString('base64url'))).toBe(true);
    }),
  );
  fc.assert(
    fc.property(fc.string(), fc.string(), fc.constantFrom('=', '+', '/', '.', ' ', '\u0000'), (a, b, c) => {
      expect(isBase64url(`${a}${c}${b}`)).toBe(false);
    }),
  );
});
