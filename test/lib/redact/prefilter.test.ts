import fc from 'fast-check';
import { type RedactOptions, type Redactor, type RuleName, compileRedactor } from '../../../lib/redact';
import { createRedactor } from '../../../lib/redact/engine';
import { candidateRules } from '../../../lib/redact/prefilter';
import { PASSES } from '../../../lib/redact/rules';
import { luhn } from '../../../lib/redact/rules/card';
import { PASS_BITS } from '../../../lib/redact/rules/rule';
import {
  DEFAULT_REDACT_MAX_DEPTH,
  DEFAULT_REDACT_MAX_LENGTH,
  RULE_NAMES,
  maskMarker,
  newTally,
  redactResultOf,
} from '../../../lib/redact/types';
import { maskOutbound } from '../../../middleware/redact/walk';

// The prefilter (one pass per string that skips the rules that cannot match) must never change a result: the
// engine with it and a reference engine that runs every pass on every string must agree on every string.

/** Every pass, whatever the string: the reference the prefilter is checked against. */
const EVERY_PASS = Object.values(PASS_BITS).reduce((a, b) => a | b, 0);

/** The passes the prefilter lets run on `s`, by name (`ip` is split into `ipv6` and `ipv4`). */
function candidates(s: string): string[] {
  const flags = candidateRules(s);
  return PASSES.filter((p) => (flags & PASS_BITS[p.pass]) !== 0).map((p) => p.pass);
}

function pair(o: RedactOptions = {}): [withPrefilter: Redactor, everyPass: Redactor] {
  const a = compileRedactor(o);
  if (!a.ok) throw new Error('bad options');
  const b = createRedactor({
    mode: a.redactor.mode,
    rules: a.redactor.rules,
    maskEmailDomain: o.maskEmailDomain ?? false,
    maxLength: o.maxLength ?? DEFAULT_REDACT_MAX_LENGTH,
    maxDepth: o.maxDepth ?? DEFAULT_REDACT_MAX_DEPTH,
    candidates: () => EVERY_PASS,
  });
  return [a.redactor, b];
}

const JWT = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk';
const PEM = '-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----';

// ---------------------------------------------------------------------------------------------------------------
// Generators: every rule's positives, pieces of them, near misses, and text around them.

const pick = (chars: string) => fc.constantFrom(...chars.split(''));
const str = (unit: fc.Arbitrary<string>, min: number, max: number) =>
  fc.string({ unit, minLength: min, maxLength: max });
const alnum = pick('abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789');
const b64url = (min: number, max: number) =>
  str(pick('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-'), min, max);
const digits = (min: number, max: number) => str(pick('0123456789'), min, max);
const hex = (min: number, max: number) => str(pick('0123456789abcdefABCDEF'), min, max);

function luhnComplete(body: string): string {
  for (let d = 0; d < 10; d++) if (luhn(body + d)) return body + d;
  throw new Error('unreachable');
}

const email = fc
  .tuple(
    str(pick('abcdefghijklmnopqrstuvwxyz0123456789._+-'), 1, 70),
    str(pick('abcdefghijklmnopqrstuvwxyz0123456789-'), 1, 12),
    fc.constantFrom('com', 'org', 'io', 'co.uk', 'x', 'a-b.c'),
  )
  .map(([l, d, t]) => `${l}@${d}.${t}`);

const token = fc
  .tuple(
    fc.constantFrom(
      'token',
      'TOKEN',
      'api_key',
      'apiKey',
      'api-key',
      'access_key',
      'PrivateKey',
      'secret',
      'client_secret',
      'password',
      'passwd',
      'Bearer',
      'bearer',
      'credential',
      'credentials',
      'private_token',
      'x-api-key',
      'mytoken',
    ),
    fc.constantFrom('=', ': ', ' ', '":"', "='", '\t', '\u00a0', '\u2028', ':=', '  =  ', '=========', ''),
    fc.oneof(fc.constant(12), fc.constant(11), fc.integer({ min: 8, max: 40 })), // 12: the shortest value
    fc.constantFrom('', ' ', '"', ']'),
  )
  .chain(([k, sep, n, end]) =>
    str(pick('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._~+/=-'), n, n).map(
      (v) => `${k}${sep}${v}${end}`,
    ),
  );

