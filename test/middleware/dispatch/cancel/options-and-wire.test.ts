/**
 * dispatch()'s `cancellation` group is validated like every group, and the change feed's channel carries a
 * cancellation exactly: what is written is read back, anything out of bounds or of another shape is dropped.
 */
import { dispatch } from '../../../../middleware/dispatch';
import { decodeWire, encodeCancellation } from '../../../../handlers/changes/wire';

const FROM = '0123456789abcdef';
const base = { anonymous: true, handlers: {}, serverInfo: { name: 't', version: '1' } };

describe('dispatch({ cancellation })', () => {
  test('a relay and maxInFlight are taken', () => {
    const relay = { publishCancellation: () => {}, onCancellation: () => () => {} };
    expect(() => dispatch({ ...base, cancellation: { relay, maxInFlight: 0 } })).not.toThrow();
  });

  test.each([
    [{ maxInFlite: 1 }, /unknown option cancellation\."maxInFlite"; did you mean "maxInFlight"\?/],
    [{ maxInFlight: -1 }, /cancellation\.maxInFlight/],
    [{ relay: {} }, /option "cancellation.relay" must be a cancellation relay/],
    [{ relay: 'redis' }, /option "cancellation.relay" must be a cancellation relay/],
  ])('%j is refused with a TypeError naming the option', (cancellation, message) => {
    expect(() => dispatch({ ...base, cancellation } as never)).toThrow(TypeError);
    expect(() => dispatch({ ...base, cancellation } as never)).toThrow(message);
  });
});

describe('cancellations on the change feed channel', () => {
  test.each([
    { principal: '["api_key","key","demo"]', session: null, requestId: 7 },
    { principal: 'p', session: 'sess-1', requestId: 'abc' },
  ])('%j round-trips', (c) => {
    const encoded = encodeCancellation(FROM, c);
    expect(encoded.ok).toBe(true);
    expect(decodeWire(encoded.ok ? encoded.message : '')).toEqual({ ok: true, from: FROM, cancellation: c });
  });

  test('out of bounds: not written', () => {
    const long = { principal: 'p', session: null, requestId: 'x'.repeat(257) };
    expect(encodeCancellation(FROM, long)).toEqual({ ok: false, reason: 'too_large' });
    expect(encodeCancellation(FROM, { principal: 'p', session: null, requestId: 1.5 })).toMatchObject({
      ok: false,
    });
  });

  test.each([
    { v: 1, from: FROM, type: 'cancelled', principal: 'p', session: null },
    { v: 1, from: FROM, type: 'cancelled', principal: 'p', session: null, requestId: 1, extra: 1 },
    { v: 1, from: FROM, type: 'cancelled', principal: '', session: null, requestId: 1 },
    { v: 1, from: FROM, type: 'cancelled', principal: 'p', session: 3, requestId: 1 },
    { v: 1, from: FROM, type: 'cancelled', principal: 'p', session: null, requestId: { id: 1 } },
    { v: 1, from: FROM, type: 'cancelled', principal: 'p', session: null, requestId: 'x'.repeat(257) },
  ])('dropped: %j', (o) => {
    expect(decodeWire(JSON.stringify(o))).toEqual({ ok: false, reason: 'bad_shape' });
  });
});
