import fc from 'fast-check';
import {
  MAX_BAGGAGE_BYTES,
  MAX_BAGGAGE_MEMBERS,
  MAX_TRACESTATE_LENGTH,
  MAX_TRACESTATE_MEMBERS,
  formatBaggage,
  formatTraceparent,
  formatTracestate,
  isTracestateKey,
  isTracestateValue,
  parseBaggage,
  parseTraceparent,
  parseTracestate,
  readTraceMeta,
} from '../../lib/trace-context';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';
const VALID = `00-${TRACE}-${SPAN}-01`;

const reasonOf = (r: { ok: boolean; reason?: string }) => (r.ok ? 'ok' : r.reason);

describe('parseTraceparent', () => {
  test.each([
    ['the spec example', VALID, 'ok'],
    ['unsampled', `00-${TRACE}-${SPAN}-00`, 'ok'],
    ['unknown flags kept', `00-${TRACE}-${SPAN}-ff`, 'ok'],
    ['absent', undefined, 'absent'],
    ['a number', 42, 'not_string'],
    ['null', null, 'not_string'],
    ['empty', '', 'bad_length'],
    ['one short', VALID.slice(0, 54), 'bad_length'],
    ['version 00 with more after the flags', `${VALID}-00`, 'bad_length'],
    ['version 00 with a trailing space', `${VALID} `, 'bad_length'],
    ['a leading space', ` ${VALID.slice(0, 54)}`, 'bad_version'],
    ['version ff', `ff-${TRACE}-${SPAN}-01`, 'bad_version'],
    ['version not hex', `0g-${TRACE}-${SPAN}-01`, 'bad_version'],
    ['version upper-case hex', `0A-${TRACE}-${SPAN}-01`, 'bad_version'],
    ['upper-case trace-id', `00-${TRACE.toUpperCase()}-${SPAN}-01`, 'bad_format'],
    ['upper-case span-id', `00-${TRACE}-${SPAN.toUpperCase()}-01`, 'bad_format'],
    ['upper-case flags', `00-${TRACE}-${SPAN}-0A`, 'bad_format'],
    ['wrong separator', `00_${TRACE}-${SPAN}-01`, 'bad_format'],
    ['separators moved', `00-${TRACE.slice(1)}-0${SPAN}-01`, 'bad_format'],
    ['zero trace-id', `00-${'0'.repeat(32)}-${SPAN}-01`, 'zero_trace_id'],
    ['zero span-id', `00-${TRACE}-${'0'.repeat(16)}-01`, 'zero_span_id'],
    ['a later version, exact length', `cc-${TRACE}-${SPAN}-01`, 'ok'],
    ['a later version with more fields', `cc-${TRACE}-${SPAN}-01-what-the-future-holds`, 'ok'],
    ['a later version, no dash after the flags', `cc-${TRACE}-${SPAN}-01what`, 'bad_length'],
    ['a later version, too long', `cc-${TRACE}-${SPAN}-01-${'x'.repeat(600)}`, 'bad_length'],
  ])('%s', (_name, header, reason) => {
    expect(reasonOf(parseTraceparent(header))).toBe(reason);
  });

  test('the fields of the spec example', () => {
    expect(parseTraceparent(VALID)).toEqual({
      ok: true,
      value: { version: '00', traceId: TRACE, spanId: SPAN, traceFlags: 1, sampled: true },
    });
  });

  test('a later version is read by the version-00 rules and written back as 00', () => {
    const r = parseTraceparent(`cc-${TRACE}-${SPAN}-03-extra`);
    expect(r.ok && r.value).toMatchObject({ version: 'cc', traceId: TRACE, spanId: SPAN, traceFlags: 3 });
    expect(r.ok && formatTraceparent(r.value)).toBe(`00-${TRACE}-${SPAN}-03`);
  });
});

