import { isJsonObject } from '../../lib/json';

describe('isJsonObject', () => {
  test.each<[string, unknown, boolean]>([
    ['a literal object', { a: 1 }, true],
    ['an empty object', {}, true],
    ['an object without a prototype', Object.create(null), true],
    ['a parsed object', JSON.parse('{"__proto__": 1}'), true],
    ['a class instance', new (class {})(), true],
    ['a Buffer (the prototype is not checked)', Buffer.from('x'), true],
    ['null', null, false],
    ['undefined', undefined, false],
    ['an array', [], false],
    ['an array with members', [{ a: 1 }], false],
    ['a string', '{}', false],
    ['a number', 0, false],
    ['a boolean', true, false],
    ['a function', () => ({}), false],
  ])('%s → %s', (_, value, expected) => {
    expect(isJsonObject(value)).toBe(expected);
  });
});
