/**
 * The tool registry served through dispatch() in both eras, on bare node:http and in Express 5; registration
 * rules; ok() and the content block builders.
 */
import Ajv from 'ajv';
import { McpError } from '../../../lib/errors';
import { dispatch } from '../../../middleware/dispatch/index';
import type { CallContext } from '../../../core/contract';
import {
  type Tool,
  type ToolCallEnd,
  ToolRegistry,
  audioBlock,
  embeddedResource,
  imageBlock,
  ok,
  resourceLink,
  textBlock,
  textResult,
  toolError,
} from '../../../handlers/tools/index';
import { ERAS, PLATFORMS, type Stack, fakeAuth, memoryLogger, stack } from '../../support/dispatch-harness';

const serverInfo = { name: 'tools', version: '1' };

function buildTools(): Tool[] {
  return [
    {
      name: 'add',
      title: 'Add',
      description: 'Adds two integers',
      annotations: { readOnlyHint: true, destructiveHint: false },
      inputSchema: {
        type: 'object',
        properties: {
          a: { type: 'integer' },
          b: { type: 'integer' },
          opts: { type: 'object', properties: { round: { type: 'boolean' } } },
        },
        required: ['a', 'b'],
        additionalProperties: false,
      },
      outputSchema: { type: 'object', properties: { sum: { type: 'integer' } }, required: ['sum'] },
      call: (args) => ok({ sum: (args.a as number) + (args.b as number) }),
    },
    {
      name: 'admin_reset',
      description: 'Resets everything',
      // Visible to admins only: decided per request, never cached across callers.
      describe: (ctx) =>
        ctx.principal?.roles.includes('admin')
          ? { description: `Resets everything (for ${ctx.principal.userId})` }
          : undefined,
      call: () => textResult('reset done'),
    },
    {
      name: 'liar',
      outputSchema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
      call: () => ok({ n: 'not a number' }),
    },
    { name: 'scalar', outputSchema: { type: 'integer' }, call: () => ok(42) },
    { name: 'fails', call: () => toolError('upstream API said no') },
    {
      name: 'throws',
      call: () => {
        throw new Error('kaboom with secret');
      },
    },
    {
      name: 'refuses',
      call: () => {
        throw new McpError(-32602, 'Refused by the tool', { why: 'because' });
      },
    },
    { name: 'bad-result', call: () => ({ text: 'no content array' }) as never },
    {
      name: 'flaky-describe',
      describe: () => {
        throw new Error('describe failed');
      },
      call: () => textResult('never'),
    },
  ];
}

