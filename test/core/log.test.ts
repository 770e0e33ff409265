/**
 * log(): every string of the message and the metadata goes through the audit sanitizer (lib/sanitize.ts
 * cleanText) before the logger sees it, whatever the call site passed. Checked on a real winston logger with
 * the JSON format, whose output escapes C0 controls but not C1 controls, bidi controls or U+2028/U+2029.
 */
import fc from 'fast-check';
import { errorMeta, log } from '../../core/log';
import { FORGERY, RAW_IN_JSON, UNSAFE, jsonLogger, strings } from '../support/json-logger';

/** The one line written; it carries none of the forgery material, raw or as a JSON escape. */
function onlyLine(lines: string[]): Record<string, unknown> {
  expect(lines).toHaveLength(1);
  const line = lines[0]!;
  expect(line.slice(0, -1)).not.toMatch(RAW_IN_JSON);
  expect(line.slice(0, -1)).not.toMatch(/[\r\n]/);
  const record = JSON.parse(line) as Record<string, unknown>;
  for (const s of strings(record)) expect(s).not.toMatch(UNSAFE);
  return record;
}

describe('log() sanitizes what it writes', () => {
  test.each(FORGERY.map((c) => [JSON.stringify(c), c]))('%s in the message and in meta', async (_n, c) => {
    const { logger, lines } = jsonLogger();
    log(logger, 'warn', `oidcAuth: invalid credential ${c}forged`, {
      kid: `k${c}1`,
      nested: { list: [`a${c}b`, { deep: `x${c}y` }] },
      [`key${c}`]: 1,
    });
    const record = onlyLine(lines);
    expect(record.level).toBe('warn');
    // A CSI (U+009B) takes the letter after it as its final byte: the sanitizer removes the whole sequence.
    expect(record.message).toMatch(/^oidcAuth: invalid credential ?f?orged$/);
    expect(record.kid).toMatch(/^k ?1$/);
  });

  test('numbers, booleans and null are kept; an Error becomes its message and stack, cleaned', () => {
    const { logger, lines } = jsonLogger();
    const err = new Error('bad name \u202eevil\u2028next');
    log(logger, 'error', 'boom', { n: 3, ok: true, none: null, err, error: errorMeta(err) });
    const record = onlyLine(lines);
    expect(record).toMatchObject({ n: 3, ok: true, none: null });
    expect((record.err as { message: string }).message).toBe('bad name evil next');
    expect((record.error as { stack: string }).stack).toMatch(/^Error: bad name evil next at /);
  });

  test('cycles, depth, counts and lengths are bounded', () => {
    const { logger, lines } = jsonLogger();
    const cyclic: Record<string, unknown> = { name: 'c' };
    cyclic.self = cyclic;
    let deep: Record<string, unknown> = { leaf: 'x' };
    for (let i = 0; i < 50; i++) deep = { d: deep };
    const wide = Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`k${i}`, i]));
    log(logger, 'warn', 'm'.repeat(100_000), {
      cyclic,
      deep,
      wide,
      long: 'z'.repeat(1_000_000),
      many: Array.from({ length: 10_000 }, (_, i) => i),
    });
    const line = lines[0]!;
    expect(line.length).toBeLessThan(64 * 1024);
    const record = onlyLine(lines);
    expect((record.cyclic as { self: unknown }).self).toBe('[cycle]');
    expect(JSON.stringify(record.deep)).toContain('[too deep]');
    expect(Object.keys(record.wide as object).length).toBeLessThanOrEqual(65);
    expect((record.long as string).length).toBeLessThanOrEqual(4096);
    expect((record.message as string).length).toBeLessThanOrEqual(4096);
  });

  test('a throwing getter or a prototype key in meta does not lose the line', () => {
    const { logger, lines } = jsonLogger();
    const meta = JSON.parse('{"__proto__":{"polluted":true},"a":"ok"}') as Record<string, unknown>;
    Object.defineProperty(meta, 'bad', {
      enumerable: true,
      get() {
        throw new Error('getter');
      },
    });
    log(logger, 'warn', 'still written', meta);
    const record = onlyLine(lines);
    expect(record).toMatchObject({ message: 'still written', a: 'ok' });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  test('property: no string in the message or any meta value reaches the line unsanitized', () => {
    const unit = fc.oneof(
      fc.constantFrom(...FORGERY, '\u0000', '\u007f', '\u0090', '\u009d', '\u200e', '\u202a', '\u2069'),
      fc.string({ unit: 'binary', maxLength: 4 }),
    );
    const text = fc.array(unit, { maxLength: 12 }).map((parts) => parts.join(''));
    const meta = fc.dictionary(
      text,
      fc.oneof(
        text,
        fc.integer(),
        fc.array(text, { maxLength: 3 }),
        fc.dictionary(text, text, { maxKeys: 3 }),
      ),
      { maxKeys: 4 },
    );
    fc.assert(
      fc.property(text, meta, (message, m) => {
        const { logger, lines } = jsonLogger();
        log(logger, 'warn', message, m);
        const line = lines[0]!.slice(0, -1);
        if (RAW_IN_JSON.test(line) || /[\r\n]/.test(line)) return false;
        return strings(JSON.parse(line)).every((s) => !UNSAFE.test(s));
      }),
      { numRuns: 300 },
    );
  });
});