const jwt = fc
  .tuple(b64url(3, 40), b64url(3, 60), b64url(0, 40), fc.boolean())
  .map(([h, p, s, eyj]) => `eyJ${h}.${eyj ? 'eyJ' : ''}${p}${s ? '.' + s : ''}`);

const pem = fc
  .tuple(
    fc.constantFrom('RSA PRIVATE KEY', 'PRIVATE KEY', 'CERTIFICATE', 'X', 'lower', ''),
    b64url(0, 60),
    fc.boolean(),
  )
  .map(([label, body, end]) => `-----BEGIN ${label}-----\n${body}\n${end ? `-----END ${label}-----` : ''}`);

const card = fc
  .tuple(digits(12, 18), fc.constantFrom('', ' ', '-', '  ', '.'), fc.integer({ min: 2, max: 6 }))
  .map(([body, sep, g]) => {
    const d = luhnComplete(body);
    return sep ? (d.match(new RegExp(`.{1,${g}}`, 'g')) ?? []).join(sep) : d;
  });

const phone = fc.oneof(
  fc
    .tuple(
      digits(1, 3),
      digits(3, 3),
      digits(3, 3),
      digits(2, 4),
      fc.constantFrom(' ', '-', '.', '', '\u00a0'),
    )
    .map(([c, a, b, d, s]) => `+${c} (${a})${s}${b}-${d}`),
  fc
    .tuple(digits(3, 3), digits(3, 3), digits(2, 2), digits(2, 2), fc.constantFrom(' ', '-', ''))
    .map(([a, b, c, d, s]) => `8${s}${a}${s}${b}-${c}-${d}`),
  digits(8, 16).map((d) => `+${d}`),
);

const ipv4 = fc.tuple(fc.nat(300), fc.nat(255), fc.nat(255), fc.nat(300)).map((parts) => parts.join('.'));

const ipv6 = fc.oneof(
  fc.array(hex(1, 4), { minLength: 8, maxLength: 8 }).map((gs) => gs.join(':')),
  fc
    .tuple(fc.array(hex(1, 4), { maxLength: 4 }), fc.array(hex(1, 4), { maxLength: 4 }))
    .map(([a, b]) => `${a.join(':')}::${b.join(':')}`),
  ipv4.map((v4) => `::ffff:${v4}`),
  fc.tuple(hex(1, 4), ipv4).map(([h, v4]) => `${h}::${v4}`), // two colons only: the shortest maskable form
  fc.constantFrom('::1', 'fe80::1', 'a[1::2]', 'dead::beef', '12:30:45', '2001:db8::1.'),
);

/** Every rule's positives. */
const positive = fc.oneof(email, token, jwt, pem, card, phone, ipv4, ipv6);

/** Pieces of positives: a secret cut anywhere is where a prefilter is most likely to be wrong. */
const piece = fc
  .tuple(positive, fc.nat(), fc.nat())
  .map(([s, a, b]) => s.slice(Math.min(a, b) % (s.length + 1), Math.max(a, b) % (s.length + 1)));

/** Near misses and anchors alone, markers, and characters the rules care about. */
const anchor = fc.constantFrom(
  'eyJ',
  '_eyJ',
  '-----BEGIN ',
  '-----END ',
  '-----',
  '@',
  '.',
  ':',
  '::',
  '+',
  '8 ',
  '(',
  ')',
  ' ',
  '-',
  '=',
  '"',
  "'",
  '\t',
  '\n',
  '\u00a0',
  '\u2028',
  '\u3000',
  '\ufeff',
  '\u212a', // KELVIN SIGN: folds to `k` under the `u` flag only
  '\u017f', // LATIN SMALL LETTER LONG S: folds to `s` under the `u` flag only
  'é',
  '😀',
  'key',
  'Token',
  'SECRET',
  'password',
  'bearer',
  'credentials',
  maskMarker('token'),
  maskMarker('jwt'),
  '***',
  '4242',
  '1757635200000',
  '192.168.',
  '[',
  ']',
);

