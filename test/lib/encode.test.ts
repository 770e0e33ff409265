/**
 * encodeResult and encodeResultText: the text form must be byte for byte what stringifying the object form
 * gives, for every shape a handler can return (its own `_meta`, cache hints, `resultType`, tool errors, odd keys
 * and values), and both must refuse the same results.
 */
import fc from 'fast-check';
import {
  type EncodeInput,
  encodeResult,
  encodeResultText,
  encodedOnce,
  responseText,
} from '../../lib/encode';

const SERVER_INFO = Object.freeze({
  name: 'srv "quoted" ✓',
  version: '1.0.0',
  icons: [{ src: 'https://example.com/i.png' }],
});
const SERVER_INFO_JSON = JSON.stringify(SERVER_INFO);
const SI = 'io.modelcontextprotocol/serverInfo';

function both(value: unknown, input: EncodeInput): { object: string; text: string } {
  const o = encodeResult(structuredClone(value), input);
  const t = encodeResultText(structuredClone(value), input);
  const show = (r: typeof t | typeof o): string =>
    r.ok
      ? ('text' in r ? r.text : JSON.stringify(r.result)) + ` ${r.resultType}`
      : `${r.reason}: ${r.message}`;
  return { object: show(o), text: show(t) };
}

const methods = ['tools/call', 'tools/list', 'resources/read', 'prompts/get', 'ping'] as const;