describe.each(PLATFORMS)('ToolRegistry via dispatch on %s', (platform) => {
  let s: Stack;
  let log: ReturnType<typeof memoryLogger>;
  const ends: ToolCallEnd[] = [];
  const starts: string[] = [];

  beforeAll(async () => {
    log = memoryLogger();
    const reg = new ToolRegistry({
      tools: buildTools(),
      logger: log,
      before: ({ name, args }) => {
        starts.push(name);
        if (args.a === 666) throw new McpError(-32602, 'Vetoed by the before hook');
      },
      after: (e) => {
        ends.push(e);
      },
    });
    s = await stack(platform, [
      fakeAuth(),
      dispatch({ anonymous: true, handlers: { tools: reg }, serverInfo, logger: log }),
    ]);
  });
  afterAll(() => s.close());

  describe.each(ERAS)('%s era', (era) => {
    const anon = () => s.client({ era });
    const admin = () => s.client({ era, headers: { 'x-user': 'root', 'x-roles': 'admin' } });

    test('tools/list keeps registration order and hides what this caller may not see', async () => {
      const names = (await anon().listTools()).body.result.tools.map((t: { name: string }) => t.name);
      expect(names).toEqual(['add', 'liar', 'scalar', 'fails', 'throws', 'refuses', 'bad-result']);
      const adminTools = (await admin().listTools()).body.result.tools as {
        name: string;
        description?: string;
      }[];
      expect(adminTools.map((t) => t.name)).toEqual([
        'add',
        'admin_reset',
        'liar',
        'scalar',
        'fails',
        'throws',
        'refuses',
        'bad-result',
      ]);
      expect(adminTools[1]!.description).toBe('Resets everything (for root)');
    });

    test('a failing describe() hides the tool for the request and is logged', async () => {
      await anon().listTools();
      expect(log.lines.some((l) => l.message.includes('describe() of tool "flaky-describe" failed'))).toBe(
        true,
      );
    });

    test('definitions carry name, title, description, schemas and annotations', async () => {
      const add = (await anon().listTools()).body.result.tools[0];
      expect(add).toEqual({
        name: 'add',
        title: 'Add',
        description: 'Adds two integers',
        annotations: { readOnlyHint: true, destructiveHint: false },
        inputSchema: expect.objectContaining({ type: 'object', required: ['a', 'b'] }),
        outputSchema: { type: 'object', properties: { sum: { type: 'integer' } }, required: ['sum'] },
      });
      const noArgs = (await anon().listTools()).body.result.tools.find(
        (t: { name: string }) => t.name === 'fails',
      );
      expect(noArgs.inputSchema).toEqual({ type: 'object', additionalProperties: false });
    });

    test('outputSchema that is not an object is shown to modern callers only (2025-11-25 requires type object)', async () => {
      const scalar = (await anon().listTools()).body.result.tools.find(
        (t: { name: string }) => t.name === 'scalar',
      );
      if (era === 'modern') expect(scalar.outputSchema).toEqual({ type: 'integer' });
      else expect(scalar.outputSchema).toBeUndefined();
    });

    test('ok(): structuredContent plus the same JSON as text', async () => {
      const r = (await anon().callTool('add', { a: 2, b: 3 })).body.result;
      expect(r.structuredContent).toEqual({ sum: 5 });
      expect(r.content).toEqual([{ type: 'text', text: '{"sum":5}' }]);
      expect(r.isError).toBeUndefined();
    });

    test('a non-object structuredContent: kept for modern callers, dropped for legacy ones (text stays)', async () => {
      const r = (await anon().callTool('scalar')).body.result;
      expect(r.content).toEqual([{ type: 'text', text: '42' }]);
      if (era === 'modern') expect(r.structuredContent).toBe(42);
      else expect('structuredContent' in r).toBe(false);
    });

    test('an unknown and a hidden tool get the same refusal, hinting only visible tools', async () => {
      const unknown = await anon().callTool('nope');
      const hidden = await anon().callTool('admin_reset');
      for (const [res, name] of [
        [unknown, 'nope'],
        [hidden, 'admin_reset'],
      ] as const) {
        expect(res.status).toBe(200);
        expect(res.body.error.code).toBe(-32602);
        expect(res.body.error.message).toBe(`Unknown tool: "${name}"`);
        expect(res.body.error.data).toEqual({
          tool: name,
          available: ['add', 'liar', 'scalar', 'fails', 'throws', 'refuses', 'bad-result'],
        });
      }
      expect(hidden.text).not.toContain('Resets everything');
      const asAdmin = await admin().callTool('admin_reset');
      expect(asAdmin.body.result.content).toEqual([{ type: 'text', text: 'reset done' }]);
    });

    test('invalid arguments: a tool error result naming the fields', async () => {
      const r = (await anon().callTool('add', { a: 'two', opts: { round: 'yes' }, extra: 1 })).body.result;
      expect(r.isError).toBe(true);
      const text = r.content[0].text as string;
      expect(text.startsWith('Invalid arguments: ')).toBe(true);
      expect(text).toContain('a: must be integer');
      expect(text).toContain('b: is required');
      expect(text).toContain('extra: is not allowed');
      expect(text).toContain('opts.round: must be boolean');
      expect(r._meta['mcpware/invalidArguments']).toEqual(
        expect.arrayContaining([
          { field: 'b', message: 'is required' },
          { field: 'a', message: 'must be integer' },
        ]),
      );
    });

    test('arguments that are not an object, or a missing name → -32602', async () => {
      const c = anon();
      const notObj = await c.request('tools/call', { name: 'add', arguments: [1, 2] });
      expect(notObj.body.error.code).toBe(-32602);
      const noName = await c.request('tools/call', { arguments: {} }, { omitHeader: 'Mcp-Name' });
      expect(noName.body.error.code).toBe(-32602);
    });

    test('structuredContent violating outputSchema is a server bug: -32603, detail in the log', async () => {
      const res = await anon().callTool('liar');
      expect(res.body.error).toEqual({ code: -32603, message: 'Internal error' });
      expect(
        log.lines.some((l) => JSON.stringify(l.meta ?? {}).includes('does not match its outputSchema')),
      ).toBe(true);
    });

    test('a tool error result is in-band with isError', async () => {
      const r = (await anon().callTool('fails')).body.result;
      expect(r).toMatchObject({ content: [{ type: 'text', text: 'upstream API said no' }], isError: true });
    });

    test('a tool that throws → -32603 generic; an McpError keeps its code; a malformed result → -32603', async () => {
      const thrown = await anon().callTool('throws');
      expect(thrown.body.error).toEqual({ code: -32603, message: 'Internal error' });
      expect(thrown.text).not.toContain('secret');
      expect((await anon().callTool('refuses')).body.error).toEqual({
        code: -32602,
        message: 'Refused by the tool',
        data: { why: 'because' },
      });
      expect((await anon().callTool('bad-result')).body.error.code).toBe(-32603);
    });

    test('hooks: before runs for visible tools with valid arguments; after runs exactly once for every call', async () => {
      ends.length = 0;
      starts.length = 0;
      const c = anon();
      await c.callTool('add', { a: 1, b: 1 });
      await c.callTool('nope');
      await c.callTool('add', { a: 'x', b: 1 });
      await c.callTool('fails');
      await c.callTool('throws');
      const vetoed = await c.callTool('add', { a: 666, b: 1 });
      expect(vetoed.body.error).toEqual({ code: -32602, message: 'Vetoed by the before hook' });
      expect(starts).toEqual(['add', 'fails', 'throws', 'add']);
      expect(ends.map((e) => [e.name, e.outcome])).toEqual([
        ['add', 'ok'],
        ['nope', 'unknown_tool'],
        ['add', 'invalid_arguments'],
        ['fails', 'tool_error'],
        ['throws', 'error'],
        ['add', 'error'],
      ]);
      for (const e of ends) expect(e.elapsedMs).toBeGreaterThanOrEqual(0);
      expect(ends[1]!.tool).toBeUndefined();
      expect(ends[0]!.result?.structuredContent).toEqual({ sum: 2 });
    });
  });
});