const filler = fc.oneof(
  { weight: 3, arbitrary: str(alnum, 0, 12) },
  { weight: 2, arbitrary: fc.string({ maxLength: 12 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 8 }) },
  { weight: 2, arbitrary: str(pick('eyJ.-@:+8 0123456789abcdef[]BEGINkey=_"\'\t\u00a0'), 0, 24) },
);

/** A text glued together from all of the above, with no separator between the parts. */
const mixed = fc
  .array(fc.oneof({ weight: 3, arbitrary: positive }, piece, anchor, filler), { minLength: 1, maxLength: 12 })
  .map((parts) => parts.join(''));

// ---------------------------------------------------------------------------------------------------------------

describe('prefilter: the engine gives the same answer as when every pass runs', () => {
  const configs: [string, RedactOptions][] = [
    ['mask', {}],
    ['warn', { mode: 'warn' }],
    ['mask, maskEmailDomain', { maskEmailDomain: true }],
    ['mask, some rules', { rules: ['email', 'card', 'ip'] }],
    ['mask, other rules', { rules: ['pem', 'token', 'phone'] }],
    ['mask, short maxLength (cut strings)', { maxLength: 40 }],
    ['warn, short maxLength', { mode: 'warn', maxLength: 40 }],
  ];

  test.each(configs)('%s: identical text and result on generated strings', (_name, options) => {
    const [a, b] = pair(options);
    fc.assert(
      fc.property(mixed, (s) => {
        const x = a.text(s);
        const y = b.text(s);
        expect(x.text).toBe(y.text);
        expect(x.result).toEqual(y.result);
      }),
      { numRuns: 1500 },
    );
  });

  test('identical on arbitrary strings too', () => {
    const [a, b] = pair();
    fc.assert(
      fc.property(
        fc.oneof(fc.string({ maxLength: 200 }), fc.string({ unit: 'binary', maxLength: 200 })),
        (s) => {
          const x = a.text(s);
          const y = b.text(s);
          expect(x.text).toBe(y.text);
          expect(x.result).toEqual(y.result);
        },
      ),
      { numRuns: 1000 },
    );
  });

  test('identical through the value walk', () => {
    const [a, b] = pair();
    fc.assert(
      fc.property(fc.array(mixed, { maxLength: 5 }), mixed, (list, s) => {
        const v = { list, nested: { s, n: 1 } };
        const x = a.value(v);
        const y = b.value(v);
        expect(x.value).toEqual(y.value);
        expect(x.result).toEqual(y.result);
      }),
      { numRuns: 500 },
    );
  });

  test('every rule still fires on its reference vectors', () => {
    const [a] = pair();
    const vectors: [string, RuleName][] = [
      ['write to sergey@acme.com now', 'email'],
      ['?private_token=glpat-abcdefghijkl', 'token'],
      ['{"apiKey":"abcdefghijklmn"}', 'token'],
      ['token: abcdefghijklmn', 'token'],
      [`x ${JWT}`, 'jwt'],
      [PEM, 'pem'],
      ['pay with 4242 4242 4242 4242 today', 'card'],
      ['call +1 (415) 555-0132', 'phone'],
      ['call 8 916 123-45-67 now', 'phone'],
      ['from 192.168.1.10 at', 'ip'],
      ['at 2001:db8:0:0:0:0:0:1 now', 'ip'],
    ];
    for (const [s, rule] of vectors) expect(a.text(s).result.fired).toContain(rule);
  });
});