describe('parseTracestate', () => {
  const ok = (h: string) => {
    const r = parseTracestate(h);
    if (!r.ok) throw new Error(`refused: ${r.reason}`);
    return r.entries.map((e) => `${e.key}=${e.value}`);
  };

  test.each([
    [
      'the spec example',
      'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE',
      ['rojo=00f067aa0ba902b7', 'congo=t61rcWkgMzE'],
    ],
    ['spaces and tabs around members', ' rojo=1 ,\tcongo=2\t', ['rojo=1', 'congo=2']],
    ['empty members skipped', 'rojo=1,,  ,congo=2,', ['rojo=1', 'congo=2']],
    ['empty header', '', []],
    ['multi-tenant key', 'fw529a3039@dt=FW4', ['fw529a3039@dt=FW4']],
    ['a tenant may start with a digit', '0tenant@sys=v', ['0tenant@sys=v']],
    ['all key characters', 'a0_-*/=x', ['a0_-*/=x']],
    ['a value with inner spaces', 'k=a b', ['k=a b']],
  ])('%s', (_name, header, entries) => {
    expect(ok(header)).toEqual(entries);
  });

  test.each([
    ['absent', undefined, 'absent'],
    ['not a string', ['rojo=1'], 'not_string'],
    ['no equals sign', 'rojo', 'bad_member'],
    ['upper-case key', 'Rojo=1', 'bad_key'],
    ['key starting with a digit', '1rojo=1', 'bad_key'],
    ['empty key', '=1', 'bad_key'],
    ['system id starting with a digit', 'tenant@1sys=1', 'bad_key'],
    ['system id too long', `t@${'a'.repeat(15)}=1`, 'bad_key'],
    ['tenant id too long', `${'a'.repeat(242)}@s=1`, 'bad_key'],
    ['two @', 'a@b@c=1', 'bad_key'],
    ['key of 257', `${'a'.repeat(257)}=1`, 'bad_key'],
    ['empty value', 'rojo=', 'bad_value'],
    ['value with =', 'rojo=a=b', 'bad_value'],
    ['value with a control', 'rojo=a\u0001', 'bad_value'],
    ['value not ASCII', 'rojo=é', 'bad_value'],
    ['value of 257', `k=${'v'.repeat(257)}`, 'bad_value'],
    ['duplicate key', 'rojo=1,congo=2,rojo=3', 'duplicate_key'],
    ['33 members', Array.from({ length: 33 }, (_, i) => `k${i}=v`).join(','), 'too_many_members'],
    ['over 512', `k=${'v'.repeat(MAX_TRACESTATE_LENGTH)}`, 'too_long'],
  ])('%s is refused', (_name, header, reason) => {
    expect(reasonOf(parseTracestate(header))).toBe(reason);
  });

  test("a value may hold spaces but not end with one (the spaces after it are the separator's)", () => {
    expect(isTracestateValue('a b')).toBe(true);
    expect(isTracestateValue('a ')).toBe(false);
    expect(isTracestateValue(' a')).toBe(true);
    expect(ok('rojo= a \t')).toEqual(['rojo= a']);
  });

  test('32 members and 512 characters are accepted', () => {
    expect(ok(Array.from({ length: MAX_TRACESTATE_MEMBERS }, (_, i) => `k${i}=v`).join(','))).toHaveLength(
      32,
    );
    const long = `k=${'v'.repeat(254)},l=${'v'.repeat(253)}`;
    expect(long).toHaveLength(MAX_TRACESTATE_LENGTH);
    expect(ok(long)).toHaveLength(2);
  });
});

