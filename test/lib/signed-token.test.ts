import fc from 'fast-check';
import { openToken, principalTag, signToken } from '../../lib/signed-token';

const KEY = Buffer.alloc(32, 7);
const OLD = Buffer.alloc(32, 9);

test('a signed token opens with its prefix and any key of the list, naming the signer', () => {
  const token = signToken('t1', { a: 1 }, KEY);
  expect(openToken(token, 't1', 1024, [OLD, KEY])).toEqual({ ok: true, payload: { a: 1 }, signer: KEY });
});

test.each([
  ['another prefix', (t: string) => t, 't2', [KEY], 'malformed'],
  ['another key', (t: string) => t, 't1', [OLD], 'bad_signature'],
  ['too long', (t: string) => t + 'x'.repeat(2000), 't1', [KEY], 'too_large'],
  ['not a string', () => 42 as unknown as string, 't1', [KEY], 'malformed'],
  ['one part', () => 't1', 't1', [KEY], 'malformed'],
  ['padding', (t: string) => `${t}=`, 't1', [KEY], 'malformed'],
] as const)('%s: refused (%s)', (_label, change, prefix, keys, reason) => {
  const token = change(signToken('t1', { a: 1 }, KEY));
  expect(openToken(token, prefix, 1024, keys)).toEqual({ ok: false, reason });
});

test('changing any one character of a token makes it fail to open', () => {
  const token = signToken('t1', { s: 'server-session', e: 1 }, KEY);
  fc.assert(
    fc.property(fc.nat(token.length - 1), fc.string({ minLength: 1, maxLength: 1 }), (i, c) => {
      fc.pre(token[i] !== c);
      const changed = token.slice(0, i) + c + token.slice(i + 1);
      expect(openToken(changed, 't1', 1024, [KEY]).ok).toBe(false);
    }),
  );
});

test('the principal tag depends on the key, the label and the principal', () => {
  const tag = principalTag(KEY, 'label', 'api-key:ann');
  expect(tag).toHaveLength(22);
  expect(principalTag(OLD, 'label', 'api-key:ann')).not.toBe(tag);
  expect(principalTag(KEY, 'other', 'api-key:ann')).not.toBe(tag);
  expect(principalTag(KEY, 'label', 'api-key:bob')).not.toBe(tag);
});
