/**
 * Strings from the request are data: a name from the request that is an `Object.prototype` member
 * (`constructor`, `__proto__`, `toString`, …) is answered as any other unknown name, in both eras, over HTTP:
 * as method, tool and prompt name, resource URI and template variable, cursor, completion ref and argument,
 * `_meta` key, prompt and tool argument name, log level, `Mcp-Param-*` header and argument path, API key group,
 * and OIDC subject, role and group claim. Against the demo's full stack, a small app with templates,
 * subscriptions and logging, and an OIDC issuer on loopback.
 */
import { createHash } from 'node:crypto';
import {
  ChangeFeed,
  checkHeaders,
  classifyRevision,
  completion,
  dispatch,
  memoryResources,
  ok,
  oidcAuth,
  parse,
  prompts,
  resources,
  ToolRegistry,
} from '../../index';
import { McpTestClient, TestIssuer, type McpResponse } from '../../testing/index';
import { FLAVOURS, serve, type Harness } from '../support/auth-harness';
import { startDemo, type RunningDemo } from '../support/demo';
import { PLATFORMS, stack, type Stack } from '../support/dispatch-harness';

const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const KEYS = `demo:sha256:${sha('demo-token')}:users`;
const AUTH = { Authorization: 'Bearer demo-token' };
const NAMES = Object.getOwnPropertyNames(Object.prototype);
/** The ordinary unknown name each answer is compared with. */
const BASE = 'zzunknownzz';
const quiet = { error() {}, warn() {} };

let d: RunningDemo;
beforeAll(async () => {
  // No request budget: the table sends far more than a minute's worth for one user.
  d = await startDemo({ MCP_API_KEYS: KEYS, MCP_RPM: '0' });
});
afterAll(() => d.stop());

describe.each(['modern', 'legacy'] as const)('%s', (era) => {
  test.each(NAMES)('a method named %s is an unknown method', async (name) => {
    const c = new McpTestClient(d.url, { era, headers: AUTH });
    const r = await c.request(name);
    expect(r.body.error?.code).toBe(-32601);
    expect(r.status).toBe(era === 'modern' ? 404 : 200);
  });

  test.each(NAMES)('a tool named %s is an unknown tool', async (name) => {
    const c = new McpTestClient(d.url, { era, headers: AUTH });
    const r = await c.callTool(name, {});
    expect(r.status).toBe(200);
    expect(r.body.error?.code).toBe(-32602);
  });

  test.each(NAMES)('a prompt named %s is an unknown prompt', async (name) => {
    const c = new McpTestClient(d.url, { era, headers: AUTH });
    const r = await c.getPrompt(name);
    expect(r.status).toBe(200);
    expect(r.body.error?.code).toBe(-32602);
  });
});

/**
 * The answer to a request that names `name` where an ordinary unknown name (`base`) was named: the same
 * status and the same body, the name put back, the id left out.
 */
function normalized(r: McpResponse, name: string, base: string): { status: number; body: string } {
  const { id: _id, ...rest } = r.body as Record<string, unknown>;
  return { status: r.status, body: JSON.stringify(rest).split(JSON.stringify(name).slice(1, -1)).join(base) };
}
const plain = (r: McpResponse) => normalized(r, '', '');

/** A member named `__proto__` is refused by the parser wherever it appears (docs/middleware/parse.md). */
function expectForbiddenMember(r: McpResponse): void {
  expect(r.status).toBe(400);
  expect(r.body.error?.code).toBe(-32600);
  expect(r.body.error?.message).toBe('Member "__proto__" is not allowed');
}

