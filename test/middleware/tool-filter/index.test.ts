/**
 * toolFilter(): ToolHive's scenario tables (tools Foo "Foo tool" and Bar "Bar tool"), served through dispatch()
 * with a ToolRegistry and with a plain handler object, in both eras, on bare node:http and in Express 5.
 */
import { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import { dispatch } from '../../../middleware/dispatch/index';
import { type ToolFilterOptions, toolFilter } from '../../../middleware/tool-filter/index';
import { addToolView } from '../../../core/tool-views';
import { createToolView } from '../../../middleware/tool-filter/create-view';
import { ToolRegistry, textResult } from '../../../handlers/tools/index';
import { ERAS, PLATFORMS, type Stack, stack } from '../../support/dispatch-harness';

const serverInfo = { name: 'filter', version: '1' };

function registry(): ToolRegistry {
  return new ToolRegistry({
    tools: [
      { name: 'Foo', description: 'Foo tool', call: () => textResult('ran Foo') },
      { name: 'Bar', description: 'Bar tool', call: () => textResult('ran Bar') },
    ],
  });
}

/** A tools handler that is not a ToolRegistry: the dispatcher applies the view for it. */
function plainHandler() {
  const defs = [
    { name: 'Foo', description: 'Foo tool', inputSchema: { type: 'object' } },
    { name: 'Bar', description: 'Bar tool', inputSchema: { type: 'object' } },
  ];
  return {
    list: () => ({ tools: defs }),
    call: (p: Record<string, unknown>) => {
      if (p.name !== 'Foo' && p.name !== 'Bar') throw new Error(`plain handler got ${String(p.name)}`);
      return textResult(`ran ${p.name}`);
    },
  };
}

// ToolHive's tables. List: [name, description] in order. Call: the tool that runs, or null for a refusal.
const LIST_TABLE: [string, ToolFilterOptions, [string, string][]][] = [
  ['filter Foo', { allow: ['Foo'] }, [['Foo', 'Foo tool']]],
  [
    'override Foo→MyFoo',
    { override: { Foo: { name: 'MyFoo', description: 'Override description' } } },
    [
      ['MyFoo', 'Override description'],
      ['Bar', 'Bar tool'],
    ],
  ],
  [
    'filter MyFoo + override Foo→MyFoo',
    { allow: ['MyFoo'], override: { Foo: { name: 'MyFoo', description: 'Override description' } } },
    [['MyFoo', 'Override description']],
  ],
  // ToolHive lists two "Foo"s here; mcpware hides the shadowed original so that list and call agree.
  ['override Bar→Foo (no description)', { override: { Bar: { name: 'Foo' } } }, [['Foo', 'Bar tool']]],
  [
    'filter MyFoo + override Foo→MyFoo (no description)',
    { allow: ['MyFoo'], override: { Foo: { name: 'MyFoo' } } },
    [['MyFoo', 'Foo tool']],
  ],
  [
    're-describe only',
    { override: { Bar: { description: 'Better Bar' } } },
    [
      ['Foo', 'Foo tool'],
      ['Bar', 'Better Bar'],
    ],
  ],
];

const CALL_TABLE: [string, ToolFilterOptions, string, string | null][] = [
  ['filter Foo', { allow: ['Foo'] }, 'Foo', 'Foo'],
  ['filter Foo', { allow: ['Foo'] }, 'Bar', null],
  ['override Foo→MyFoo', { override: { Foo: { name: 'MyFoo' } } }, 'MyFoo', 'Foo'],
  ['override Foo→MyFoo', { override: { Foo: { name: 'MyFoo' } } }, 'Bar', 'Bar'],
  // ToolHive lets the original name through when no filter is set; here what is not listed is not callable.
  ['override Foo→MyFoo', { override: { Foo: { name: 'MyFoo' } } }, 'Foo', null],
  [
    'filter MyFoo + override Foo→MyFoo',
    { allow: ['MyFoo'], override: { Foo: { name: 'MyFoo' } } },
    'MyFoo',
    'Foo',
  ],
  [
    'filter MyFoo + override Foo→MyFoo',
    { allow: ['MyFoo'], override: { Foo: { name: 'MyFoo' } } },
    'Bar',
    null,
  ],
  ['override Bar→Foo', { override: { Bar: { name: 'Foo' } } }, 'Foo', 'Bar'],
  ['override Foo→Bar', { override: { Foo: { name: 'Bar' } } }, 'Bar', 'Foo'],
  ['swap Foo↔Bar', { override: { Foo: { name: 'Bar' }, Bar: { name: 'Foo' } } }, 'Foo', 'Bar'],
  [
    'filter Foo + override Foo→MyFoo (filter is on user names)',
    { allow: ['Foo'], override: { Foo: { name: 'MyFoo' } } },
    'MyFoo',
    null,
  ],
];

describe.each(PLATFORMS)('toolFilter on %s', (platform) => {
  describe.each([
    ['ToolRegistry', registry],
    ['plain handler object', plainHandler],
  ] as const)('with a %s', (_kind, makeTools) => {
    const stacks = new Map<string, Stack>();
    async function serverFor(opts: ToolFilterOptions): Promise<Stack> {
      const key = JSON.stringify(opts);
      let s = stacks.get(key);
      if (!s) {
        s = await stack(platform, [
          toolFilter(opts),
          dispatch({ anonymous: true, handlers: { tools: makeTools() }, serverInfo }),
        ]);
        stacks.set(key, s);
      }
      return s;
    }
    afterAll(async () => {
      for (const s of stacks.values()) await s.close();
    });

    describe.each(ERAS)('%s era', (era) => {
      test.each(LIST_TABLE)('tools/list with %s', async (_name, opts, expected) => {
        const s = await serverFor(opts);
        const tools = (await s.client({ era }).listTools()).body.result.tools as {
          name: string;
          description: string;
        }[];
        expect(tools.map((t) => [t.name, t.description])).toEqual(expected);
      });

      test.each(CALL_TABLE)('tools/call with %s, calling %s', async (_name, opts, call, runs) => {
        const s = await serverFor(opts);
        const res = await s.client({ era, autoParamHeaders: false }).callTool(call);
        expect(res.status).toBe(200);
        if (runs === null) {
          expect(res.body.error.code).toBe(-32602);
          expect(res.body.error.message).toBe(`Unknown tool: "${call}"`);
          expect(res.body.error.data.tool).toBe(call);
        } else {
          expect(res.body.result.content[0].text).toBe(`ran ${runs}`);
        }
      });
    });
  });

  describe('with a ToolRegistry, the refusal and the cursors never name a filtered tool', () => {
    let s: Stack;
    beforeAll(async () => {
      const reg = new ToolRegistry({
        pageSize: 1,
        tools: ['alpha', 'secret_admin', 'beta'].map((n) => ({ name: n, call: () => textResult(n) })),
      });
      s = await stack(platform, [
        toolFilter({ allow: ['alpha', 'beta'] }),
        dispatch({ anonymous: true, handlers: { tools: reg }, serverInfo }),
      ]);
    });
    afterAll(() => s.close());

    test.each(ERAS)('hint and cursors (%s)', async (era) => {
      const c = s.client({ era, autoParamHeaders: false });
      const refused = await c.callTool('secret_admin');
      const unknown = await c.callTool('nope');
      expect(refused.body.error.data).toEqual({ tool: 'secret_admin', available: ['alpha', 'beta'] });
      expect(unknown.body.error.data).toEqual({ tool: 'nope', available: ['alpha', 'beta'] });
      const names: string[] = [];
      let cursor: string | undefined;
      for (let i = 0; i < 5; i++) {
        const r = (await c.listTools(cursor === undefined ? {} : { cursor })).body.result;
        names.push(...r.tools.map((t: { name: string }) => t.name));
        if (r.nextCursor !== undefined)
          expect(Buffer.from(r.nextCursor, 'base64url').toString()).not.toContain('secret');
        cursor = r.nextCursor;
        if (cursor === undefined) break;
      }
      expect(names).toEqual(['alpha', 'beta']);
    });
  });

  describe('a plain handler listing a nameless tool: fail closed', () => {
    let s: Stack;
    beforeAll(async () => {
      const tools = {
        list: () => ({
          tools: [{ name: 'ok', inputSchema: { type: 'object' } }, { description: 'no name' }],
        }),
        call: () => textResult('x'),
      };
      s = await stack(platform, [
        toolFilter({ allow: ['ok'] }),
        dispatch({ anonymous: true, handlers: { tools }, serverInfo, logger: { error: () => undefined } }),
      ]);
    });
    afterAll(() => s.close());

    test('the list is withheld (-32603), no tool names leak', async () => {
      const res = await s.client().listTools();
      expect(res.body.error).toEqual({ code: -32603, message: 'Internal error' });
      expect(res.text).not.toContain('no name');
    });
  });
});

describe('toolFilter options', () => {
  test.each([
    ['nothing to do', {}, /set "allow", "override" or both/],
    ['an empty allow entry', { allow: [''] }, /option "allow\[0\]"/],
    ['allow not an array', { allow: 'Foo' as never }, /option "allow"/],
    ['override not an object', { override: [] as never }, /option "override"/],
    ['an override with neither name nor description', { override: { Foo: {} } }, /both are empty/],
    ['an override with a non-string name', { override: { Foo: { name: 5 as never } } }, /override.Foo.name/],
    [
      'an override with an unknown key',
      { override: { Foo: { title: 'x' } as never } },
      /unknown key "title"/,
    ],
    [
      'two tools renamed to the same name',
      { override: { Foo: { name: 'X' }, Bar: { name: 'X' } } },
      /renames both "Foo" and "Bar" to "X"/,
    ],
  ])('%s → TypeError', (_what, opts, message) => {
    expect(() => toolFilter(opts as ToolFilterOptions)).toThrow(TypeError);
    expect(() => toolFilter(opts as ToolFilterOptions)).toThrow(message);
  });

  test('a misspelt option is refused, naming the known one', () => {
    const build = () => toolFilter({ allowed: ['Foo'] } as never);
    expect(build).toThrow(TypeError);
    expect(build).toThrow(/toolFilter: unknown option "allowed"; did you mean "allow"\?/);
    expect(() => toolFilter({ override: { Foo: { nmae: 'Bar' } as never } })).toThrow(
      /option "override.Foo" has unknown key "nmae"; did you mean "name"\?/,
    );
  });

  test('prototype names are ordinary tool names', () => {
    const v = createToolView({ override: { constructor: { name: 'ctor' } }, allow: ['ctor', '__proto__'] });
    expect(v.resolve('ctor')).toBe('constructor');
    expect(v.expose('constructor')).toEqual({ name: 'ctor' });
    expect(v.resolve('__proto__')).toBe('__proto__');
    expect(v.resolve('toString')).toBeUndefined();
  });

  test("registry.paramHeaders(name, req) resolves a renamed tool through the request's views", () => {
    const reg = new ToolRegistry({
      tools: [
        {
          name: 'Foo',
          inputSchema: { type: 'object', properties: { r: { type: 'string', 'x-mcp-header': 'R' } } },
          call: () => textResult(''),
        },
      ],
    });
    const req = new IncomingMessage(new Socket());
    addToolView(req, createToolView({ override: { Foo: { name: 'MyFoo' } } }));
    expect(reg.paramHeaders('MyFoo', req)?.map((p) => p.name)).toEqual(['R']);
    expect(reg.paramHeaders('Foo', req)).toBeUndefined();
    expect(reg.paramHeaders('MyFoo')).toBeUndefined();
  });
});
