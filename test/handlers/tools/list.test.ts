/**
 * The tool list of a static registry is built once per revision (lib/encode.ts encodedOnce): the same frozen
 * object answers every request until a tool is registered or removed, and it is written from its stored text.
 * These tests check that the shared static list equals the per-request list (one behavioural suite runs against
 * both), that everything that makes the answer depend on the request (describe(), tool filter views, cursors,
 * pages) is answered per request, and that a tool's static fields are read once, at registration.
 */
import { encodeResult, encodeResultText, encodedOnce } from '../../../lib/encode';
import { dispatch } from '../../../middleware/dispatch/index';
import type { CallContext, HandlerMethod } from '../../../core/contract';
import type { Middleware } from '../../../core/types';
import { toolFilter } from '../../../middleware/tool-filter/index';
import { type Tool, ToolRegistry, textResult } from '../../../handlers/tools/index';
import type { JsonObject } from '../../../lib/jsonrpc';
import { ERAS, PLATFORMS, type Stack, memoryLogger, stack } from '../../support/dispatch-harness';

const serverInfo = { name: 'listcache', version: '1' };
const call = () => textResult('x');

function tools(): Tool[] {
  return [
    {
      name: 'add',
      title: 'Add',
      description: 'Adds two integers',
      annotations: { readOnlyHint: true, destructiveHint: false },
      icons: [{ src: 'https://example.com/add.png', mimeType: 'image/png' }],
      _meta: { 'example.com/owner': 'maths' },
      inputSchema: {
        type: 'object',
        properties: { a: { type: 'integer' }, b: { type: 'integer' } },
        required: ['a', 'b'],
      },
      outputSchema: { type: 'object', properties: { sum: { type: 'integer' } } },
      call,
    },
    // A non-object outputSchema: shown to modern callers only.
    { name: 'scalar', outputSchema: { type: 'integer' }, call },
    { name: 'plain', call },
  ];
}

/** The same tools plus one whose definition is decided per request: the whole list takes the per-request path. */
function withDynamic(): Tool[] {
  return [...tools(), { name: 'dyn', describe: () => ({}), call }];
}

function ctxOf(era: 'legacy' | 'modern', locals: Record<string, unknown> = {}): CallContext {
  return { era, locals } as unknown as CallContext;
}

function lister(reg: ToolRegistry): HandlerMethod {
  return (params, ctx) => reg.list(params, ctx);
}

/** The same tools, each with a describe() that changes nothing: a registry that builds every list per request. */
function perRequest(list: Tool[]): Tool[] {
  return list.map((t) => ({ ...t, describe: () => ({}) }));
}

/** A request's locals with the views of a tool filter installed. */
function filtered(options: Parameters<typeof toolFilter>[0]): Record<string, unknown> {
  const locals: Record<string, unknown> = {};
  toolFilter(options)({ method: 'POST', locals } as never, {} as never, () => undefined);
  return locals;
}

/** The two ways a registry builds tools/list; the suite below holds both to the same answers. */
const BUILDS: [string, (list: Tool[]) => Tool[]][] = [
  ['the shared static list', (list) => list],
  ['the per-request list', perRequest],
];

describe('the shared static list equals the per-request list', () => {
  const cases: [string, JsonObject, Record<string, unknown>, number][] = [
    ['the whole list', {}, {}, 0],
    ['an empty cursor', { cursor: '' }, {}, 0],
    ['a page holding every tool', {}, {}, 3],
    ['a first page', {}, {}, 2],
    ['a tool filter', {}, filtered({ allow: ['sum', 'plain'], override: { add: { name: 'sum' } } }), 0],
  ];
  test.each(ERAS)('%s: the same JSON for every request shape', async (era) => {
    for (const [what, params, locals, pageSize] of cases) {
      const shared = new ToolRegistry({ tools: tools(), pageSize });
      const fresh = new ToolRegistry({ tools: perRequest(tools()), pageSize });
      const a = await shared.list(params, ctxOf(era, locals));
      const b = await fresh.list(params, ctxOf(era, locals));
      expect([what, JSON.stringify(a)]).toEqual([what, JSON.stringify(b)]);
      if (a.nextCursor !== undefined) {
        const next = { cursor: a.nextCursor };
        const c = JSON.stringify(await shared.list(next, ctxOf(era, locals)));
        expect([what, c]).toEqual([what, JSON.stringify(await fresh.list(next, ctxOf(era, locals)))]);
      }
    }
  });
});