describe.each(['modern', 'legacy'] as const)('%s, every other position against the demo', (era) => {
  const client = () => new McpTestClient(d.url, { era, headers: AUTH, autoParamHeaders: true });
  /** Send `make(name)` and `make(BASE)`: the answers must be the same but for the name. */
  const same = async (name: string, make: (c: McpTestClient, n: string) => Promise<McpResponse>) => {
    const c = client();
    const base = await make(c, BASE);
    const got = await make(c, name);
    expect(normalized(got, name, BASE)).toEqual(plain(base));
    return got;
  };

  test.each(NAMES)(
    'a resource URI named %s (bare and under docs://) is an unknown resource',
    async (name) => {
      const r = await same(name, (c, n) => c.readResource(n));
      expect(r.body.error?.code).toBe(era === 'modern' ? -32602 : -32002);
      await same(name, (c, n) => c.readResource(`docs://${n}`));
    },
  );

  test.each(NAMES)('a cursor %s is an invalid cursor on every list', async (name) => {
    for (const method of ['tools/list', 'resources/list', 'prompts/list']) {
      const r = await same(name, (c, n) => c.request(method, { cursor: n }));
      expect(r.body.error?.code).toBe(-32602);
    }
  });

  test.each(NAMES)('a completion ref or argument named %s is answered as an unknown one', async (name) => {
    const prompt = (n: string) => ({
      ref: { type: 'ref/prompt', name: n },
      argument: { name: 'topic', value: '' },
    });
    const arg = (n: string) => ({
      ref: { type: 'ref/prompt', name: 'summarize' },
      argument: { name: n, value: '' },
    });
    const res = (n: string) => ({ ref: { type: 'ref/resource', uri: n }, argument: { name: n, value: '' } });
    expect((await same(name, (c, n) => c.request('completion/complete', prompt(n)))).body.error?.code).toBe(
      -32602,
    );
    expect(
      (await same(name, (c, n) => c.request('completion/complete', arg(n)))).body.result?.completion,
    ).toEqual({ values: [] });
    expect((await same(name, (c, n) => c.request('completion/complete', res(n)))).body.error?.code).toBe(
      -32602,
    );
    const ctx = (n: string) => ({ ...arg('topic'), context: { arguments: { [n]: 'x' } } });
    if (name === '__proto__') expectForbiddenMember(await client().request('completion/complete', ctx(name)));
    else await same(name, (c, n) => c.request('completion/complete', ctx(n)));
  });

  test.each(NAMES)(
    'a _meta key, prompt argument or tool argument named %s is any other unknown member',
    async (name) => {
      const meta = (c: McpTestClient, n: string) => c.request('tools/list', {}, { meta: { [n]: 1 } });
      const promptArg = (c: McpTestClient, n: string) => c.getPrompt('summarize', { topic: 't', [n]: 'x' });
      const toolArg = (c: McpTestClient, n: string) =>
        c.callTool('region_status', { region: 'eu', [n]: 'x' });
      for (const make of [meta, promptArg, toolArg]) {
        if (name === '__proto__') expectForbiddenMember(await make(client(), name));
        else await same(name, make);
      }
      expect((await same('toString', meta)).body.result?.tools).toBeDefined();
    },
  );

  test.each(NAMES)('a _meta log level %s is an unknown log level', async (name) => {
    const r = await same(name, (c, n) =>
      c.request('tools/list', {}, { meta: { 'io.modelcontextprotocol/logLevel': n } }),
    );
    if (era === 'modern') expect(r.body.error?.code).toBe(-32602);
  });

  test.each(NAMES)('an Mcp-Param header named after %s is an unrecognized one: ignored', async (name) => {
    const r = await same(name, (c, n) =>
      c.callTool(
        'region_status',
        { region: 'eu' },
        { paramHeaders: { 'Mcp-Param-Region': 'eu', [`Mcp-Param-${n}`]: 'x' } },
      ),
    );
    expect(r.body.result?.structuredContent).toEqual({ region: 'eu', status: 'ok' });
  });
});

