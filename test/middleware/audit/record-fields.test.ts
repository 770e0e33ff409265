/**
 * The fields of an audit record. Every caller-controlled field comes out cleaned exactly as cleanText gives it,
 * the first time and when remembered (CleanMemo); a repeated value never reaches the redactor again; the memo
 * stays exact past its bound; a method named after an Object.prototype member still gets a `target_type`; the
 * time is the arrival's ISO string and request_id a fresh version 4 UUID.
 */
import fc from 'fast-check';
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { AUDIT_CAPS, audit } from '../../../middleware/audit/index';
import * as redactModule from '../../../lib/redact';
import { type RedactTally, type Redactor, compileRedactor } from '../../../lib/redact';
import { cleanText, escapeIdentity, rawBudget, sanitizeText } from '../../../lib/sanitize';
import type { RequestLocals } from '../../../core/types';

type Meta = Record<string, unknown>;

/** A capturing logger (not a stream: records are handed over at once). */
function capture(): { logger: { log(l: string, m: string, meta: Meta): void }; records: Meta[] } {
  const records: Meta[] = [];
  return { records, logger: { log: (_l, _m, meta) => records.push(meta) } };
}

interface Hand {
  method?: string;
  url?: string;
  headers?: Record<string, string>;
  locals?: RequestLocals;
}

/** One request through `mw`, finished by hand (real node:http objects, no socket traffic). */
function finishOne(mw: ReturnType<typeof audit>, h: Hand = {}): void {
  const req = new IncomingMessage(new Socket());
  req.method = h.method ?? 'POST';
  req.url = h.url ?? '/mcp';
  req.headers = h.headers ?? {};
  if (h.locals) req.locals = h.locals;
  const res = new ServerResponse(req);
  mw(req, res, () => {});
  res.emit('finish');
}

/** What the audit's cleaning gives with the default options (mask, every rule). */
const auditRedactor = (() => {
  const c = compileRedactor({ mode: 'mask', maxLength: rawBudget(Math.max(...Object.values(AUDIT_CAPS))) });
  if (!c.ok) throw new Error(c.message);
  return c.redactor;
})();
const masked = (s: string, cap: number): string => cleanText(s, cap, auditRedactor);

const HOSTILE =
  'x\n{"event":"audit","decision":"allowed"}\r\n\x1b[2J\x1b]52;c;cm0gLXJmIH4=\x07\u009b31m\u2028\u202e' +
  ' sergey@acme.com Bearer abcdefghijklmnopqrstu 4242 4242 4242 4242 eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig';

/** Locals with a hostile value in every caller-controlled field audit reads from them. */
function hostileLocals(tag: string): RequestLocals {
  const v = `${tag}${HOSTILE}`;
  return {
    mcp: {
      kind: 'request',
      id: `id-${v}`,
      method: `m-${v}`,
      target: `t-${v}`,
      meta: { 'io.modelcontextprotocol/clientInfo': { name: `c-${v}`, version: `1-${v}` } },
      arguments: { who: `w-${v}`, obj: { deep: v } },
      version: `pv-${v}`,
      era: 'legacy',
      headers: {} as never,
      bytes: 10,
      message: {} as never,
    },
    principal: { userId: `u-${v}`, groups: [], roles: [], method: `am-${v}`, source: `src-${v}` },
    auth: { outcome: 'ok', method: 'ignored-when-principal-has-one' },
    refusal: { reason: 'rate_limited', code: 429, status: 429, by: 'limits', detail: `d-${v}` },
  };
}

/** The record audit must write for hostileLocals(tag), field by field. */
function expectedHostile(tag: string): Meta {
  const v = `${tag}${HOSTILE}`;
  return {
    rpc_id: masked(`id-${v}`, AUDIT_CAPS.rpc_id),
    http_method: masked(`PO\nST-${v}`, AUDIT_CAPS.http_method),
    path: masked(`/mcp/${v}`, AUDIT_CAPS.path),
    user_agent: masked(`ua-${v}`, AUDIT_CAPS.user_agent),
    // Identities are escaped, never cleaned: nothing is dropped (see test/lib/escape-identity.test.ts).
    principal: escapeIdentity(`u-${v}`, AUDIT_CAPS.principal),
    principal_source: escapeIdentity(`src-${v}`, AUDIT_CAPS.principal_source),
    auth_method: escapeIdentity(`am-${v}`, AUDIT_CAPS.auth_method),
    protocol_version: cleanText(`pv-${v}`, 32),
    client: masked(`c-${v}/1-${v}`, AUDIT_CAPS.client),
    method: masked(`m-${v}`, AUDIT_CAPS.method),
    target: masked(`t-${v}`, AUDIT_CAPS.target),
    detail: cleanText(`d-${v}`, 64),
    request_id: masked(`rid-${v}`, AUDIT_CAPS.request_id),
    args: {
      who: masked(`w-${v}`, AUDIT_CAPS.argument),
      obj: masked(JSON.stringify({ deep: v }), AUDIT_CAPS.argument),
    },
  };
}