describe.each(BUILDS)('%s', (_build, build) => {
  test('lists the tools in registration order, with their static fields', async () => {
    const reg = new ToolRegistry({ tools: build(tools()) });
    const modern = (await reg.list({}, ctxOf('modern'))).tools;
    expect(modern.map((t) => t.name)).toEqual(['add', 'scalar', 'plain']);
    expect(modern[0]).toEqual({
      name: 'add',
      inputSchema: tools()[0]!.inputSchema,
      title: 'Add',
      description: 'Adds two integers',
      annotations: { readOnlyHint: true, destructiveHint: false },
      icons: [{ src: 'https://example.com/add.png', mimeType: 'image/png' }],
      _meta: { 'example.com/owner': 'maths' },
      outputSchema: { type: 'object', properties: { sum: { type: 'integer' } } },
    });
    expect(modern[2]).toEqual({
      name: 'plain',
      inputSchema: { type: 'object', additionalProperties: false },
    });
  });

  test('a non-object outputSchema is shown to modern callers only', async () => {
    const reg = new ToolRegistry({ tools: build(tools()) });
    expect((await reg.list({}, ctxOf('legacy'))).tools[1]).toEqual({
      name: 'scalar',
      inputSchema: expect.any(Object),
    });
    expect((await reg.list({}, ctxOf('modern'))).tools[1]!.outputSchema).toEqual({ type: 'integer' });
  });

  test('register() and remove() show in the next list', async () => {
    const reg = new ToolRegistry({ tools: build(tools()) });
    const names = async (era: 'legacy' | 'modern') =>
      (await reg.list({}, ctxOf(era))).tools.map((t) => t.name);
    reg.register(...build([{ name: 'later', call }]));
    expect(await names('modern')).toEqual(['add', 'scalar', 'plain', 'later']);
    reg.remove('add');
    expect(await names('legacy')).toEqual(['scalar', 'plain', 'later']);
  });

  test('pages follow their cursors, and a malformed cursor is refused', async () => {
    const reg = new ToolRegistry({ tools: build(tools()), pageSize: 2 });
    const first = await reg.list({}, ctxOf('modern'));
    expect(first.tools.map((t) => t.name)).toEqual(['add', 'scalar']);
    const second = await reg.list({ cursor: first.nextCursor! }, ctxOf('modern'));
    expect(second.tools.map((t) => t.name)).toEqual(['plain']);
    expect(second.nextCursor).toBeUndefined();
    const roomy = new ToolRegistry({ tools: build(tools()), pageSize: 3 });
    await expect(
      Promise.resolve().then(() => roomy.list({ cursor: 'nonsense' }, ctxOf('modern'))),
    ).rejects.toThrow(/cursor/i);
  });

  test("a tool filter's views rename and hide tools", async () => {
    const reg = new ToolRegistry({ tools: build(tools()) });
    const locals = filtered({ allow: ['sum'], override: { add: { name: 'sum', description: 'Sums' } } });
    const viewed = (await reg.list({}, ctxOf('modern', locals))).tools;
    expect(viewed.map((t) => [t.name, t.description])).toEqual([['sum', 'Sums']]);
  });
});