describe.each(PLATFORMS)('ToolRegistry paging and unknown-tool override on %s', (platform) => {
  let s: Stack;
  beforeAll(async () => {
    const reg = new ToolRegistry({
      pageSize: 2,
      unknownTool: (name, available) => toolError(`No tool ${name}; try ${available.join(', ')}`),
      tools: ['a', 'b', 'c', 'd', 'e'].map((n) => ({ name: n, call: () => textResult(n) })),
    });
    s = await stack(platform, [dispatch({ anonymous: true, handlers: { tools: reg }, serverInfo })]);
  });
  afterAll(() => s.close());

  test.each(ERAS)('pages of two, cursors until the end (%s)', async (era) => {
    const c = s.client({ era });
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const r = (await c.listTools(cursor === undefined ? {} : { cursor })).body.result;
      seen.push(...r.tools.map((t: { name: string }) => t.name));
      if (era === 'modern') expect(r.cacheScope).toBe('private');
      cursor = r.nextCursor;
      pages++;
    } while (cursor !== undefined && pages < 10);
    expect(seen).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(pages).toBe(3);
  });

  test.each(ERAS)('an invalid cursor → -32602 (%s)', async (era) => {
    const res = await s.client({ era }).listTools({ cursor: '!!!' });
    expect(res.status).toBe(200);
    expect(res.body.error.code).toBe(-32602);
  });

  test.each(ERAS)('the unknown-tool refusal can be replaced (%s)', async (era) => {
    const r = (await s.client({ era }).callTool('zzz')).body.result;
    expect(r.isError).toBe(true);
    expect(r.content[0].text).toBe('No tool zzz; try a, b, c, d, e');
  });
});