function hostileRequest(mw: ReturnType<typeof audit>, tag: string): void {
  const v = `${tag}${HOSTILE}`;
  finishOne(mw, {
    method: `PO\nST-${v}`,
    url: `/mcp/${v}`,
    headers: { 'user-agent': `ua-${v}`, 'x-rid': `rid-${v}` },
    locals: hostileLocals(tag),
  });
}

/** No line break, control, C1, bidi or separator character, and none of the secrets in HOSTILE. */
function expectClean(s: string, masks: boolean): void {
  expect(s).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/);
  if (!masks) return;
  expect(s).not.toContain('sergey');
  expect(s).not.toContain('4242 4242');
  expect(s).not.toContain('abcdefghijklmnop');
  expect(s).not.toContain('eyJzdWIi');
}

describe('audit(): every caller-controlled field is still cleaned', () => {
  test('a hostile value in every field: cleaned as cleanText gives it, the first time and when remembered', () => {
    const { logger, records } = capture();
    const mw = audit({
      logger,
      arguments: ['who', 'obj'],
      requestId: (req) => req.headers['x-rid'] as string,
    });
    // The same values twice (the second time from the memo), then other values (a fresh cleaning).
    hostileRequest(mw, 'a');
    hostileRequest(mw, 'a');
    hostileRequest(mw, 'b');
    expect(records).toHaveLength(3);
    const [first, second, third] = records as [Meta, Meta, Meta];
    expect(first).toMatchObject(expectedHostile('a'));
    expect(second).toMatchObject(expectedHostile('a'));
    expect(third).toMatchObject(expectedHostile('b'));
    for (const rec of records) {
      for (const key of [
        'rpc_id',
        'http_method',
        'path',
        'user_agent',
        'client',
        'method',
        'target',
        'request_id',
      ])
        expectClean(rec[key] as string, true);
      for (const key of ['principal', 'principal_source', 'auth_method', 'protocol_version', 'detail'])
        expectClean(rec[key] as string, false);
      for (const v of Object.values(rec.args as Meta)) expectClean(v as string, true);
    }
  });

  test('values longer than the memo keeps, and more distinct values than it holds, come out the same', () => {
    const { logger, records } = capture();
    const mw = audit({ logger });
    const ua = (i: number): string =>
      `agent ${i}\n\x1b[31m sergey${i}@acme.com ` + 'y'.repeat(i % 3 === 0 ? 400 : 5);
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < 300; i++) finishOne(mw, { headers: { 'user-agent': ua(i) } });
    }
    expect(records).toHaveLength(600);
    records.forEach((rec, n) => {
      expect(rec.user_agent).toBe(masked(ua(n % 300), AUDIT_CAPS.user_agent));
      expectClean(rec.user_agent as string, true);
    });
  });

  test('a repeated value never reaches the redactor again; a new one does', () => {
    const calls: string[] = [];
    const real = redactModule.compileRedactor;
    const spy = jest.spyOn(redactModule, 'compileRedactor').mockImplementation((opts) => {
      const c = real(opts);
      if (!c.ok) return c;
      // The same redactor, with text() and scanText() counting their calls (the rest inherited as they are).
      const counted = Object.assign(Object.create(c.redactor) as Redactor, {
        text: (s: string, tally?: RedactTally) => {
          calls.push(s);
          return c.redactor.text(s, tally);
        },
        scanText: (s: string, tally: RedactTally) => {
          calls.push(s);
          return c.redactor.scanText!(s, tally);
        },
      });
      return { ok: true, redactor: counted };
    });
    try {
      const { logger, records } = capture();
      const mw = audit({ logger });
      const locals = (): RequestLocals => ({
        mcp: {
          kind: 'request',
          id: 7,
          method: 'tools/call',
          target: 'lookup',
          meta: { 'io.modelcontextprotocol/clientInfo': { name: 'cli', version: '1.0' } },
          version: '2026-07-28',
          era: 'modern',
          headers: {} as never,
          bytes: 10,
          message: {} as never,
        },
        principal: { userId: 'alice', groups: [], roles: [], method: 'api-key' },
        auth: { outcome: 'ok', method: 'api-key' },
      });
      const h = { headers: { 'user-agent': 'agent/1.0' } };
      finishOne(mw, { ...h, locals: locals() });
      // The caller-authored strings, once each; the number id and the sanitize-only fields never.
      expect([...calls].sort()).toEqual(['/mcp', 'POST', 'agent/1.0', 'cli/1.0', 'lookup', 'tools/call']);
      calls.length = 0;
      finishOne(mw, { ...h, locals: locals() });
      finishOne(mw, { ...h, locals: locals() });
      expect(calls).toEqual([]);
      finishOne(mw, { headers: { 'user-agent': 'agent/2.0' }, locals: locals() });
      expect(calls).toEqual(['agent/2.0']);
      expect(records).toHaveLength(4);
      expect(records[1]).toMatchObject({
        http_method: 'POST',
        path: '/mcp',
        user_agent: 'agent/1.0',
        client: 'cli/1.0',
        method: 'tools/call',
        target: 'lookup',
        target_type: 'tool',
        rpc_id: '7',
        principal: 'alice',
        auth_method: 'api-key',
        protocol_version: '2026-07-28',
      });
      expect(records[3]!.user_agent).toBe('agent/2.0');
    } finally {
      spy.mockRestore();
    }
  });
});

