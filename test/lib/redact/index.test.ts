import fc from 'fast-check';
import {
  type RedactOptions,
  type RuleName,
  compileRedactor,
  parseRedactMode,
  redactText,
  redactValue,
} from '../../../lib/redact';
import { luhn } from '../../../lib/redact/rules/card';
import { isMaskableIPv6 } from '../../../lib/redact/rules/ip';
import { REDACT_GUARD, RULE_NAMES, TOO_DEEP_MARKER, TRUNCATED_MARKER } from '../../../lib/redact/types';

const JWT = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk';
const PEM = '-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----';

function redactor(o: RedactOptions = {}) {
  const c = compileRedactor(o);
  if (!c.ok) throw new Error(c.message);
  return c.redactor;
}

describe('redaction vectors (reference/mcpkit.md §4.4)', () => {
  type Row = [input: string, output: string, hits: Partial<Record<RuleName, number>>, opts?: RedactOptions];
  const rows: Row[] = [
    ['write to sergey@acme.com now', 'write to s***@acme.com now', { email: 1 }],
    ['write to sergey@acme.com now', 'write to [masked:email] now', { email: 1 }, { maskEmailDomain: true }],
    ['a@x.com, b@y.org', 'a***@x.com, b***@y.org', { email: 2 }],
    ['?private_token=glpat-abcdefghijkl', '?private_token=[masked:token]', { token: 1 }],
    ['Authorization: Bearer abcdefghijklm', 'Authorization: Bearer [masked:token]', { token: 1 }],
    ['{"apiKey":"abcdefghijklmn"}', '{"apiKey":"[masked:token]"}', { token: 1 }],
    ['password: abcdefghijklmn', 'password: [masked:token]', { token: 1 }],
    ['api_key=abcdefghijklmn', 'api_key=[masked:token]', { token: 1 }],
    ['secret = abcdefghijklmn', 'secret = [masked:token]', { token: 1 }],
    ['token=short', 'token=short', {}],
    [`Bearer ${JWT}`, 'Bearer [masked:jwt]', { jwt: 1 }],
    [`before\n${PEM}\nafter`, 'before\n[masked:pem]\nafter', { pem: 1 }],
    ['pay with 4242 4242 4242 4242 today', 'pay with [masked:card]today', { card: 1 }],
    ['created_at 1757635200000', 'created_at 1757635200000', {}],
    ['order 4242424242424241', 'order 4242424242424241', {}],
    ['call +1 (415) 555-0132', 'call [masked:phone]', { phone: 1 }],
    ['call +971 50 123 4567', 'call [masked:phone]', { phone: 1 }],
    ['call +7 916 123-45-67', 'call [masked:phone]', { phone: 1 }],
    ['call 8 916 123-45-67 now', 'call [masked:phone] now', { phone: 1 }],
    ['version +1 234.56', 'version +1 234.56', {}],
    ['from 192.168.1.10 at', 'from [masked:ip] at', { ip: 1 }],
    ['v10.0.0.1 shipped', 'v10.0.0.1 shipped', {}],
    ['oid 1.3.6.1.4.1', 'oid 1.3.6.1.4.1', {}],
    ['999.1.1.1', '999.1.1.1', {}],
    [
      'sergey@acme.com from 192.168.1.10',
      'sergey@acme.com from 192.168.1.10',
      { email: 1, ip: 1 },
      { mode: 'warn' },
    ],
    ['sergey@acme.com', 'sergey@acme.com', {}, { mode: 'off' }],
    [
      'sergey@acme.com from 192.168.1.10',
      's***@acme.com from 192.168.1.10',
      { email: 1 },
      { rules: ['email'] },
    ],
    ['', '', {}],
  ];
  // Always four columns: with fewer, jest would take the callback's last parameter for `done`.
  test.each(rows.map(([i, o, h, opts]) => [i, o, h, opts ?? {}] as const))(
    '%j → %j',
    (input, output, hits, opts) => {
      const r = redactText(input, opts);
      expect(r.text).toBe(output);
      expect(r.result.hits).toEqual(hits);
      expect(r.result.total).toBe(Object.values(hits).reduce((a, b) => a + (b ?? 0), 0));
    },
  );

  test('warn counts every rule on the original text: Bearer <jwt> is jwt and token', () => {
    const r = redactText(`Bearer ${JWT}`, { mode: 'warn' });
    expect(r.text).toBe(`Bearer ${JWT}`);
    expect(r.result.hits).toEqual({ jwt: 1, token: 1 });
  });

  test('fired names come in rule order; off fires nothing', () => {
    expect(redactText('sergey@acme.com from 192.168.1.10', { mode: 'warn' }).result.fired).toEqual([
      'email',
      'ip',
    ]);
    expect(redactText(`ip 10.0.0.1 then ${JWT}`).result.fired).toEqual(['jwt', 'ip']);
    expect(redactText('sergey@acme.com', { mode: 'off' }).result).toMatchObject({ total: 0, fired: [] });
  });

  test('package-level helpers with a bad mode return the input unchanged, without throwing', () => {
    const r = redactText('sergey@acme.com', { mode: 'masc' as never });
    expect(r.text).toBe('sergey@acme.com');
    expect(r.result.total).toBe(0);
    expect(redactValue({ a: 'sergey@acme.com' }, { rules: ['e-mail' as never] }).value).toEqual({
      a: 'sergey@acme.com',
    });
  });
});