describe('encodeResultText', () => {
  test.each([
    ['legacy', 'tools/call', { content: [{ type: 'text', text: 'hi' }] }],
    ['modern', 'tools/call', { content: [{ type: 'text', text: 'hi' }] }],
    ['modern', 'tools/call', { content: [], _meta: { a: 1 } }],
    ['modern', 'tools/call', { _meta: 'not an object', content: [] }],
    ['modern', 'tools/call', { content: [], _meta: { [SI]: 'forged' } }],
    ['modern', 'tools/list', { tools: [] }],
    ['modern', 'tools/list', { tools: [], ttlMs: 5, cacheScope: 'public' }],
    ['modern', 'tools/call', { resultType: 'input_required', inputRequests: {} }],
    ['modern', 'ping', undefined],
    ['legacy', 'ping', undefined],
    ['legacy', 'tools/call', { resultType: 'complete', ttlMs: 3, cacheScope: 'private', content: [] }],
  ] as const)('%s %s %j: the same bytes as the object form', (era, method, value) => {
    const r = both(value, { era, method, serverInfo: SERVER_INFO });
    expect(r.text).toBe(r.object);
  });

  test('a modern result without _meta gets the server info in a _meta of its own, last', () => {
    const r = encodeResultText(
      { content: [{ type: 'text', text: 'x' }], isError: true },
      { era: 'modern', method: 'tools/call', serverInfo: SERVER_INFO },
    );
    expect(r).toEqual({
      ok: true,
      text: `{"resultType":"complete","content":[{"type":"text","text":"x"}],"isError":true,"_meta":{"${SI}":${SERVER_INFO_JSON}}}`,
      resultType: 'complete',
      isError: true,
    });
    expect(JSON.parse((r as { text: string }).text)._meta[SI]).toEqual(SERVER_INFO);
  });

  test('a result with its own toJSON is serialized as JSON.stringify would', () => {
    const value = () => ({ content: [], toJSON: () => ({ replaced: true }) });
    const input = { era: 'modern' as const, method: 'tools/call', serverInfo: SERVER_INFO };
    const object = encodeResult(value(), input);
    const text = encodeResultText(value(), input);
    expect(object.ok && text.ok).toBe(true);
    expect((text as { text: string }).text).toBe(JSON.stringify((object as { result: unknown }).result));
    expect((text as { text: string }).text).toBe('{"replaced":true}');
  });

  test('results that are not plain handler objects give the object form’s bytes', () => {
    class WithToJSON {
      content = [];
      toJSON(): unknown {
        return { fromPrototype: true };
      }
    }
    const cases: [string, () => unknown][] = [
      // Array-index keys sort first in the copy, before resultType.
      ['an array-index key', () => ({ content: [], 0: 'zero', 12: 'twelve' })],
      ['only an array-index key', () => ({ 7: true })],
      ['a key that starts with a digit', () => ({ '1x': 1, content: [] })],
      ['a toJSON on the prototype', () => new WithToJSON()],
      ['a boxed string', () => new String('ab')],
      ['an inherited _meta', () => Object.assign(Object.create({ _meta: { a: 1 } }), { content: [] })],
      ['an inherited isError', () => Object.assign(Object.create({ isError: true }), { content: [] })],
      ['an own undefined _meta', () => ({ content: [], _meta: undefined })],
      ['an own undefined toJSON', () => ({ content: [], toJSON: undefined })],
      ['a non-enumerable isError', () => Object.defineProperty({ content: [] }, 'isError', { value: true })],
      ['an empty object', () => ({})],
    ];
    for (const [, value] of cases) {
      for (const era of ['legacy', 'modern'] as const) {
        for (const method of ['tools/call', 'tools/list']) {
          const input = { era, method, serverInfo: SERVER_INFO };
          const object = encodeResult(value(), input);
          const isError = object.ok && object.result.isError === true;
          const text = encodeResultText(value(), input);
          expect(text).toEqual(
            object.ok
              ? { ok: true, text: JSON.stringify(object.result), resultType: object.resultType, isError }
              : object,
          );
        }
      }
    }
    // A configured hint the dispatcher would have refused (lib callers can pass anything): the same bytes.
    for (const cache of [
      { ttlMs: Number.NaN, cacheScope: 'public' },
      { ttlMs: 5, cacheScope: 'pub"lic' },
      { ttlMs: undefined, cacheScope: undefined },
    ] as unknown as EncodeInput['cache'][]) {
      const input = { era: 'modern' as const, method: 'tools/list', serverInfo: SERVER_INFO, cache };
      const object = encodeResult({ tools: [] }, input);
      const text = encodeResultText({ tools: [] }, input);
      expect((text as { text: string }).text).toBe(JSON.stringify((object as { result: unknown }).result));
    }
    // The cases above do reach the forms they name.
    expect(
      (
        encodeResultText(
          { 0: 'a', content: [] },
          { era: 'modern', method: 'tools/call', serverInfo: SERVER_INFO },
        ) as { text: string }
      ).text,
    ).toMatch(/^\{"0":"a","resultType":"complete",/);
    expect(
      (
        encodeResultText(new WithToJSON(), {
          era: 'legacy',
          method: 'tools/call',
          serverInfo: SERVER_INFO,
        }) as { text: string }
      ).text,
    ).toBe('{"content":[]}');
  });

  test('refusals are the same as encodeResult’s, and unserializable values throw as JSON.stringify does', () => {
    for (const [value, method] of [
      ['text', 'tools/call'],
      [{ resultType: 'weird' }, 'tools/call'],
      [{ tools: [], ttlMs: -1, cacheScope: 'public' }, 'tools/list'],
      [{ tools: [], ttlMs: 5 }, 'tools/list'],
    ] as const) {
      const r = both(value, { era: 'modern', method, serverInfo: SERVER_INFO });
      expect(r.text).toBe(r.object);
      expect(r.text).toMatch(/^(not_an_object|bad_result_type|bad_cache_hint): /);
    }
    const input = { era: 'modern' as const, method: 'tools/call', serverInfo: SERVER_INFO };
    expect(() => encodeResultText({ content: [], n: 1n }, input)).toThrow(TypeError);
    const cyclic: Record<string, unknown> = { content: [] };
    cyclic.self = cyclic;
    expect(() => encodeResultText(cyclic, input)).toThrow(TypeError);
  });

  test('property: any JSON result, either era, any method: the same bytes as the object form', () => {
    const member = fc.oneof(
      fc.constantFrom('resultType', 'ttlMs', 'cacheScope', '_meta', 'isError', 'content', '__x', 'é'),
      fc.string({ maxLength: 6 }),
    );
    const result = fc.dictionary(member, fc.jsonValue({ maxDepth: 3 }), { maxKeys: 6 });
    const hinted = fc.oneof(
      result,
      result.map((r) => ({ ...r, ttlMs: 10, cacheScope: 'public' })),
      result.map((r) => ({ ...r, _meta: { k: 'v' } })),
      result.map((r) => {
        const { _meta: _dropped, resultType: _rt, ttlMs: _t, cacheScope: _c, ...rest } = r;
        return rest;
      }),
    );
    let texts = 0;
    fc.assert(
      fc.property(
        hinted,
        fc.constantFrom('legacy', 'modern'),
        fc.constantFrom(...methods),
        (value, era, method) => {
          const r = both(value, { era, method, serverInfo: SERVER_INFO });
          expect(r.text).toBe(r.object);
          if (r.text.startsWith('{')) texts++;
        },
      ),
      { numRuns: 3000 },
    );
    expect(texts).toBeGreaterThan(1000);
  });
});

describe('responseText', () => {
  const json = fc.jsonValue({ maxDepth: 4 });
  const id = fc.oneof(fc.string(), fc.integer(), fc.double(), fc.constant(undefined));

  test('is JSON.stringify of the response for any result', () => {
    fc.assert(
      fc.property(id, fc.dictionary(fc.string(), json), (i, result) => {
        expect(responseText(i, result)).toBe(JSON.stringify({ jsonrpc: '2.0', id: i, result }));
      }),
    );
  });

  // see docs/performance.md#the-static-toolslist
  test('writes an encodedOnce result from its text, and gives the same text', () => {
    fc.assert(
      fc.property(id, fc.dictionary(fc.string(), json), (i, value) => {
        const result = encodedOnce(value);
        expect(responseText(i, result)).toBe(JSON.stringify({ jsonrpc: '2.0', id: i, result }));
      }),
    );
  });

  test('uses the carried text, not a serialization of the result', () => {
    const once = encodedOnce({ tools: [{ name: 'a' }] });
    const stringify = jest.spyOn(JSON, 'stringify');
    try {
      expect(responseText(1, once)).toBe('{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a"}]}}');
      expect(responseText(undefined, once)).toBe('{"jsonrpc":"2.0","result":{"tools":[{"name":"a"}]}}');
      expect(
        stringify.mock.calls.some(([v]) => v === once || (v as { result?: unknown })?.result === once),
      ).toBe(false);
    } finally {
      stringify.mockRestore();
    }
  });

  test('a copy of an encodedOnce value, or an object inheriting from one, is serialized', () => {
    const once = encodedOnce({ tools: [1] });
    const changed = { ...once, more: true };
    expect(responseText(2, changed)).toBe(JSON.stringify({ jsonrpc: '2.0', id: 2, result: changed }));
    const heir = Object.create(once) as Record<string, unknown>;
    heir.own = 1;
    expect(responseText(3, heir)).toBe('{"jsonrpc":"2.0","id":3,"result":{"own":1}}');
  });

  test('a result with an encodedOnce _meta gives the same text, the _meta anywhere among the members', () => {
    fc.assert(
      fc.property(
        id,
        fc.dictionary(fc.string(), json),
        fc.dictionary(fc.string(), json),
        fc.dictionary(fc.string(), json),
        (i, before, meta, after) => {
          const result = { ...before, _meta: encodedOnce(meta), ...after };
          expect(responseText(i, result)).toBe(JSON.stringify({ jsonrpc: '2.0', id: i, result }));
        },
      ),
    );
  });

  test('next to an encodedOnce _meta, every kind of value is written as JSON.stringify writes it', () => {
    const result: Record<string, unknown> = JSON.parse('{"__proto__":{"x":1},"1":2}') as Record<
      string,
      unknown
    >;
    Object.assign(result, {
      gone: undefined,
      fn: () => 1,
      sym: Symbol('s'),
      nan: Number.NaN,
      inf: -Infinity,
      negZero: -0,
      big: 1e21,
      small: 5e-7,
      t: true,
      f: false,
      nil: null,
      boxed: new String('b'),
      quote: 'a"b\\c\u0001\ud800é',
      '\u2028': 'line',
      _meta: encodedOnce({ 'io.modelcontextprotocol/serverInfo': { name: 'srv' } }),
      nested: { x: undefined, d: new Date(0) },
    });
    for (const i of [1, Number.NaN, -0, 'x"y', undefined]) {
      expect(responseText(i as string | number | undefined, result)).toBe(
        JSON.stringify({ jsonrpc: '2.0', id: i, result }),
      );
    }
    expect(() => responseText(1, { _meta: result._meta, n: 1n })).toThrow(TypeError);
    const cyclic: Record<string, unknown> = { _meta: result._meta };
    cyclic.self = { back: cyclic };
    expect(() => responseText(1, cyclic)).toThrow(TypeError);
  });

  test('a toJSON is called with the key JSON.stringify gives it, on the result or on a member', () => {
    const at = { toJSON: (key: string) => `at ${key}` };
    const meta = encodedOnce({ m: 1 });
    for (const result of [
      { when: at },
      { when: at, _meta: meta },
      Object.assign({ x: 1 }, at),
      Object.assign({ _meta: meta }, at),
      Object.assign({ _meta: meta }, { toJSON: () => undefined }),
    ]) {
      expect(responseText(4, result)).toBe(JSON.stringify({ jsonrpc: '2.0', id: 4, result }));
    }
  });
});

// see docs/performance.md#the-static-toolslist
describe('the modern result of an encodedOnce value', () => {
  const info = Object.freeze({ name: 'srv', version: '1.0.0' });
  const input = (over: Partial<EncodeInput> = {}): EncodeInput => ({
    era: 'modern',
    method: 'tools/list',
    serverInfo: info,
    ...over,
  });
  const resultOf = (r: ReturnType<typeof encodeResult>): Record<string, unknown> => {
    if (!r.ok) throw new Error(r.message);
    return r.result;
  };

  test('is made once and shared: frozen, the result a copy of the value gets, written from its text', () => {
    const once = encodedOnce({ tools: [{ name: 'a' }] });
    const a = resultOf(encodeResult(once, input()));
    expect(resultOf(encodeResult(once, input()))).toBe(a);
    expect(Object.isFrozen(a)).toBe(true);
    expect(a).toEqual(resultOf(encodeResult(structuredClone(once), input())));
    expect(responseText(5, a)).toBe(
      '{"jsonrpc":"2.0","id":5,"result":{"resultType":"complete","tools":[{"name":"a"}],"ttlMs":0,"cacheScope":"private","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"srv","version":"1.0.0"}}}}',
    );
    expect(responseText(5, a)).toBe(JSON.stringify({ jsonrpc: '2.0', id: 5, result: a }));
  });

  test('is made again for another method, hint or server info', () => {
    const once = encodedOnce({ tools: [] });
    const a = resultOf(encodeResult(once, input()));
    const hint = { ttlMs: 60000, cacheScope: 'public' as const };
    const hinted = resultOf(encodeResult(once, input({ cache: hint })));
    expect(hinted).toMatchObject({ ttlMs: 60000, cacheScope: 'public' });
    const other = Object.freeze({ name: 'other', version: '2.0.0' });
    const renamed = resultOf(encodeResult(once, input({ cache: hint, serverInfo: other })));
    expect(renamed._meta).toEqual({ 'io.modelcontextprotocol/serverInfo': other });
    const called = resultOf(encodeResult(once, input({ method: 'tools/call' })));
    expect(called).not.toHaveProperty('ttlMs');
    // Four kept per value: the first is still there; a fifth pushes it out.
    expect(resultOf(encodeResult(once, input()))).toBe(a);
    resultOf(encodeResult(once, input({ method: 'resources/list' })));
    const again = resultOf(encodeResult(once, input()));
    expect(again).not.toBe(a);
    expect(again).toEqual(a);
  });

  test('in the legacy era the value is the result, written from its text', () => {
    const once = encodedOnce({ tools: [{ name: 'a' }] });
    const r = resultOf(encodeResult(once, input({ era: 'legacy' })));
    expect(r).toBe(once);
    expect(responseText(1, r)).toBe('{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a"}]}}');
  });

  test('a frozen server info gives every other result one shared, frozen _meta, written from its text', () => {
    const call = { era: 'modern' as const, method: 'tools/call', serverInfo: info };
    const a = resultOf(encodeResult({ content: [] }, call));
    const b = resultOf(encodeResult({ content: [] }, call));
    expect(a._meta).toBe(b._meta);
    expect(Object.isFrozen(a._meta)).toBe(true);
    expect(a._meta).toEqual({ 'io.modelcontextprotocol/serverInfo': info });
    const stringify = jest.spyOn(JSON, 'stringify');
    try {
      expect(responseText(3, a)).toBe(
        '{"jsonrpc":"2.0","id":3,"result":{"resultType":"complete","content":[],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"srv","version":"1.0.0"}}}}',
      );
      expect(stringify.mock.calls.some(([v]) => v === a._meta || v === a)).toBe(false);
    } finally {
      stringify.mockRestore();
    }
  });

  test('a server info is read afresh for every other result, and a result’s own _meta is kept', () => {
    const mutable = { name: 'srv', version: '1.0.0' };
    const call = { era: 'modern' as const, method: 'tools/call', serverInfo: mutable };
    const a = resultOf(encodeResult({ content: [] }, call));
    mutable.version = '2.0.0';
    const b = resultOf(encodeResult({ content: [] }, call));
    expect(a._meta).not.toBe(b._meta);
    expect(b._meta).toEqual({ 'io.modelcontextprotocol/serverInfo': { name: 'srv', version: '2.0.0' } });
    const own = resultOf(encodeResult({ content: [], _meta: { trace: 'x' } }, { ...call, serverInfo: info }));
    expect(own._meta).toEqual({ trace: 'x', 'io.modelcontextprotocol/serverInfo': info });
  });
});