describe('parseBaggage', () => {
  test('the example of the conventions', () => {
    expect(parseBaggage('userId=alice,serverNode=DF%2028,isProduction=false')).toEqual({
      ok: true,
      entries: [
        { key: 'userId', value: 'alice', properties: [] },
        { key: 'serverNode', value: 'DF 28', properties: [] },
        { key: 'isProduction', value: 'false', properties: [] },
      ],
    });
  });

  test.each([
    ['spaces around separators', ' a = 1 , b=2 ', [['a', '1', []]].concat([['b', '2', []]])],
    ['properties', 'a=1;p1;p2=x ; p3 = y', [['a', '1', [['p1'], ['p2', 'x'], ['p3', 'y']]]]],
    ['empty value', 'a=', [['a', '', []]]],
    ['UTF-8 percent-encoded', 'a=%E2%82%AC', [['a', '€', []]]],
    ['lower-case percent hex', 'a=%e2%82%ac', [['a', '€', []]]],
    ['an invalid UTF-8 sequence decodes to U+FFFD', 'a=%FF', [['a', '\uFFFD', []]]],
    [
      'a % not followed by two hex digits is itself',
      'a=50%,b=%4',
      [
        ['a', '50%', []],
        ['b', '%4', []],
      ],
    ],
    ['token keys', "a!#$%&'*+-.^_`|~=1", [["a!#$%&'*+-.^_`|~", '1', []]]],
  ])('%s', (_name, header, expected) => {
    const r = parseBaggage(header);
    if (!r.ok) throw new Error(`refused: ${r.reason}`);
    const shape = r.entries.map((e) => [
      e.key,
      e.value,
      e.properties.map((p) => (p.value === undefined ? [p.key] : [p.key, p.value])),
    ]);
    expect(shape).toEqual(expected);
  });

  test.each([
    ['absent', undefined, 'absent'],
    ['not a string', { a: '1' }, 'not_string'],
    ['empty', '', 'bad_member'],
    ['an empty member', 'a=1,,b=2', 'bad_member'],
    ['a trailing comma', 'a=1,', 'bad_member'],
    ['no equals sign', 'a', 'bad_value'],
    ['empty key', '=1', 'bad_key'],
    ['key with a space inside', 'a b=1', 'bad_key'],
    ['key not ASCII', 'é=1', 'bad_key'],
    ['value with a space inside', 'a=1 2', 'bad_value'],
    ['value with a quote', 'a="1"', 'bad_value'],
    ['value with a backslash', 'a=1\\2', 'bad_value'],
    ['value not ASCII', 'a=€', 'bad_value'],
    ['a bad property key', 'a=1;p q=2', 'bad_property'],
    ['a bad property value', 'a=1;p=x y', 'bad_property'],
    ['65 members', Array.from({ length: 65 }, (_, i) => `k${i}=v`).join(','), 'too_many_members'],
    ['over 8192 bytes', `a=${'v'.repeat(MAX_BAGGAGE_BYTES)}`, 'too_long'],
  ])('%s is refused', (_name, header, reason) => {
    expect(reasonOf(parseBaggage(header))).toBe(reason);
  });

  test('64 members and 8192 bytes are accepted', () => {
    const r = parseBaggage(Array.from({ length: MAX_BAGGAGE_MEMBERS }, (_, i) => `k${i}=v`).join(','));
    expect(r.ok && r.entries).toHaveLength(64);
    const long = `a=${'v'.repeat(MAX_BAGGAGE_BYTES - 2)}`;
    expect(reasonOf(parseBaggage(long))).toBe('ok');
  });
});