describe('prefilter: what it lets through', () => {
  test('clean text has no candidate rule', () => {
    for (const s of [
      '',
      'hello',
      'hello from the bench',
      'The deployment finished in 42 seconds. Next maintenance window: Tuesday 02:00 UTC.',
      'Rotate the key monthly; 3 of 4 replicas (75%) passed on 2024-05-01.',
      'version 1.2.3, build 4567, see https://example.com/docs#section',
      'token', // a keyword alone, no value
      'an extraordinarily long word: internationalization',
    ])
      expect(candidates(s)).toEqual([]);
  });

  test('each rule is a candidate on its positives', () => {
    const cases: [string, string][] = [
      ['a@b.co', 'email'],
      ['password: abcdefghijklmn', 'token'],
      ['Bearer\u00a0abcdefghijklmn', 'token'],
      ['X-API-KEY="abcdefghijklmn"', 'token'],
      [JWT, 'jwt'],
      ['(eyJ', 'jwt'],
      [PEM, 'pem'],
      ['4242424242424242', 'card'],
      ['4242-4242-4242-4242', 'card'],
      ['+7 916 123-45-67', 'phone'],
      ['8 (916) 123 45 67', 'phone'],
      ['10.1.2.3', 'ipv4'],
      ['fe80::1:2', 'ipv6'],
      ['::ffff:1.2.3.4', 'ipv6'],
    ];
    for (const [s, rule] of cases)
      expect({ s, c: candidates(s) }).toEqual({ s, c: expect.arrayContaining([rule]) });
  });

  test('near misses are not candidates', () => {
    expect(candidates('xeyJhbGciOiJIUzI1NiJ9')).not.toContain('jwt'); // glued to a word
    expect(candidates('@home, me@')).not.toContain('email');
    expect(candidates('my token]abcdefghijklmnop')).not.toContain('token'); // no separator after the keyword
    expect(candidates('tokens: abcdefghijklmnop')).not.toContain('token');
    expect(candidates('4242 4242  4242 4242')).not.toContain('card'); // a double space splits the run
    expect(candidates('12:30:45')).toEqual(['ipv6']); // a time passes (the scanner refuses it), a date does not
    expect(candidates('2024-05-01T12:30Z')).toEqual([]);
  });

  test('separators agree with the patterns for every UTF-16 code unit', () => {
    // The token pattern's ["'\s:=] after a keyword, and the phone pattern's [\d\s().-] between digits.
    const tokenSep = /["'\s:=]/;
    const phoneChar = /[\d\s().-]/;
    const wrong: string[] = [];
    for (let c = 0; c <= 0xffff; c++) {
      const ch = String.fromCharCode(c);
      if (candidates(`password${ch}abcdefghijklmn`).includes('token') !== tokenSep.test(ch))
        wrong.push(`token U+${c.toString(16)}`);
      if (candidates(`+1234${ch}56789`).includes('phone') !== phoneChar.test(ch))
        wrong.push(`phone U+${c.toString(16)}`);
    }
    expect(wrong).toEqual([]);
  });

  test('markers add no candidate for a later rule (what asking the prefilter once relies on)', () => {
    // Replacing any span of any text by a marker (or by `***`, as an e-mail's local part is) can only remove
    // candidates, except jwt, which always runs first on the original text.
    const replacement = fc.constantFrom(...[...RULE_NAMES, 'error'].map((r) => maskMarker(r)), '***');
    fc.assert(
      fc.property(mixed, fc.nat(), fc.nat(), replacement, (s, a, b, m) => {
        const i = Math.min(a, b) % (s.length + 1);
        const j = Math.max(a, b) % (s.length + 1);
        const before = new Set(candidates(s));
        const after = candidates(s.slice(0, i) + m + s.slice(j)).filter((c) => c !== 'jwt');
        expect(after.filter((c) => !before.has(c))).toEqual([]);
      }),
      { numRuns: 3000 },
    );
  });
});

describe('prefilter: clean strings and the result-less entry points', () => {
  test('a clean string runs no regular expression and comes back as is', () => {
    const [a] = pair();
    // Digits, a colon, `key`: every old gate but jwt/pem/email passed on this and ran its pattern.
    const s = 'Rotate the key monthly; 3 of 4 replicas (75%) passed on 2024-05-01 at 12:30, build 4567.';
    const exec = jest.spyOn(RegExp.prototype, 'exec');
    const test_ = jest.spyOn(RegExp.prototype, 'test');
    try {
      const t = newTally();
      expect(a.scanText!(s, t)).toBe(s);
      expect(a.text('hello').text).toBe('hello');
      expect(exec).not.toHaveBeenCalled();
      expect(test_).not.toHaveBeenCalled();
      expect(t.hits).toEqual(newTally().hits);
    } finally {
      exec.mockRestore();
      test_.mockRestore();
    }
  });

  test('scanText and scanValue agree with text and value', () => {
    const [a] = pair();
    fc.assert(
      fc.property(mixed, (s) => {
        const t = newTally();
        const ref = a.text(s);
        expect(a.scanText!(s, t)).toBe(ref.text);
        expect(redactResultOf(t)).toEqual(ref.result);
        const v = { s: [s] };
        const t2 = newTally();
        const refV = a.value(v);
        expect(a.scanValue!(v, t2)).toEqual(refV.value);
        expect(redactResultOf(t2)).toEqual(refV.result);
      }),
      { numRuns: 300 },
    );
  });
});

describe('maskOutbound: the walk over a result', () => {
  const [real] = pair();
  /** The real redactor, counting which entry points the walk uses. */
  function spyRedactor() {
    const calls = { text: 0, value: 0, scanText: 0, scanValue: 0 };
    const r: Redactor = {
      mode: real.mode,
      rules: real.rules,
      text: (s, t) => (calls.text++, real.text(s, t)),
      value: (v, t) => (calls.value++, real.value(v, t)),
      scanText: (s, t) => (calls.scanText++, real.scanText!(s, t)),
      scanValue: (v, t) => (calls.scanValue++, real.scanValue!(v, t)),
    };
    return { r, calls };
  }
  const info = { method: 'tools/call', kind: 'result' as const };

  test('a clean result comes back as the same object, and no per-string result objects are built', () => {
    const { r, calls } = spyRedactor();
    const v = {
      content: [
        { type: 'text', text: 'hello' },
        { type: 'resource', resource: { uri: 'file:///a', text: 'plain words' } },
      ],
      structuredContent: { status: 'ok', n: 42, list: ['api', 'worker'] },
    };
    expect(maskOutbound(v, info, r, newTally())).toBe(v);
    expect(calls).toEqual({ text: 0, value: 0, scanText: 2, scanValue: 1 });

    const read = {
      contents: [
        { uri: 'file:///n', text: 'notes' },
        { uri: 'file:///b', blob: 'AAAA' },
      ],
    };
    expect(maskOutbound(read, { method: 'resources/read', kind: 'result' }, r, newTally())).toBe(read);
    const prompt = {
      messages: [
        { role: 'user', content: { type: 'text', text: 'hi' } },
        { role: 'user', content: [{ type: 'text', text: 'there' }] },
      ],
    };
    expect(maskOutbound(prompt, { method: 'prompts/get', kind: 'result' }, r, newTally())).toBe(prompt);
    const note = { method: 'notifications/message', params: { level: 'info', data: { msg: 'ok' } } };
    expect(maskOutbound(note, { method: 'notifications/message', kind: 'notification' }, r, newTally())).toBe(
      note,
    );
    expect(calls.text + calls.value).toBe(0);
  });

  test('a hand-written redactor without the result-less entry points still works', () => {
    const r: Redactor = { mode: real.mode, rules: real.rules, text: real.text, value: real.value };
    const v = { content: [{ type: 'text', text: 'mail a@b.co' }], structuredContent: { e: 'c@d.io' } };
    const t = newTally();
    expect(maskOutbound(v, info, r, t)).toEqual({
      content: [{ type: 'text', text: 'mail a***@b.co' }],
      structuredContent: { e: 'c***@d.io' },
    });
    expect(t.hits.email).toBe(2);
    const clean = { content: [{ type: 'text', text: 'hello' }] };
    expect(maskOutbound(clean, info, r, newTally())).toBe(clean);
  });

  test('a dirty result is copied only along the changed path', () => {
    const { r } = spyRedactor();
    const clean = { type: 'text', text: 'hello' };
    const sc = { a: { b: 'ok' }, c: ['x'] };
    const v = {
      content: [clean, { type: 'text', text: 'mail a@b.co' }],
      structuredContent: sc,
      isError: false,
    };
    const t = newTally();
    const out = maskOutbound(v, info, r, t) as typeof v;
    expect(out).not.toBe(v);
    expect(out.content[0]).toBe(clean);
    expect(out.content[1]!.text).toBe('mail a***@b.co');
    expect(out.structuredContent).toBe(sc);
    expect(v.content[1]!.text).toBe('mail a@b.co'); // the input is never mutated
    expect(t.hits.email).toBe(1);
  });
});