describe('false positives (not masked)', () => {
  test.each([
    ['dates', 'from 2024-01-15 to 2024-01-16, then 2024-01-17 2024-01-18'],
    ['ISO timestamps', 'at 2024-01-15T10:30:00Z and 2024-01-15 10:30:00.123'],
    ['version numbers (three parts, or prefixed)', 'node v20.19.1, app 1.2.3, build v1.2.3.4'],
    ['dotted ids longer than four parts', 'oid 1.3.6.1.4.1.311'],
    ['order ids that fail Luhn', 'order 4242424242424241 and 4000123412341235'],
    ['order ids that look like epoch milliseconds', 'order 1234567890123456'],
    ['UUIDs', 'id 123e4567-e89b-12d3-a456-426614174000'],
    ['amounts', 'total 1,234,567.89 USD'],
    ['short phone-like numbers', 'ext 555-0132, room +12 34'],
    ['times and MACs', '12:30:45 00:1a:2b:3c:4d:5e'],
    ['code with ::', 'std::vector<int> a[1::2] Foo::Bar ::1 fe80::1'],
    ['base64 not starting eyJ', 'data dGhpcyBpcyBub3QgYSBqd3Q.aGVsbG8gd29ybGQ.c2lnbmF0dXJl'],
    ['the word token in prose', 'the token is short; secret: no; password reset'],
    ['PEM-like text without the exact BEGIN form', '---BEGIN NOTES--- and -----BEGIN lowercase-----'],
  ])('%s', (_label, input) => {
    const r = redactText(input);
    expect(r.text).toBe(input);
    expect(r.result.total).toBe(0);
  });

  test('documented: a bare four-part dotted number is IPv4-shaped and is masked', () => {
    expect(redactText('release 1.2.3.4').text).toBe('release [masked:ip]');
  });
  test('documented: a Luhn-valid 13–19 digit number is masked even if it is an order id', () => {
    expect(redactText('order 4242424242424242').text).toBe('order [masked:card]');
  });
});