describe('readTraceMeta', () => {
  test('reads the three keys of _meta', () => {
    const t = readTraceMeta({ traceparent: VALID, tracestate: 'rojo=1', baggage: 'a=1', other: 'x' });
    expect(t.traceparent.ok && t.traceparent.value.traceId).toBe(TRACE);
    expect(t.tracestate.ok && t.tracestate.entries).toEqual([{ key: 'rojo', value: '1' }]);
    expect(t.baggage.ok && t.baggage.entries).toEqual([{ key: 'a', value: '1', properties: [] }]);
  });

  test('a tracestate beside a missing or invalid traceparent is not read', () => {
    expect(reasonOf(readTraceMeta({ tracestate: 'rojo=1' }).tracestate)).toBe('no_traceparent');
    expect(reasonOf(readTraceMeta({ traceparent: 'nope', tracestate: 'rojo=1' }).tracestate)).toBe(
      'no_traceparent',
    );
    expect(reasonOf(readTraceMeta({ traceparent: VALID }).tracestate)).toBe('absent');
  });

  test('baggage is read on its own, without a traceparent', () => {
    expect(reasonOf(readTraceMeta({ baggage: 'a=1' }).baggage)).toBe('ok');
  });

  test.each([
    ['undefined', undefined],
    ['null', null],
    ['a string', VALID],
    ['an array', [VALID]],
    ['an object without the keys', { other: 1 }],
  ])('%s reads as absent', (_name, meta) => {
    const t = readTraceMeta(meta);
    expect([t.traceparent, t.tracestate, t.baggage].map(reasonOf)).toEqual(['absent', 'absent', 'absent']);
  });

  test('an inherited key, a getter and a throwing proxy read as absent, and nothing runs', () => {
    let ran = false;
    const inherited = Object.create({ traceparent: VALID }) as object;
    const getter = Object.defineProperty({}, 'traceparent', {
      enumerable: true,
      get: () => {
        ran = true;
        return VALID;
      },
    });
    const hostile = new Proxy(
      {},
      {
        getOwnPropertyDescriptor: () => {
          throw new Error('trap');
        },
      },
    );
    const { proxy: revoked, revoke } = Proxy.revocable({}, {});
    revoke();
    for (const meta of [inherited, getter, hostile, revoked]) {
      expect(reasonOf(readTraceMeta(meta).traceparent)).toBe('absent');
    }
    expect(ran).toBe(false);
  });

  test('non-string members are refused as not_string', () => {
    const t = readTraceMeta({ traceparent: 1, baggage: null });
    expect(reasonOf(t.traceparent)).toBe('not_string');
    expect(reasonOf(t.baggage)).toBe('not_string');
  });
});

describe('properties', () => {
  const hex = (n: number) =>
    fc
      .string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: n, maxLength: n })
      .filter((s) => /[1-9a-f]/.test(s));
  const lc = 'abcdefghijklmnopqrstuvwxyz';
  const keyChars = `${lc}0123456789_-*/`;
  const chars = (set: string, min: number, max: number) =>
    fc.string({ unit: fc.constantFrom(...set), minLength: min, maxLength: max });
  const stateKey = fc.oneof(
    fc.tuple(chars(lc, 1, 1), chars(keyChars, 0, 20)).map(([a, b]) => a + b),
    fc
      .tuple(chars(`${lc}0123456789`, 1, 1), chars(keyChars, 0, 20), chars(lc, 1, 1), chars(keyChars, 0, 13))
      .map(([a, b, c, d]) => `${a}${b}@${c}${d}`),
  );
  const printable = Array.from({ length: 0x7e - 0x20 + 1 }, (_, i) => String.fromCharCode(0x20 + i))
    .filter((c) => c !== ',' && c !== '=')
    .join('');
  const stateValue = fc
    .tuple(chars(printable, 0, 10), chars(printable.replace(' ', ''), 1, 1))
    .map(([a, b]) => a + b);
  const tchars = "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
  const token = chars(tchars, 1, 12);
  const octets = Array.from({ length: 0x7e - 0x21 + 1 }, (_, i) => String.fromCharCode(0x21 + i))
    .filter((c) => !'",;\\'.includes(c))
    .join('');

  test('a valid traceparent round-trips', () => {
    fc.assert(
      fc.property(hex(32), hex(16), fc.integer({ min: 0, max: 255 }), (traceId, spanId, traceFlags) => {
        const header = formatTraceparent({ traceId, spanId, traceFlags });
        const r = parseTraceparent(header);
        expect(r).toEqual({
          ok: true,
          value: { version: '00', traceId, spanId, traceFlags, sampled: (traceFlags & 1) === 1 },
        });
        expect(r.ok && formatTraceparent(r.value)).toBe(header);
      }),
    );
  });

  test('a valid tracestate round-trips', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.record({ key: stateKey, value: stateValue }), {
          selector: (e) => e.key,
          maxLength: 8,
        }),
        (entries) => {
          expect(isTracestateKey(entries[0]?.key ?? 'a')).toBe(true);
          expect(isTracestateValue(entries[0]?.value ?? 'a')).toBe(true);
          const header = formatTracestate(entries);
          expect(parseTracestate(header)).toEqual({ ok: true, entries });
        },
      ),
    );
  });

  test('a valid baggage round-trips, any Unicode value included', () => {
    const property = fc.oneof(
      token.map((key) => ({ key })),
      fc.record({ key: token, value: chars(octets, 0, 8) }),
    );
    const entry = fc.record({
      key: token,
      value: fc.string({ unit: 'binary', maxLength: 12 }),
      properties: fc.array(property, { maxLength: 3 }),
    });
    fc.assert(
      fc.property(fc.array(entry, { minLength: 1, maxLength: 8 }), (entries) => {
        const header = formatBaggage(entries);
        expect(parseBaggage(header)).toEqual({ ok: true, entries });
      }),
    );
  });

  test('any string input answers a result without throwing', () => {
    const anyText = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 80 }),
      fc.string({ unit: fc.constantFrom(...'0f-=,; %@\t'), maxLength: 80 }),
    );
    fc.assert(
      fc.property(anyText, anyText, anyText, (a, b, c) => {
        for (const r of [parseTraceparent(a), parseTracestate(b), parseBaggage(c)]) {
          expect(typeof r.ok).toBe('boolean');
          if (!r.ok) expect(typeof r.reason).toBe('string');
        }
        const t = readTraceMeta({ traceparent: a, tracestate: b, baggage: c });
        expect(typeof t.traceparent.ok).toBe('boolean');
      }),
    );
  });

  test('any value answers a result without throwing', () => {
    fc.assert(
      fc.property(fc.anything(), fc.anything(), (v, meta) => {
        expect(typeof parseTraceparent(v).ok).toBe('boolean');
        expect(typeof parseTracestate(v).ok).toBe('boolean');
        expect(typeof parseBaggage(v).ok).toBe('boolean');
        expect(typeof readTraceMeta(meta).baggage.ok).toBe('boolean');
      }),
    );
  });
});