describe('API keys whose group is an Object.prototype member name', () => {
  const token = (i: number) => `group-token-${i}`;
  let g: RunningDemo;
  beforeAll(async () => {
    const keys = NAMES.map((n, i) => `g${i}:${sha(token(i))}:${n}`);
    g = await startDemo({ MCP_API_KEYS: [...keys, `base:${sha('base-token')}:${BASE}`].join(',') });
  });
  afterAll(() => g.stop());

  describe.each(['modern', 'legacy'] as const)('%s', (era) => {
    const as = (t: string) => new McpTestClient(g.url, { era, headers: { Authorization: `Bearer ${t}` } });
    test.each(NAMES.map((n, i) => [n, i] as const))(
      'a key in group %s sees what any group sees',
      async (_n, i) => {
        const base = as('base-token');
        const c = as(token(i));
        expect(plain(await c.listTools())).toEqual(plain(await base.listTools()));
        expect(plain(await c.callTool('admin_report', {}))).toEqual(
          plain(await base.callTool('admin_report', {})),
        );
        expect(plain(await c.callTool('hello', { who: 'x' }))).toEqual(
          plain(await base.callTool('hello', { who: 'x' })),
        );
      },
    );
  });
});

describe.each(PLATFORMS)(
  'resource templates, subscriptions, log levels and x-mcp-header paths on %s',
  (platform) => {
    const feed = new ChangeFeed();
    const res = resources({
      sources: [memoryResources([{ uri: 'mem://one', name: 'one', text: 'one' }])],
      templates: [
        {
          uriTemplate: 'mem://items/{id}',
          name: 'item',
          read: ({ id }) => ({ text: `item ${id}` }),
          complete: (variable, value) => (variable === 'id' ? [`${value}1`] : []),
        },
      ],
      changes: feed,
    });
    const pr = prompts({
      prompts: [
        {
          name: 'greet',
          arguments: [{ name: 'who', required: true }],
          template: 'Hello {{who}}',
          complete: (argument, value) => (argument === 'who' ? [`${value}1`] : []),
        },
      ],
    });
    const tools = new ToolRegistry();
    // One annotated property named after each Object.prototype member, each with its own header.
    const properties: Record<string, unknown> = Object.create(null);
    NAMES.forEach((n, i) => (properties[n] = { type: 'string', 'x-mcp-header': `P${i}` }));
    tools.register({
      name: 'paths',
      inputSchema: { type: 'object', properties: { ...properties } },
      call: (args) => ok({ keys: Object.keys(args ?? {}) }),
    });
    const mws = [
      parse(),
      classifyRevision(),
      checkHeaders({ paramHeaders: tools.paramHeaders }),
      dispatch({
        anonymous: true,
        handlers: {
          tools,
          resources: res,
          prompts: pr,
          completion: completion({ prompts: pr, resources: res }),
        },
        capabilities: {
          tools: {},
          resources: { subscribe: true },
          prompts: {},
          completions: {},
          logging: {},
        },
        serverInfo: { name: 't', version: '1' },
      }),
    ];
    let s: Stack;
    beforeAll(async () => {
      s = await stack(platform, mws);
    });
    afterAll(() => s.close());

    describe.each(['modern', 'legacy'] as const)('%s', (era) => {
      const same = async (name: string, make: (c: McpTestClient, n: string) => Promise<McpResponse>) => {
        const c = s.client({ era });
        const base = await make(c, BASE);
        const got = await make(c, name);
        expect(normalized(got, name, BASE)).toEqual(plain(base));
        return got;
      };

      test.each(NAMES)('a template variable %s is served as any other value', async (name) => {
        const r = await same(name, (c, n) => c.readResource(`mem://items/${encodeURIComponent(n)}`));
        expect(r.body.result?.contents?.[0]?.text).toBe(`item ${name}`);
      });

      test.each(NAMES)(
        'a completion of template or prompt argument %s is an unknown argument',
        async (name) => {
          const tmpl = (n: string) => ({
            ref: { type: 'ref/resource', uri: 'mem://items/{id}' },
            argument: { name: n, value: 'a' },
          });
          const prompt = (n: string) => ({
            ref: { type: 'ref/prompt', name: 'greet' },
            argument: { name: n, value: 'a' },
          });
          const uri = (n: string) => ({
            ref: { type: 'ref/resource', uri: n },
            argument: { name: 'id', value: 'a' },
          });
          await same(name, (c, n) => c.request('completion/complete', tmpl(n)));
          await same(name, (c, n) => c.request('completion/complete', prompt(n)));
          expect(
            (await same(name, (c, n) => c.request('completion/complete', uri(n)))).body.error?.code,
          ).toBe(-32602);
        },
      );

      test.each(NAMES)(
        'resources/subscribe and logging/setLevel with %s answer as for an unknown value',
        async (name) => {
          const sub = await same(name, (c, n) => c.request('resources/subscribe', { uri: n }));
          const level = await same(name, (c, n) => c.request('logging/setLevel', { level: n }));
          if (era === 'modern') {
            expect(sub.status).toBe(404);
            expect(level.status).toBe(404);
          } else expect(level.body.error?.code).toBe(-32602);
        },
      );

      test.each(NAMES)('a cursor %s is an invalid cursor on resources/templates/list', async (name) => {
        expect(
          (await same(name, (c, n) => c.request('resources/templates/list', { cursor: n }))).body.error?.code,
        ).toBe(-32602);
      });

      test.each(NAMES)(
        'an argument path %s needs its header only when the argument is there',
        async (name) => {
          const i = NAMES.indexOf(name);
          const none = await s.client({ era }).callTool('paths', {}, { paramHeaders: {} });
          expect(none.body.result?.structuredContent).toEqual({ keys: [] });
          if (name === '__proto__')
            return expectForbiddenMember(await s.client({ era }).callTool('paths', { [name]: 'v' }));
          const given = await s
            .client({ era })
            .callTool('paths', { [name]: 'v' }, { paramHeaders: { [`P${i}`]: 'x' } });
          if (era === 'modern') expect(given.body.error?.code).toBe(-32020);
          const ok2 = await s
            .client({ era })
            .callTool('paths', { [name]: 'v' }, { paramHeaders: { [`Mcp-Param-P${i}`]: 'v' } });
          expect(ok2.body.result?.structuredContent).toEqual({ keys: [name] });
        },
      );
    });
  },
);