describe('the shared tool list of a static registry', () => {
  test.each(ERAS)('%s: one frozen object for every request', (era) => {
    const reg = new ToolRegistry({ tools: tools() });
    const list = lister(reg);
    const a = list({}, ctxOf(era)) as object;
    const b = list({ cursor: '' }, ctxOf(era)) as object;
    expect(b).toBe(a);
    expect(Object.isFrozen(a)).toBe(true);
    const first = (a as { tools: object[] }).tools[0]!;
    expect(Object.isFrozen(first)).toBe(true);
    expect(Object.isFrozen((first as { annotations: object }).annotations)).toBe(true);
    expect(JSON.parse(JSON.stringify(a))).toEqual(a);
  });

  test.each(ERAS)('%s: says exactly what a registry with a per-request tool says', (era) => {
    const shared = lister(new ToolRegistry({ tools: tools() }))({}, ctxOf(era)) as { tools: unknown[] };
    const perRequest = lister(new ToolRegistry({ tools: withDynamic() }))({}, ctxOf(era));
    return Promise.resolve(perRequest).then((p) => {
      const fresh = (p as { tools: { name: string }[] }).tools.filter((t) => t.name !== 'dyn');
      expect(Object.isFrozen(p as object)).toBe(false);
      expect(JSON.stringify(shared.tools)).toBe(JSON.stringify(fresh));
    });
  });

  test('the revisions get their own lists: a non-object outputSchema only for modern callers', () => {
    const list = lister(new ToolRegistry({ tools: tools() }));
    const legacy = list({}, ctxOf('legacy')) as { tools: Record<string, unknown>[] };
    const modern = list({}, ctxOf('modern')) as { tools: Record<string, unknown>[] };
    expect(legacy).not.toBe(modern);
    expect(legacy.tools[1]).toEqual({ name: 'scalar', inputSchema: expect.any(Object) });
    expect(modern.tools[1]!.outputSchema).toEqual({ type: 'integer' });
    expect(legacy.tools[0]!.outputSchema).toEqual(modern.tools[0]!.outputSchema);
  });

  test('register() and remove() replace it', async () => {
    const reg = new ToolRegistry({ tools: tools() });
    const list = lister(reg);
    const names = (era: 'legacy' | 'modern') =>
      (list({}, ctxOf(era)) as { tools: { name: string }[] }).tools.map((t) => t.name);
    const before = list({}, ctxOf('modern'));
    reg.register({ name: 'later', call });
    expect(list({}, ctxOf('modern'))).not.toBe(before);
    expect(names('modern')).toEqual(['add', 'scalar', 'plain', 'later']);
    expect(names('legacy')).toEqual(['add', 'scalar', 'plain', 'later']);
    reg.remove('add');
    expect(names('modern')).toEqual(['scalar', 'plain', 'later']);
    expect(names('legacy')).toEqual(['scalar', 'plain', 'later']);
    expect(reg.remove('add')).toBe(false);
    // A dynamic tool makes every list per-request; removing it makes the list shared again.
    reg.register({ name: 'dyn', describe: () => ({ description: 'now' }), call });
    const dyn = (await list({}, ctxOf('modern'))) as { tools: { name: string }[] };
    expect(Object.isFrozen(dyn)).toBe(false);
    expect(dyn.tools.map((t) => t.name)).toEqual(['scalar', 'plain', 'later', 'dyn']);
    reg.remove('dyn');
    const back = list({}, ctxOf('modern')) as object;
    expect(Object.isFrozen(back)).toBe(true);
    expect(list({}, ctxOf('modern'))).toBe(back);
  });

  test('what depends on the request takes the per-request path: views, cursors, pages', async () => {
    const reg = new ToolRegistry({ tools: tools(), pageSize: 2 });
    const list = lister(reg);
    const first = list({}, ctxOf('modern')) as { tools: { name: string }[]; nextCursor?: string };
    expect(Object.isFrozen(first)).toBe(false);
    expect(first.tools.map((t) => t.name)).toEqual(['add', 'scalar']);
    const second = list({ cursor: first.nextCursor! }, ctxOf('modern')) as { tools: { name: string }[] };
    expect(Object.isFrozen(second)).toBe(false);
    expect(second.tools.map((t) => t.name)).toEqual(['plain']);
    // A page that holds every tool is the whole list.
    const roomy = lister(new ToolRegistry({ tools: tools(), pageSize: 3 }));
    expect(Object.isFrozen(roomy({}, ctxOf('modern')) as object)).toBe(true);
    // A malformed cursor is refused even when every tool would fit.
    expect(() => roomy({ cursor: 'nonsense' }, ctxOf('modern'))).toThrow(/cursor/i);
    // Tool filter views: renamed and filtered per request.
    const views: Record<string, unknown> = {};
    const mw = toolFilter({ allow: ['sum'], override: { add: { name: 'sum' } } });
    const req = { method: 'POST', locals: views } as never;
    mw(req, {} as never, () => undefined);
    const viewed = lister(new ToolRegistry({ tools: tools() }))({}, ctxOf('modern', views)) as {
      tools: { name: string }[];
    };
    expect(Object.isFrozen(viewed)).toBe(false);
    expect(viewed.tools.map((t) => t.name)).toEqual(['sum']);
  });

  test('static fields are read at registration: later changes to the tool object do not show', () => {
    const t = tools()[0]!;
    const reg = new ToolRegistry({ tools: [t] });
    const list = lister(reg);
    t.description = 'changed';
    (t.annotations as Record<string, unknown>).readOnlyHint = false;
    const shown = (list({}, ctxOf('modern')) as { tools: Record<string, unknown>[] }).tools[0]!;
    expect(shown.description).toBe('Adds two integers');
    expect(shown.annotations).toEqual({ readOnlyHint: true, destructiveHint: false });
    // The registry's copy, not the caller's object, and the caller's object stays unfrozen.
    expect(shown.annotations).not.toBe(t.annotations);
    expect(Object.isFrozen(t.annotations)).toBe(false);
  });

  test.each([
    ['a BigInt', { annotations: { n: 1n } as never }],
    [
      'a cycle',
      {
        _meta: ((): Record<string, unknown> => {
          const o: Record<string, unknown> = {};
          o.self = o;
          return o;
        })(),
      },
    ],
  ])('a static field JSON cannot hold (%s) fails registration', (_what, extra) => {
    expect(() => new ToolRegistry({ tools: [{ name: 'bad', call, ...extra }] })).toThrow(
      /tool "bad": title, description, annotations, icons and _meta must be JSON values/,
    );
  });

  test('the encoder gives the shared list the same text as a fresh copy of it', () => {
    const list = lister(new ToolRegistry({ tools: tools() }))({}, ctxOf('modern')) as object;
    const input = { era: 'modern' as const, method: 'tools/list', serverInfo };
    const expected = JSON.stringify(
      (encodeResult(structuredClone(list), input) as { result: unknown }).result,
    );
    const out = encodeResultText(list, input);
    expect(out).toEqual({ ok: true, text: expected, resultType: 'complete', isError: false });
  });
});