describe('hostile input', () => {
  // The work on an over-long value is bounded by the refusal length, not by the input: a megabyte-long value is
  // refused after a length check, and an at-the-bound value of the worst shape is read in one pass.
  const huge = (unit: string) => unit.repeat(Math.ceil(1_000_000 / unit.length));

  test.each([
    ['traceparent', () => parseTraceparent(`00-${TRACE}-${SPAN}-01${huge('-')}`), 'bad_length'],
    ['tracestate', () => parseTracestate(huge('a=,')), 'too_long'],
    ['baggage', () => parseBaggage(huge('a=1;')), 'too_long'],
    ['baggage of percent signs', () => parseBaggage(huge('%')), 'too_long'],
  ])('a megabyte-long %s is refused by its length', (_name, run, reason) => {
    expect(reasonOf(run())).toBe(reason);
  });

  test('values at the bound of the worst shapes are read in one pass', () => {
    const shapes = [
      ',',
      ';',
      '=',
      '%',
      ' ',
      'a;',
      'a=1;',
      'a=%e2%82%ac;p;',
      'k=v,',
      `${'a'.repeat(255)}=`,
      '@',
      'a@',
    ];
    for (const s of shapes) {
      const atBound = s.repeat(Math.floor(MAX_BAGGAGE_BYTES / s.length));
      expect(typeof parseBaggage(atBound).ok).toBe('boolean');
      expect(typeof parseTracestate(atBound.slice(0, MAX_TRACESTATE_LENGTH)).ok).toBe('boolean');
    }
    // 64 members of the longest value the bound leaves: accepted, percent-decoded in one pass each.
    const member = `k=${'%41'.repeat(40)}`;
    const r = parseBaggage(Array.from({ length: MAX_BAGGAGE_MEMBERS }, () => member).join(','));
    expect(r.ok && r.entries[63]?.value).toBe('A'.repeat(40));
  });
});
