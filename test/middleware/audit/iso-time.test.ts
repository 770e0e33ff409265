/**
 * The audit's time formatter gives exactly what `new Date(ms).toISOString()` gives, for any time Date can
 * represent, in any order of calls (the text it keeps for the current second never leaks into another).
 */
import fc from 'fast-check';
import { createIsoTime } from '../../../middleware/audit/iso-time';

const MAX = 8.64e15;

test('equals Date#toISOString for any time, integer or not, in any order', () => {
  const time = fc.oneof(
    fc.integer({ min: -MAX, max: MAX }),
    fc.double({ min: -MAX, max: MAX, noNaN: true }),
    // Times close together, so that consecutive calls share a second (and cross its boundaries).
    fc.integer({ min: 1_700_000_000_000, max: 1_700_000_003_000 }),
    fc.constantFrom(0, -1, 999, 1000, -1000, -999.5, 253402300799999, 253402300800000, MAX, -MAX),
  );
  fc.assert(
    fc.property(fc.array(time, { minLength: 1, maxLength: 50 }), (times) => {
      const iso = createIsoTime();
      for (const t of times) expect(iso(t)).toBe(new Date(t).toISOString());
    }),
    { numRuns: 500 },
  );
});

test('a time Date cannot represent throws as Date does', () => {
  const iso = createIsoTime();
  for (const t of [NaN, Infinity, -Infinity, MAX + 1000]) {
    expect(() => iso(t)).toThrow(RangeError);
  }
});
