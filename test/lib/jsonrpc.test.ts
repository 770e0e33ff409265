import fc from 'fast-check';
import { isBatchBytes, isBatchText, parseMessage, parseValue } from '../../lib/jsonrpc';
import { errorResponse } from '../../lib/errors';

const ok = (text: string) => {
  const r = parseMessage(text);
  if (!r.ok) throw new Error(`expected ok, got ${r.reason}: ${r.message}`);
  return r;
};
const bad = (text: string) => {
  const r = parseMessage(text);
  if (r.ok) throw new Error('expected a refusal');
  return r;
};

describe('parseMessage: classification', () => {
  test.each([
    ['{"jsonrpc":"2.0","id":1,"method":"tools/list"}', 'request', 1],
    ['{"jsonrpc":"2.0","id":0,"method":"tools/list"}', 'request', 0],
    ['{"jsonrpc":"2.0","id":"","method":"tools/list"}', 'request', ''],
    ['{"jsonrpc":"2.0","id":"abc","method":"ping","params":{}}', 'request', 'abc'],
    ['{"jsonrpc":"2.0","id":-7,"method":"ping"}', 'request', -7],
    ['{"jsonrpc":"2.0","id":1e3,"method":"ping"}', 'request', 1000],
    ['{"jsonrpc":"2.0","method":"notifications/initialized"}', 'notification', undefined],
    ['{"jsonrpc":"2.0","id":2,"method":"initialize","params":null}', 'request', 2],
    ['{"jsonrpc":"2.0","id":3,"result":{}}', 'response', 3],
    ['{"jsonrpc":"2.0","id":4,"error":{"code":-32601,"message":"x"}}', 'error', 4],
    ['{"jsonrpc":"2.0","error":{"code":-32700,"message":"x","data":1}}', 'error', undefined],
    ['\uFEFF{"jsonrpc":"2.0","id":1,"method":"ping"}', 'request', 1],
    // The empty method is a method like any other string: the dispatcher answers it -32601.
    ['{"jsonrpc":"2.0","id":1,"method":""}', 'request', 1],
  ])('%s → %s', (text, kind, id) => {
    const r = ok(text);
    expect(r.kind).toBe(kind);
    expect((r as { id?: unknown }).id).toBe(id);
  });

  test('id 0 survives into error responses', () => {
    const r = ok('{"jsonrpc":"2.0","id":0,"method":"x"}');
    expect(errorResponse((r as { id: unknown }).id, { code: -32601, message: 'm' })).toEqual({
      jsonrpc: '2.0',
      id: 0,
      error: { code: -32601, message: 'm' },
    });
    expect(errorResponse(undefined, { code: 1, message: 'm' })).not.toHaveProperty('id');
    expect(errorResponse(null, { code: 1, message: 'm' })).not.toHaveProperty('id');
  });

  test.each([
    ['', 'parse_error', -32700],
    ['{"invalid json', 'parse_error', -32700],
    ['hello', 'parse_error', -32700],
    ['{"a":1}{"b":2}', 'parse_error', -32700],
    ['[{"jsonrpc":"2.0","id":1,"method":"x"}]', 'batch', -32600],
    ['[]', 'batch', -32600],
    ['[{"a":1}', 'parse_error', -32700],
    ['[1,', 'parse_error', -32700],
    ['"hello"', 'invalid_request', -32600],
    ['42', 'invalid_request', -32600],
    ['null', 'invalid_request', -32600],
    ['{"id":1,"method":"ping"}', 'invalid_request', -32600],
    ['{"jsonrpc":"1.0","id":1,"method":"ping"}', 'invalid_request', -32600],
    ['{"jsonrpc":"2.0","id":1,"params":{}}', 'invalid_request', -32600],
    ['{"jsonrpc":"2.0","id":1,"method":7}', 'invalid_request', -32600],
    ['{"jsonrpc":"2.0","id":1,"method":42}', 'invalid_request', -32600],
    ['{"jsonrpc":"2.0","id":1,"method":"x","params":[1]}', 'invalid_request', -32600],
    ['{"jsonrpc":"2.0","id":1,"method":"x","params":"s"}', 'invalid_request', -32600],
    ['{"jsonrpc":"2.0","id":1,"method":"x","result":{}}', 'invalid_request', -32600],
    ['{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}', 'invalid_request', -32600],
    ['{"jsonrpc":"2.0","id":1,"error":"boom"}', 'invalid_request', -32600],
    ['{"jsonrpc":"2.0","id":1,"error":null}', 'invalid_request', -32600],
    ['{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m"}}', 'invalid_request', -32600],
    ['{"jsonrpc":"2.0","result":{}}', 'invalid_request', -32600],
    ['{"jsonrpc":"2.0","id":1}', 'invalid_request', -32600],
    ['{"jsonrpc":"2.0","id":null,"method":"ping"}', 'invalid_id', -32600],
    ['{"jsonrpc":"2.0","id":1.5,"method":"ping"}', 'invalid_id', -32600],
    ['{"jsonrpc":"2.0","id":true,"method":"ping"}', 'invalid_id', -32600],
    ['{"jsonrpc":"2.0","id":{},"method":"ping"}', 'invalid_id', -32600],
    ['{"jsonrpc":"2.0","id":[1],"method":"ping"}', 'invalid_id', -32600],
    ['{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}', 'invalid_id', -32600],
  ])('%j refused: %s (%d)', (text, reason, code) => {
    const r = bad(text);
    expect(r.reason).toBe(reason);
    expect(r.code).toBe(code);
  });

  test('an invalid request echoes a readable id', () => {
    const r = bad('{"jsonrpc":"1.0","id":7,"method":"ping"}');
    expect((r as { id?: unknown }).id).toBe(7);
  });
});