describe.each(FLAVOURS)('OIDC claims named after Object.prototype members, on %s', (flavour) => {
  let issuer: TestIssuer;
  let h: Harness;
  beforeAll(async () => {
    issuer = await TestIssuer.start();
    h = await serve(
      flavour,
      oidcAuth({ issuer: issuer.url, audience: 'mcp', requiredRoles: ['admin'], logger: quiet }),
    );
  });
  afterAll(async () => {
    await h.close();
    await issuer.stop();
  });
  const post = async (claims: Record<string, unknown>) => {
    const token = await issuer.sign({ aud: 'mcp', ...claims });
    const r = await fetch(`${h.url}/mcp`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}` },
      body: '{}',
    });
    return { status: r.status, challenge: r.headers.get('www-authenticate'), body: await r.text() };
  };

  test.each(NAMES)(
    'roles, groups and realm roles of %s are roles like any other (forbidden without admin)',
    async (name) => {
      const base = await post({ sub: 'u', roles: [BASE], groups: [BASE], realm_access: { roles: [BASE] } });
      expect(base.status).toBe(403);
      expect(
        await post({ sub: 'u', roles: [name], groups: [name], realm_access: { roles: [name] } }),
      ).toEqual(base);
      expect(await post({ sub: 'u', groups: [`/${name}`] })).toEqual(base);
    },
  );

  test.each(NAMES)('a subject %s is a user id like any other', async (name) => {
    const r = await post({ sub: name, roles: ['admin', name] });
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body).principal).toMatchObject({ userId: name, roles: ['admin', name] });
  });
});