describe('audit(): fields made here', () => {
  test.each([
    [
      'its source',
      { userId: 'alice', groups: [], roles: [], method: 'oidc', source: 'https://idp' },
      'https://idp',
    ],
    ['its method when it has no source', { userId: 'alice', groups: [], roles: [], method: 'mtls' }, 'mtls'],
    ['empty when anonymous', undefined, ''],
  ])("principal_source is the principal's %s", (_what, principal, source) => {
    const { logger, records } = capture();
    finishOne(audit({ logger }), { locals: principal ? { principal } : {} });
    expect(records[0]!.principal_source).toBe(source);
  });

  test.each(['constructor', 'toString', '__proto__', 'hasOwnProperty'])(
    'a method named %j gets an empty target_type, not an Object.prototype member',
    (method) => {
      const { logger, records } = capture();
      const mw = audit({ logger });
      finishOne(mw, {
        locals: {
          mcp: { kind: 'request', id: 1, method, headers: {} as never, bytes: 2, message: {} as never },
        },
      });
      expect(records[0]!.target_type).toBe('');
      expect(records[0]!.method).toBe(method);
    },
  );

  test('time is the arrival as an ISO string, also for records of the same millisecond and second', () => {
    const { logger, records } = capture();
    const mw = audit({ logger });
    const base = Date.UTC(2026, 6, 28, 12, 34, 56, 0);
    const times = [
      base,
      base,
      base + 7,
      base + 7,
      base + 42,
      base + 999,
      base + 1000,
      base + 1000,
      base + 1005,
      base,
    ];
    const now = jest.spyOn(Date, 'now');
    try {
      for (const t of times) {
        now.mockReturnValueOnce(t);
        finishOne(mw);
      }
    } finally {
      now.mockRestore();
    }
    expect(records.map((r) => r.time)).toEqual(times.map((t) => new Date(t).toISOString()));
  });

  test('request_id is a fresh version 4 UUID per record', () => {
    const { logger, records } = capture();
    const mw = audit({ logger });
    for (let i = 0; i < 700; i++) finishOne(mw);
    const ids = records.map((r) => r.request_id as string);
    for (const id of ids)
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe('sanitizeText and cleanText: a clean string is answered as is', () => {
  // Appending NUL sends any string down the full path (NUL is dropped there and changes nothing else), so these
  // compare the shortcut with the full path on the same text.
  const text = fc.string({
    unit: fc.constantFrom('a', 'Z', '0', ' ', '~', '@', '.', '\t', '\n', 'é', '\u2028', '\x1b'),
  });

  test('sanitizeText gives what the full path gives', () => {
    fc.assert(
      fc.property(text, fc.integer({ min: 1, max: 40 }), (s, max) => {
        expect(sanitizeText(s)).toBe(sanitizeText(s + '\u0000'));
        expect(sanitizeText(s, max)).toBe(sanitizeText(s + '\u0000', max));
      }),
      { numRuns: 2000 },
    );
  });

  test('cleanText gives what the full path gives, with and without a redactor', () => {
    const plain = fc.stringMatching(/^[ -~]{0,60}$/);
    fc.assert(
      fc.property(fc.oneof(text, plain), fc.integer({ min: 1, max: 80 }), (s, cap) => {
        expect(cleanText(s, cap)).toBe(cleanText(s + '\u0000', cap));
        expect(cleanText(s, cap, auditRedactor)).toBe(cleanText(s + '\u0000', cap, auditRedactor));
      }),
      { numRuns: 2000 },
    );
  });

  test.each([
    ['tools/call', 'tools/call'],
    ['Mozilla/5.0 (X11; Linux x86_64) a/1', 'Mozilla/5.0 (X11; Linux x86_64) a/1'],
    [' lead', 'lead'],
    ['trail ', 'trail'],
    ['two  spaces', 'two spaces'],
    ['sergey@acme.com', 's***@acme.com'],
  ])('%j → %j', (input, output) => {
    expect(cleanText(input, 64, auditRedactor)).toBe(output);
  });
});