describe('parseMessage: duplicates, prototypes, depth', () => {
  test.each([
    '{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}',
    '{"jsonrpc":"2.0","id":1,"ID":2,"method":"ping"}',
    '{"jsonrpc":"2.0","id":1,"method":"tools/list","Method":"tools/call"}',
    '{"jsonrpc":"2.0","id":1,"method":"x","params":{"name":"a","NAME":"b"}}',
    '{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{"a":1,"A":2}}}',
    '{"jsonrpc":"2.0","id":1,"method":"x","params":{"arguments":{"k":1,"k":2}}}',
    '{"jsonrpc":"2.0","id":1,"method":"x","params":{"arguments":{"deep":[{"k":1,"\\u006b":2}]}}}',
    '{"jsonrpc":"2.0","id":1,"method":"x","params":{"paramſ":1,"params":2}}',
  ])('duplicate member refused: %s', (text) => {
    const r = bad(text);
    expect(r.reason).toBe('duplicate_member');
    expect(r.code).toBe(-32600);
  });

  test('case-insensitive duplicates are allowed inside arguments', () => {
    const r = ok('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"id":1,"ID":2}}}');
    expect(r.kind).toBe('request');
  });

  test.each([
    '{"jsonrpc":"2.0","id":1,"method":"x","params":{"__proto__":{"polluted":1}}}',
    '{"jsonrpc":"2.0","id":1,"method":"x","params":{"arguments":{"a":{"\\u005f_proto__":{"p":1}}}}}',
    '{"jsonrpc":"2.0","id":1,"method":"x","params":{"constructor":{"prototype":{"p":1}}}}',
  ])('forbidden member refused: %s', (text) => {
    const r = bad(text);
    expect(r.reason).toBe('forbidden_member');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  test('"constructor" as a plain value is allowed', () => {
    expect(ok('{"jsonrpc":"2.0","id":1,"method":"x","params":{"constructor":"fine"}}').kind).toBe('request');
  });

  test('nesting beyond the bound is refused cleanly, at the boundary accepted', () => {
    const nest = (n: number) =>
      '{"jsonrpc":"2.0","id":1,"method":"x","params":' + '{"a":'.repeat(n) + '1' + '}'.repeat(n) + '}';
    // envelope (1) + params (2) + n nested objects: depth 2 + n - 1... params itself is the first of the n.
    expect(ok(nest(63)).kind).toBe('request');
    expect(bad(nest(64)).reason).toBe('too_deep');
    const huge =
      '{"jsonrpc":"2.0","id":1,"method":"x","params":' + '['.repeat(100000) + ']'.repeat(100000) + '}';
    const r = bad(huge);
    expect(r.reason).toBe('too_deep');
    expect(parseMessage(nest(10), { maxDepth: 8 }).ok).toBe(false);
  });

  test('parseValue checks depth and forbidden members on pre-parsed bodies', () => {
    const v = JSON.parse('{"jsonrpc":"2.0","id":1,"method":"x","params":{"__proto__":{"a":1}}}');
    const r = parseValue(v);
    expect(r.ok).toBe(false);
    expect(parseValue([1]).ok).toBe(false);
    expect(parseValue({ jsonrpc: '2.0', id: 1, method: 'x' }).ok).toBe(true);
  });
});

describe('parseMessage: method names are bounded', () => {
  const body = (method: string, id?: number) =>
    JSON.stringify(id === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', id, method });

  test.each([
    ['a request at the bound', 'x'.repeat(256), 1, true],
    ['a notification at the bound', 'n/' + 'a'.repeat(254), undefined, true],
    ['a request one past the bound', 'x'.repeat(257), 1, false],
    ['a notification one past the bound', 'a/'.repeat(128) + 'a', undefined, false],
    ['a 3.5 MiB slashed request', 'a/'.repeat(1835008), 7, false],
  ])('%s', (_what, method, id, accepted) => {
    const r = parseMessage(body(method, id));
    if (accepted) {
      expect(r).toMatchObject({ ok: true, method });
      return;
    }
    expect(r).toMatchObject({ ok: false, reason: 'method_too_long', code: -32600, status: 400 });
    if (id === undefined) expect(r).not.toHaveProperty('id');
    else expect((r as { id?: unknown }).id).toBe(id);
  });

  test('parseValue bounds the method of a pre-parsed body the same way', () => {
    expect(parseValue({ jsonrpc: '2.0', id: 2, method: 'x'.repeat(257) })).toMatchObject({
      ok: false,
      reason: 'method_too_long',
      id: 2,
    });
    expect(parseValue({ jsonrpc: '2.0', id: 2, method: 'x'.repeat(256) }).ok).toBe(true);
  });
});

describe('batch detection', () => {
  test.each([
    ['[1]', true],
    ['  \n\t [1]', true],
    ['\uFEFF[1]', true],
    ['\uFEFF  [1]', true],
    ['{}', false],
    ['', false],
    ['   ', false],
    ['\v[1]', false],
  ])('%j batch=%j', (text, expected) => {
    expect(isBatchText(text)).toBe(expected);
    expect(isBatchBytes(Buffer.from(text))).toBe(expected);
  });
});

describe('parseMessage: properties', () => {
  test('never throws on arbitrary text; always a message or a coded refusal', () => {
    const bodies = fc.oneof(
      fc.string({ unit: 'binary' }),
      fc.json(),
      fc.jsonValue().map((v) => JSON.stringify(v)),
      fc
        .record(
          {
            jsonrpc: fc.constantFrom('2.0', '1.0', 2),
            id: fc.oneof(fc.integer(), fc.string(), fc.constant(null), fc.double(), fc.boolean()),
            method: fc.oneof(fc.string(), fc.constant('tools/call'), fc.integer()),
            params: fc.oneof(fc.dictionary(fc.string(), fc.jsonValue()), fc.jsonValue()),
          },
          { requiredKeys: [] },
        )
        .map((o) => JSON.stringify(o)),
    );
    fc.assert(
      fc.property(bodies, (text) => {
        const r = parseMessage(text);
        if (r.ok) {
          expect(['request', 'notification', 'response', 'error']).toContain(r.kind);
        } else {
          expect([-32700, -32600]).toContain(r.code);
          expect(typeof r.reason).toBe('string');
          expect(r.status).toBe(400);
        }
      }),
      { numRuns: 3000 },
    );
  });

  test('arbitrary bytes decoded leniently never throw', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => {
        const r = parseMessage(Buffer.from(bytes).toString('utf8'));
        expect(typeof r.ok).toBe('boolean');
      }),
      { numRuns: 2000 },
    );
  });
});