describe('rules beyond the reference vectors', () => {
  test.each([
    ['IPv6 full', 'peer 2001:0db8:85a3:0000:0000:8a2e:0370:7334 ok', 'peer [masked:ip] ok'],
    ['IPv6 compressed', 'peer 2001:db8::1 ok', 'peer [masked:ip] ok'],
    ['IPv4-mapped IPv6', 'peer ::ffff:192.168.1.10 ok', 'peer [masked:ip] ok'],
    ['IPv6 in a URL', 'http://[2001:db8:1::7]:8080/x', 'http://[[masked:ip]]:8080/x'],
    ['IPv6 at the end of a sentence', 'from 2001:db8::42.', 'from [masked:ip].'],
    ['card with dashes', 'card 4111-1111-1111-1111 exp', 'card [masked:card]exp'],
    ['Amex 4-6-5', 'amex 3782 822463 10005.', 'amex [masked:card].'],
    ['card next to another number', 'n 7 4242 4242 4242 4242 1', 'n 7 [masked:card] 1'],
    ['card unbroken', 'pan=4242424242424242;', 'pan=[masked:card];'],
    [
      'prefixed secret names',
      'client_secret=abcdefghijklmnop X-Api-Key: abcdefghijklmnop',
      'client_secret=[masked:token] X-Api-Key: [masked:token]',
    ],
    ['a long token value is masked whole', `token=${'a'.repeat(600)} end`, 'token=[masked:token] end'],
    ['unsigned JWT (empty signature)', 'eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0. x', '[masked:jwt]. x'],
    ['JWT glued to a word is not a JWT', `x${JWT}`, `x${JWT}`],
    [
      'PEM without END masks the rest (a cut key is still a key)',
      'k -----BEGIN PRIVATE KEY-----\nMIIEv',
      'k [masked:pem]',
    ],
    [
      'PEM with JSON-escaped newlines',
      '"-----BEGIN EC PRIVATE KEY-----\\nMHcC\\n-----END EC PRIVATE KEY-----"',
      '"[masked:pem]"',
    ],
    ['e-mail with subdomain and plus', 'to john.doe+tag@mail.example.co.uk.', 'to j***@mail.example.co.uk.'],
  ])('%s', (_label, input, output) => {
    expect(redactText(input).text).toBe(output);
  });

  test('luhn', () => {
    expect(luhn('4242424242424242')).toBe(true);
    expect(luhn('4242424242424241')).toBe(false);
    expect(luhn('79927398713')).toBe(true);
  });

  test('isMaskableIPv6 needs three written groups and a digit', () => {
    for (const s of ['2001:db8::1', '1:2:3:4:5:6:7:8', '::ffff:1.2.3.4', '2001:db8:0:0:0:0:2:1'])
      expect(isMaskableIPv6(s)).toBe(true);
    for (const s of [
      '::',
      '::1',
      'fe80::1',
      '1::2',
      'dead::beef:cafe',
      '1:2:3',
      ':::1',
      '1:2:3:4:5:6:7:8:9',
      '12345::1:2',
      '::ffff:1.2.3.999',
    ]) {
      expect(isMaskableIPv6(s)).toBe(false);
    }
  });
});