describe('ToolRegistry registration', () => {
  const call = () => textResult('x');

  test.each([
    [
      'a duplicate name',
      () =>
        new ToolRegistry({
          tools: [
            { name: 'a', call },
            { name: 'a', call },
          ],
        }),
      /duplicate tool name "a"/,
    ],
    ['an empty name', () => new ToolRegistry({ tools: [{ name: '', call }] }), /tool name must be a string/],
    [
      'a name over 128 characters',
      () => new ToolRegistry({ tools: [{ name: 'x'.repeat(129), call }] }),
      /1 to 128/,
    ],
    ['no call()', () => new ToolRegistry({ tools: [{ name: 'a' } as never] }), /call must be a function/],
    [
      'inputSchema without type object',
      () => new ToolRegistry({ tools: [{ name: 'a', inputSchema: { type: 'string' }, call }] }),
      /"type": "object"/,
    ],
    [
      'a schema ajv cannot compile',
      () =>
        new ToolRegistry({
          tools: [
            { name: 'a', inputSchema: { type: 'object', properties: { x: { type: 'nonsense' } } }, call },
          ],
        }),
      /inputSchema does not compile/,
    ],
    [
      'outputSchema not a schema',
      () => new ToolRegistry({ tools: [{ name: 'a', outputSchema: 'x' as never, call }] }),
      /outputSchema must be a JSON Schema/,
    ],
    [
      'x-mcp-header on a number',
      () =>
        new ToolRegistry({
          tools: [
            {
              name: 'a',
              inputSchema: { type: 'object', properties: { n: { type: 'number', 'x-mcp-header': 'N' } } },
              call,
            },
          ],
        }),
      /tool "a": invalid x-mcp-header annotation: .*not permitted on type "number"/,
    ],
    [
      'x-mcp-header names colliding ignoring case',
      () =>
        new ToolRegistry({
          tools: [
            {
              name: 'a',
              inputSchema: {
                type: 'object',
                properties: {
                  x: { type: 'string', 'x-mcp-header': 'Region' },
                  y: { type: 'string', 'x-mcp-header': 'REGION' },
                },
              },
              call,
            },
          ],
        }),
      /collides case-insensitively/,
    ],
    [
      'x-mcp-header under items',
      () =>
        new ToolRegistry({
          tools: [
            {
              name: 'a',
              inputSchema: {
                type: 'object',
                properties: { l: { type: 'array', items: { type: 'string', 'x-mcp-header': 'L' } } },
              },
              call,
            },
          ],
        }),
      /only allowed on properties reached through "properties"/,
    ],
    [
      'x-mcp-header that is not a token',
      () =>
        new ToolRegistry({
          tools: [
            {
              name: 'a',
              inputSchema: {
                type: 'object',
                properties: { x: { type: 'string', 'x-mcp-header': 'Has Space' } },
              },
              call,
            },
          ],
        }),
      /not a valid HTTP field-name token/,
    ],
    ['a bad pageSize option', () => new ToolRegistry({ pageSize: -1 }), /option "pageSize"/],
    ['a bad before option', () => new ToolRegistry({ before: 'x' as never }), /option "before"/],
    ['a bad ajv option', () => new ToolRegistry({ ajv: {} as never }), /option "ajv"/],
  ])('%s → TypeError', (_what, build, message) => {
    expect(build).toThrow(TypeError);
    expect(build).toThrow(message);
  });

  test('a misspelt option is refused, naming the known one', () => {
    const build = () => new ToolRegistry({ befor: () => undefined } as never);
    expect(build).toThrow(TypeError);
    expect(build).toThrow(/ToolRegistry: unknown option "befor"; did you mean "before"\?/);
    expect(() => new ToolRegistry(null as never)).toThrow(/ToolRegistry: options must be an object/);
  });

  test('a failed registration registers none of the batch', () => {
    const reg = new ToolRegistry({ tools: [{ name: 'a', call }] });
    expect(() => reg.register({ name: 'b', call }, { name: 'a', call })).toThrow(/duplicate/);
    expect(reg.names).toEqual(['a']);
    expect(reg.has('b')).toBe(false);
    expect(reg.remove('a')).toBe(true);
    expect(reg.names).toEqual([]);
  });

  test('paramHeaders(name): the annotations computed at registration; undefined for unknown tools', () => {
    const reg = new ToolRegistry({
      tools: [
        {
          name: 'sql',
          inputSchema: {
            type: 'object',
            properties: {
              region: { type: 'string', 'x-mcp-header': 'Region' },
              opts: { type: 'object', properties: { dry: { type: 'boolean', 'x-mcp-header': 'Dry-Run' } } },
            },
          },
          call,
        },
        { name: 'plain', call },
      ],
    });
    const lookup = reg.paramHeaders; // usable unbound
    expect(lookup('sql')).toEqual([
      { path: ['opts', 'dry'], name: 'Dry-Run', headerKey: 'mcp-param-dry-run', type: 'boolean' },
      { path: ['region'], name: 'Region', headerKey: 'mcp-param-region', type: 'string' },
    ]);
    expect(lookup('plain')).toEqual([]);
    expect(lookup('nope')).toBeUndefined();
  });

  test("schemas are copied and frozen at registration (later changes to the caller's object do not leak in)", async () => {
    const schema = { type: 'object', properties: { x: { type: 'string' } } };
    const reg = new ToolRegistry({ tools: [{ name: 'a', inputSchema: schema, call }] });
    (schema.properties.x as Record<string, unknown>).type = 'integer';
    const ctx = { era: 'modern', locals: {} } as unknown as CallContext;
    const listed = (await reg.list({}, ctx)).tools[0]!;
    expect(listed.inputSchema).toEqual({ type: 'object', properties: { x: { type: 'string' } } });
    expect(Object.isFrozen(listed.inputSchema)).toBe(true);
  });

  test('a caller-supplied Ajv instance is used (draft-07 schemas, formats)', async () => {
    const ajv = new Ajv({ allErrors: true, strict: false });
    ajv.addFormat('upper', /^[A-Z]{1,20}$/);
    const reg = new ToolRegistry({
      ajv,
      tools: [
        {
          name: 'a',
          inputSchema: {
            $schema: 'http://json-schema.org/draft-07/schema#',
            type: 'object',
            properties: { c: { type: 'string', format: 'upper' } },
          },
          call,
        },
      ],
    });
    const ctx = { era: 'modern', locals: {} } as unknown as CallContext;
    expect((await reg.call({ name: 'a', arguments: { c: 'ABC' } }, ctx)).isError).toBeUndefined();
    const bad = await reg.call({ name: 'a', arguments: { c: 'abc' } }, ctx);
    expect(bad.isError).toBe(true);
    expect((bad.content[0] as { text: string }).text).toContain('c: must match format "upper"');
  });

  test('the default Ajv (2020-12) refuses a draft-07 $schema at registration, with a hint in the message', () => {
    expect(
      () =>
        new ToolRegistry({
          tools: [
            {
              name: 'a',
              inputSchema: { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object' },
              call,
            },
          ],
        }),
    ).toThrow(/inputSchema does not compile/);
  });
});

describe('ToolRegistry answers: values when every step is synchronous, promises otherwise', () => {
  const ctx = { era: 'modern', locals: {} } as unknown as CallContext;
  const echo: Tool = { name: 'echo', call: () => textResult('hi') };

  test('a static tool: list and call return the answers themselves', () => {
    const reg = new ToolRegistry({ tools: [echo] });
    const listed = reg.list({}, ctx);
    expect(listed).not.toBeInstanceOf(Promise);
    expect((listed as { tools: { name: string }[] }).tools.map((t) => t.name)).toEqual(['echo']);
    expect(reg.call({ name: 'echo' }, ctx)).toEqual({ content: [{ type: 'text', text: 'hi' }] });
    const invalid = reg.call({ name: 'echo', arguments: { x: 1 } }, ctx);
    expect(invalid).toEqual(expect.objectContaining({ isError: true }));
    expect(() => reg.call({ name: 'nope' }, ctx)).toThrow(McpError);
  });

  test('an asynchronous tool, describe() or after hook: promises of the same answers', async () => {
    const slow: Tool = { name: 'slow', call: async () => textResult('later') };
    const dynamic: Tool = { ...echo, name: 'dyn', describe: () => ({}) };
    const reg = new ToolRegistry({ tools: [slow, dynamic] });
    const called = reg.call({ name: 'slow' }, ctx);
    expect(called).toBeInstanceOf(Promise);
    expect(await called).toEqual({ content: [{ type: 'text', text: 'later' }] });
    expect(reg.list({}, ctx)).toBeInstanceOf(Promise);
    expect(reg.call({ name: 'dyn' }, ctx)).toBeInstanceOf(Promise);
    const observed = new ToolRegistry({ tools: [echo], after: () => undefined });
    const answer = observed.call({ name: 'echo' }, ctx);
    expect(answer).toBeInstanceOf(Promise);
    expect(await answer).toEqual({ content: [{ type: 'text', text: 'hi' }] });
  });
});

describe('ok() and the content builders', () => {
  test('ok() needs a JSON value', () => {
    expect(ok([1, 'a'])).toEqual({
      content: [{ type: 'text', text: '[1,"a"]' }],
      structuredContent: [1, 'a'],
    });
    expect(ok(null).structuredContent).toBeNull();
    expect(() => ok(undefined)).toThrow(TypeError);
    expect(ok({ a: 1 }, { _meta: { 'x.com/k': 1 } })._meta).toEqual({ 'x.com/k': 1 });
  });

  test('textBlock, textResult, toolError', () => {
    expect(textBlock('hi', { annotations: { audience: ['user'], priority: 0.5 } })).toEqual({
      type: 'text',
      text: 'hi',
      annotations: { audience: ['user'], priority: 0.5 },
    });
    expect(textResult('x')).toEqual({ content: [{ type: 'text', text: 'x' }] });
    expect(toolError('bad', { structuredContent: { code: 'E' } })).toEqual({
      content: [{ type: 'text', text: 'bad' }],
      isError: true,
      structuredContent: { code: 'E' },
    });
    expect(() => textBlock(5 as never)).toThrow(TypeError);
  });

  test('image and audio blocks Base64-encode bytes; a string must already be canonical Base64', () => {
    const bytes = new Uint8Array([0, 1, 2, 250, 251, 252]);
    expect(imageBlock(bytes, 'image/png')).toEqual({
      type: 'image',
      data: 'AAEC+vv8',
      mimeType: 'image/png',
    });
    expect(audioBlock(bytes.buffer, 'audio/wav')).toEqual({
      type: 'audio',
      data: 'AAEC+vv8',
      mimeType: 'audio/wav',
    });
    // A view into a larger buffer encodes only its own bytes.
    expect(imageBlock(bytes.subarray(3), 'image/png').data).toBe(
      Buffer.from([250, 251, 252]).toString('base64'),
    );
    expect(imageBlock('AAEC+vv8', 'image/png').data).toBe('AAEC+vv8');
    for (const bad of ['hello world', 'AAE', 'AAEC+vv9=', 'AB=='])
      expect(() => imageBlock(bad, 'image/png')).toThrow(TypeError);
    expect(() => imageBlock(bytes, '')).toThrow(/mimeType/);
  });

  test('resource_link and embedded resource blocks', () => {
    expect(
      resourceLink({
        uri: 'file:///a.txt',
        name: 'a.txt',
        mimeType: 'text/plain',
        size: 3,
        description: undefined,
      }),
    ).toEqual({
      type: 'resource_link',
      uri: 'file:///a.txt',
      name: 'a.txt',
      mimeType: 'text/plain',
      size: 3,
    });
    expect(() => resourceLink({ uri: '', name: 'x' })).toThrow(TypeError);
    expect(embeddedResource({ uri: 'mem://t', mimeType: 'text/plain', text: 'hi' })).toEqual({
      type: 'resource',
      resource: { uri: 'mem://t', mimeType: 'text/plain', text: 'hi' },
    });
    expect(
      embeddedResource({ uri: 'mem://b', blob: new Uint8Array([255]) }, { annotations: { priority: 1 } }),
    ).toEqual({
      type: 'resource',
      resource: { uri: 'mem://b', blob: '/w==' },
      annotations: { priority: 1 },
    });
    expect(() => embeddedResource({ uri: 'mem://x' })).toThrow(/exactly one/);
    expect(() => embeddedResource({ uri: 'mem://x', text: 'a', blob: 'AA==' })).toThrow(/exactly one/);
  });
});
