/**
 * The change feed's channel messages: what is written, and every shape a reader drops with its reason.
 */
import { MAX_WIRE_BYTES, MAX_WIRE_URI_LENGTH, decodeWire, encodeWire } from '../../../handlers/changes/wire';

const FROM = '0123456789abcdef';
const msg = (o: unknown) => JSON.stringify(o);

describe('encodeWire', () => {
  test.each([
    [{ type: 'listChanged' } as const, `{"v":1,"from":"${FROM}","type":"listChanged"}`],
    [
      { type: 'updated', uri: 'notes://today' } as const,
      `{"v":1,"from":"${FROM}","type":"updated","uri":"notes://today"}`,
    ],
  ])('%j', (event, expected) => {
    expect(encodeWire(FROM, event)).toEqual({ ok: true, message: expected });
    expect(decodeWire(expected)).toEqual({ ok: true, from: FROM, event });
  });

  test('a URI past the cap, or a message past the byte cap, is not written', () => {
    const long = 'x://' + 'a'.repeat(MAX_WIRE_URI_LENGTH);
    expect(encodeWire(FROM, { type: 'updated', uri: long })).toEqual({ ok: false, reason: 'too_large' });
    // Within the character cap, over the byte cap: three bytes per character.
    const wide = 'x://' + '\u20ac'.repeat(6000);
    expect(encodeWire(FROM, { type: 'updated', uri: wide })).toEqual({ ok: false, reason: 'too_large' });
  });
});

describe('decodeWire drops anything else', () => {
  const rows: [string, unknown, string][] = [
    ['not a string', Buffer.from('x'), 'bad_shape'],
    ['not JSON', '{"v":1,', 'not_json'],
    ['too large', 'x'.repeat(MAX_WIRE_BYTES + 1), 'too_large'],
    ['too many bytes', '"' + '\u20ac'.repeat(6000) + '"', 'too_large'],
    ['null', 'null', 'bad_shape'],
    ['an array', msg([1, FROM, 'listChanged']), 'bad_shape'],
    ['a number', '1', 'bad_shape'],
    ['no version', msg({ from: FROM, type: 'listChanged' }), 'bad_shape'],
    ['a version as text', msg({ v: '1', from: FROM, type: 'listChanged' }), 'bad_shape'],
    ['another version', msg({ v: 2, from: FROM, type: 'listChanged' }), 'unknown_version'],
    ['no origin', msg({ v: 1, type: 'listChanged' }), 'bad_shape'],
    ['an origin not hex', msg({ v: 1, from: 'ZZZZZZZZZZZZZZZZ', type: 'listChanged' }), 'bad_shape'],
    ['a short origin', msg({ v: 1, from: 'abc', type: 'listChanged' }), 'bad_shape'],
    ['an unknown type', msg({ v: 1, from: FROM, type: 'deleted' }), 'bad_shape'],
    ['a prototype name as type', msg({ v: 1, from: FROM, type: 'toString' }), 'bad_shape'],
    ['an extra member', msg({ v: 1, from: FROM, type: 'listChanged', uri: 'x://y' }), 'bad_shape'],
    [
      'an own __proto__ member',
      `{"v":1,"from":"${FROM}","type":"updated","uri":"x://y","__proto__":{"uri":"x://z"}}`,
      'bad_shape',
    ],
    ['updated without uri', msg({ v: 1, from: FROM, type: 'updated', url: 'x://y' }), 'bad_shape'],
    ['an empty uri', msg({ v: 1, from: FROM, type: 'updated', uri: '' }), 'bad_shape'],
    ['a uri not a string', msg({ v: 1, from: FROM, type: 'updated', uri: ['x://y'] }), 'bad_shape'],
    [
      'a uri past the cap',
      msg({ v: 1, from: FROM, type: 'updated', uri: 'a'.repeat(MAX_WIRE_URI_LENGTH + 1) }),
      'bad_shape',
    ],
  ];
  test.each(rows)('%s → %s', (_what, message, reason) => {
    expect(decodeWire(message)).toEqual({ ok: false, reason });
  });
});