describe('values (reference/mcpkit.md §4.5)', () => {
  test.each([
    ['sergey@acme.com', 's***@acme.com', 1],
    [{ email: 'sergey@acme.com', count: 3 }, { email: 's***@acme.com', count: 3 }, 1],
    [['sergey@acme.com', 1, null], ['s***@acme.com', 1, null], 1],
    [{ users: [{ email: 'a@x.com' }] }, { users: [{ email: 'a***@x.com' }] }, 1],
    [null, null, 0],
    [{ 'sergey@acme.com': 4242424242424242 }, { 'sergey@acme.com': 4242424242424242 }, 0],
    [['a@x.com', 'plain'], ['a***@x.com', 'plain'], 1],
  ])('%j', (input, output, total) => {
    const r = redactValue(input);
    expect(r.value).toEqual(output);
    expect(r.result.total).toBe(total);
  });

  test('copy-on-write: the input is never mutated, untouched subtrees are shared', () => {
    const untouched = { a: [1, 2, 'plain'] };
    const input = { keep: untouched, hit: { email: 'sergey@acme.com' } };
    const snapshot = JSON.parse(JSON.stringify(input));
    const { value } = redactValue(input);
    expect(input).toEqual(snapshot);
    expect(value).not.toBe(input);
    expect(value.keep).toBe(untouched);
    expect(value.hit.email).toBe('s***@acme.com');
    const clean = { a: 'plain' };
    expect(redactValue(clean).value).toBe(clean);
  });

  test('warn mode returns the same value and counts', () => {
    const input = { a: 'sergey@acme.com', b: ['10.0.0.1'] };
    const r = redactValue(input, { mode: 'warn' });
    expect(r.value).toBe(input);
    expect(r.result.hits).toEqual({ email: 1, ip: 1 });
  });

  test('class instances and toJSON are walked as JSON.stringify would send them', () => {
    class User {
      constructor(public email: string) {}
    }
    const withToJSON = { toJSON: () => ({ email: 'b@y.org' }) };
    const r = redactValue({ u: new User('a@x.com'), j: withToJSON, d: new Date(0) });
    expect(JSON.parse(JSON.stringify(r.value))).toEqual({
      u: { email: 'a***@x.com' },
      j: { email: 'b***@y.org' },
      d: '1970-01-01T00:00:00.000Z',
    });
  });

  test('a key named __proto__ stays an own data property', () => {
    const input = JSON.parse('{"__proto__": "sergey@acme.com"}') as Record<string, unknown>;
    const out = redactValue(input).value as Record<string, unknown>;
    expect(Object.hasOwn(out, '__proto__')).toBe(true);
    expect(out['__proto__']).toBe('s***@acme.com');
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
  });

  test('deeper than maxDepth: replaced by a marker in mask mode (never sent unscanned), kept in warn', () => {
    let deep: unknown = 'sergey@acme.com';
    for (let i = 0; i < 10; i++) deep = [deep];
    const masked = redactValue({ d: deep }, { maxDepth: 5 });
    expect(JSON.stringify(masked.value)).toContain(TOO_DEEP_MARKER);
    expect(JSON.stringify(masked.value)).not.toContain('sergey');
    expect(masked.result.tooDeep).toBe(1);
    const warned = redactValue({ d: deep }, { maxDepth: 5, mode: 'warn' });
    expect(warned.value).toEqual({ d: deep });
  });

  test('a cyclic value terminates', () => {
    const a: Record<string, unknown> = { email: 'a@x.com' };
    a.self = a;
    const r = redactValue(a, { maxDepth: 8 });
    expect(r.result.hits.email).toBe(8);
  });

  test('a throwing getter fails closed in mask mode', () => {
    const evil = {
      get boom(): string {
        throw new Error('boom');
      },
    };
    expect(redactValue(evil).value).toBe('[masked:error]');
    expect(redactValue(evil, { mode: 'warn' }).value).toBe(evil);
  });
});

describe('input length cap', () => {
  test('mask: the string is cut, nothing past the scanned window leaves, a secret straddling the cap is masked whole', () => {
    const r = redactor({ maxLength: 100 });
    const input = 'x'.repeat(90) + ' sergey@acme.com ' + 'y'.repeat(500) + ' tail@secret.org';
    const { text, result } = r.text(input);
    expect(text.endsWith(TRUNCATED_MARKER)).toBe(true);
    expect(text).not.toContain('sergey');
    expect(text).not.toContain('tail');
    expect(text).toContain('s***@'); // the output is about maxLength long: only the mask itself may be cut
    expect(text.length).toBeLessThanOrEqual(100 + TRUNCATED_MARKER.length);
    expect(result.truncated).toBe(1);
    expect(result.hits.email).toBe(1);
  });

  test('mask: a secret cut by the scan window is dropped, not leaked', () => {
    const r = redactor({ maxLength: 100 });
    // The window is maxLength + REDACT_GUARD; place a token so the window cuts its value after 8 characters.
    const head = 'x '.repeat((100 + REDACT_GUARD - 'password='.length - 8) / 2);
    const input = head + 'password=ABCDEFGHIJKLMNOP and more';
    const { text } = r.text(input);
    expect(text).not.toContain('ABCD');
    expect(text.endsWith(TRUNCATED_MARKER)).toBe(true);
  });

  test('warn: over-long text is returned unchanged and only the window is counted', () => {
    const r = redactor({ maxLength: 50, mode: 'warn' });
    const input = 'a@x.com ' + 'z'.repeat(1000) + ' b@y.org';
    const { text, result } = r.text(input);
    expect(text).toBe(input);
    expect(result.hits.email).toBe(1);
    expect(result.truncated).toBe(1);
  });

  test('a surrogate pair is never split at the cut', () => {
    const r = redactor({ maxLength: 10 });
    const { text } = r.text('😀'.repeat(400));
    expect(text.endsWith(TRUNCATED_MARKER)).toBe(true);
    expect(text.slice(0, -TRUNCATED_MARKER.length)).toMatch(/^(?:\uD83D\uDE00)*$/);
  });
});