describe('encodedOnce', () => {
  test('a deep-frozen plain copy: getters and toJSON are read once, prototypes dropped', () => {
    let reads = 0;
    class Point {
      constructor(
        public x: number,
        public y: number,
      ) {}
      get sum(): number {
        return ++reads;
      }
    }
    const src = {
      at: new Date(0),
      p: new Point(1, 2),
      get g() {
        return ++reads;
      },
      list: [1, { a: undefined, b: null }],
      10: 'index first',
      ['__proto__']: 'own',
    };
    Object.defineProperty(src, '__proto__', { value: { own: true }, enumerable: true });
    const copy = encodedOnce(src);
    expect(reads).toBe(1);
    expect(JSON.stringify(copy)).toBe(JSON.stringify(src).replace('"g":2', '"g":1'));
    expect(Object.getPrototypeOf(copy.p)).toBe(Object.prototype);
    expect(Object.isFrozen(copy.list[1])).toBe(true);
    // A spread copy (redaction's copy-on-write, a handler's `{...result}`) can be changed.
    expect(Object.isFrozen({ ...copy })).toBe(false);
  });

  test.each([[[1, 2]], ['text'], [new String('boxed')], [{ toJSON: () => 5 }]])(
    'refuses what does not serialize to an object: %p',
    (v) => {
      expect(() => encodedOnce(v as object)).toThrow(TypeError);
    },
  );
});

describe.each(PLATFORMS)('the shared list through dispatch on %s', (platform) => {
  let s: Stack;
  let dyn: Stack;
  const mutate: Middleware = (req, _res, next) => {
    if (req.headers['x-mutate']) {
      ((req.locals ??= {}).outbound ??= []).push((value: unknown) => {
        (value as { tools: unknown[] }).tools.push({ name: 'injected' });
        return value;
      });
    }
    next();
  };
  beforeAll(async () => {
    const logger = memoryLogger();
    s = await stack(platform, [
      mutate,
      dispatch({
        anonymous: true,
        handlers: { tools: new ToolRegistry({ tools: tools() }) },
        serverInfo,
        logger,
      }),
    ]);
    dyn = await stack(platform, [
      dispatch({
        anonymous: true,
        handlers: { tools: new ToolRegistry({ tools: withDynamic() }) },
        serverInfo,
        logger,
      }),
    ]);
  });
  afterAll(async () => {
    await s.close();
    await dyn.close();
  });

  test.each(ERAS)('%s: the same bytes as a registry that builds its list per request', async (era) => {
    const shared = await s.client({ era }).listTools();
    const fresh = await dyn.client({ era }).listTools();
    expect(shared.status).toBe(200);
    const strip = (text: string) => text.replace(/,\{"name":"dyn"[^\]]*\}\]/, ']');
    expect(shared.text).toBe(strip(fresh.text));
    // Twice: the second answer comes from the stored text.
    expect((await s.client({ era }).listTools()).text).toBe(shared.text);
  });

  test('a transform that changes the shared list in place fails closed and changes nothing', async () => {
    const refused = await s.client({ era: 'modern' }).listTools({}, { headers: { 'x-mutate': '1' } });
    expect(refused.body.error).toEqual({ code: -32603, message: 'Internal error' });
    const after = await s.client({ era: 'modern' }).listTools();
    expect(after.body.result.tools.map((t: { name: string }) => t.name)).toEqual(['add', 'scalar', 'plain']);
  });
});
