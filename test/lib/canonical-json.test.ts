import { argumentsDigest, canonicalJson } from '../../lib/canonical-json';

describe('canonicalJson and the digest', () => {
  test('key order does not matter; values do', () => {
    expect(canonicalJson({ b: 1, a: [2, { d: 'x', c: null }] })).toBe('{"a":[2,{"c":null,"d":"x"}],"b":1}');
    expect(argumentsDigest({ a: 1, b: 2 })).toBe(argumentsDigest({ b: 2, a: 1 }));
    expect(argumentsDigest({ a: 1 })).not.toBe(argumentsDigest({ a: '1' }));
  });
  test('a 100 000-deep value is serialized without overflowing the stack', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(() => canonicalJson(deep)).not.toThrow();
    expect(canonicalJson(deep)).toContain('"[too_deep]"');
  });
});

describe('canonicalJson: the serialized form', () => {
  test.each([
    // eslint-disable-next-line no-sparse-arrays -- a hole is what is checked
    [[1, , 3], '[1,,3]'],
    [[undefined, null], '[null,null]'],
    [{ a: undefined, b: () => 1, c: 1 }, '{"c":1}'],
    [{ n: NaN, i: -Infinity }, '{"i":null,"n":null}'],
    [{ big: 12n }, '{"big":12}'],
    [{ é: 1, z: 2, A: 3 }, '{"A":3,"z":2,"é":1}'],
    ['s\n"', '"s\\n\\""'],
  ])('%p → %s', (value, text) => {
    expect(canonicalJson(value)).toBe(text);
  });

  test('maxDepth replaces deeper subtrees', () => {
    expect(canonicalJson({ a: { b: { c: 1 } } }, 2)).toBe('{"a":{"b":"[too_deep]"}}');
  });

  test('the digest is SHA-256 hex of the canonical form', () => {
    expect(argumentsDigest({ b: 1, a: 2 })).toMatch(/^[0-9a-f]{64}$/);
    expect(argumentsDigest({ b: 1, a: 2 })).toBe(argumentsDigest(JSON.parse('{"a":2,"b":1}')));
  });
});