describe('options', () => {
  test.each([
    [{ mode: 'masc' }, 'unknown_mode', 'mode'],
    [{ rules: ['e-mail'] }, 'unknown_rule', 'rules'],
    [{ rules: 'email' }, 'bad_option', 'rules'],
    [{ maskEmailDomain: 'yes' }, 'bad_option', 'maskEmailDomain'],
    [{ maxLength: 0 }, 'bad_option', 'maxLength'],
    [{ maxDepth: 1.5 }, 'bad_option', 'maxDepth'],
  ])('%j → %s', (opts, reason, option) => {
    const c = compileRedactor(opts as RedactOptions);
    expect(c.ok).toBe(false);
    if (!c.ok) {
      expect(c.reason).toBe(reason);
      expect(c.option).toBe(option);
    }
  });

  test('rule names are trimmed and case-folded; an empty list means all; order is always fixed', () => {
    const c = compileRedactor({ rules: [' IP ', 'Email'] as never });
    expect(c.ok && c.redactor.rules).toEqual(['email', 'ip']);
    const all = compileRedactor({ rules: [] });
    expect(all.ok && all.redactor.rules).toEqual([...RULE_NAMES]);
  });

  test('parseRedactMode', () => {
    expect(parseRedactMode('  warn\t')).toBe('warn');
    expect(parseRedactMode('MASK')).toBe('mask');
    expect(parseRedactMode('redact')).toBe('mask');
    expect(parseRedactMode('off')).toBe('off');
    expect(parseRedactMode('')).toBeUndefined(); // an empty variable must not switch masking off
    expect(parseRedactMode('on')).toBeUndefined();
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Properties.

const alnum = fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789'.split(''));
const word = (min: number, max: number) => fc.string({ unit: alnum, minLength: min, maxLength: max });
const b64url = (min: number, max: number) =>
  fc.string({
    unit: fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-'.split('')),
    minLength: min,
    maxLength: max,
  });

function luhnComplete(body: number[]): string {
  // Append the check digit that makes body+check Luhn-valid.
  for (let d = 0; d < 10; d++) if (luhn(body.join('') + d)) return body.join('') + d;
  throw new Error('unreachable');
}

/** A secret and the substrings that must not survive masking. */
type Secret = { text: string; forbidden: string[] };

const secrets: fc.Arbitrary<Secret> = fc.oneof(
  fc.tuple(word(1, 20), word(1, 10), fc.constantFrom('com', 'org', 'io', 'co.uk')).map(([l, d, t]) => {
    const e = `${l}@${d}.${t}`;
    return { text: e, forbidden: [e] };
  }),
  fc
    .tuple(
      fc.constantFrom(
        'token',
        'api_key',
        'apiKey',
        'secret',
        'password',
        'Bearer',
        'private_token',
        'client_secret',
      ),
      fc.constantFrom('=', ': ', ' ', '":"'),
      word(12, 80),
    )
    .map(([k, sep, v]) => ({ text: `${k}${sep}${v}`, forbidden: [v] })),
  fc.tuple(b64url(5, 60), b64url(5, 200), b64url(1, 80)).map(([h, p, s]) => {
    const t = `eyJ${h}.${p}.${s}`;
    return { text: t, forbidden: [t, `${p}.${s}`] };
  }),
  fc
    .tuple(fc.constantFrom('RSA PRIVATE KEY', 'PRIVATE KEY', 'EC PRIVATE KEY'), b64url(10, 200))
    .map(([label, body]) => {
      const t = `-----BEGIN ${label}-----\n${body}\n-----END ${label}-----`;
      return { text: t, forbidden: [body] };
    }),
  fc
    .tuple(
      fc.integer({ min: 3, max: 6 }),
      fc.array(fc.integer({ min: 0, max: 9 }), { minLength: 14, maxLength: 14 }),
      fc.constantFrom('', ' ', '-'),
    )
    .map(([first, rest, sep]) => {
      const digits = luhnComplete([first, ...rest]);
      const grouped = sep ? (digits.match(/.{1,4}/g) ?? []).join(sep) : digits;
      return { text: grouped, forbidden: [grouped, digits] };
    }),
  fc
    .tuple(
      fc.integer({ min: 1, max: 99 }),
      fc.integer({ min: 100, max: 999 }),
      fc.integer({ min: 100, max: 999 }),
      fc.integer({ min: 1000, max: 9999 }),
    )
    .map(([c, a, b, d]) => {
      const t = `+${c} (${a}) ${b}-${d}`;
      return { text: t, forbidden: [t] };
    }),
  fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)).map(([a, b, c, d]) => {
    const t = `${a}.${b}.${c}.${d}`;
    return { text: t, forbidden: [t] };
  }),
  fc.array(fc.integer({ min: 0, max: 0xffff }), { minLength: 8, maxLength: 8 }).map((gs) => {
    const t = ['2001', ...gs.slice(1).map((g) => g.toString(16))].join(':');
    return { text: t, forbidden: [t] };
  }),
);

describe('properties', () => {
  test('masked output never contains the secret it masked (any surrounding text)', () => {
    const r = redactor();
    fc.assert(
      fc.property(fc.string(), secrets, fc.string(), (before, secret, after) => {
        // " | " keeps the surroundings from gluing onto the secret (no rule spans a '|').
        const input = `${before} | ${secret.text} | ${after}`;
        const out = r.text(input).text;
        for (const f of secret.forbidden) if (out.includes(f)) return false;
        return true;
      }),
      { numRuns: 1500 },
    );
  });

  test('several secrets in one text, through the value walk too', () => {
    const r = redactor();
    fc.assert(
      fc.property(
        fc.array(secrets, { minLength: 1, maxLength: 6 }),
        fc.array(fc.string({ maxLength: 20 }), { minLength: 7, maxLength: 7 }),
        (ss, fill) => {
          const text = ss.map((s, i) => `${fill[i]} | ${s.text} | `).join('') + fill[6];
          const out = r.value({ a: [text], b: { c: text } }).value;
          const json = JSON.stringify(out);
          return ss.every((s) => s.forbidden.every((f) => !json.includes(JSON.stringify(f).slice(1, -1))));
        },
      ),
      { numRuns: 300 },
    );
  });

  test('the redactor never throws and always returns a string (arbitrary strings, all modes)', () => {
    const rs = (['mask', 'warn', 'off'] as const).map((mode) => redactor({ mode, maxLength: 512 }));
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.string({ unit: 'binary' }),
          fc.string({ unit: fc.constantFrom(...'eyJ.-@:+8 0123456789abcdef[]BEGIN'.split('')) }),
        ),
        (s) => {
          for (const r of rs) {
            const out = r.text(s);
            if (typeof out.text !== 'string') return false;
          }
          return true;
        },
      ),
      { numRuns: 2000 },
    );
  });

  test('value walk never throws on arbitrary JSON-like values', () => {
    const r = redactor({ maxDepth: 16 });
    fc.assert(
      fc.property(
        fc.anything({
          withObjectString: true,
          withNullPrototype: true,
          withMap: true,
          withSet: true,
          withBigInt: true,
          withDate: true,
        }),
        (v) => {
          r.value(v);
          return true;
        },
      ),
      { numRuns: 500 },
    );
  });

  test('warn never changes the text; off never counts', () => {
    const warn = redactor({ mode: 'warn' });
    const off = redactor({ mode: 'off' });
    fc.assert(
      fc.property(fc.string(), secrets, (s, secret) => {
        const input = `${s} | ${secret.text}`;
        return (
          warn.text(input).text === input &&
          off.text(input).result.total === 0 &&
          warn.text(input).result.total >= 1
        );
      }),
      { numRuns: 500 },
    );
  });

  test('masking is stable: masking a masked text finds nothing new', () => {
    const r = redactor();
    fc.assert(
      fc.property(fc.string(), secrets, fc.string(), (a, secret, b) => {
        const once = r.text(`${a} | ${secret.text} | ${b}`).text;
        return r.text(once).text === once;
      }),
      { numRuns: 500 },
    );
  });
});
