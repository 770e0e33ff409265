/**
 * A tool hidden from a caller must look exactly like an unknown tool, even when the call's Mcp-Param-* headers
 * are wrong: checkHeaders() leaves tools of per-caller visibility to the registry, which checks the headers
 * only once the tool is known to be visible.
 */
import type { Middleware } from '../../../core/types';
import { checkHeaders } from '../../../middleware/check-headers/index';
import { dispatch } from '../../../middleware/dispatch/index';
import { ToolRegistry, ok } from '../../../handlers/tools/index';
import { McpTestClient } from '../../../testing/client';
import { PLATFORMS, type Stack, stack } from '../../support/dispatch-harness';

const asUser: Middleware = (req, _res, next) => {
  const admin = req.headers['x-test-user'] === 'admin';
  (req.locals ??= {}).principal = {
    userId: admin ? 'root' : 'u',
    groups: admin ? ['admin'] : [],
    roles: [],
    method: 'test',
  };
  next();
};

const tools = new ToolRegistry({
  tools: [
    {
      name: 'secret',
      inputSchema: { type: 'object', properties: { region: { type: 'string', 'x-mcp-header': 'Region' } } },
      describe: (ctx) => (ctx.principal?.groups.includes('admin') ? {} : undefined),
      call: ({ region }) => ok({ region }),
    },
    {
      name: 'open',
      inputSchema: { type: 'object', properties: { region: { type: 'string', 'x-mcp-header': 'Region' } } },
      call: ({ region }) => ok({ region }),
    },
  ],
});

describe.each(PLATFORMS)('hidden tools and Mcp-Param-* on %s', (platform) => {
  let s: Stack;
  beforeAll(async () => {
    s = await stack(platform, [
      asUser,
      checkHeaders({ paramHeaders: tools.paramHeaders }),
      dispatch({ anonymous: true, handlers: { tools }, serverInfo: { name: 'h', version: '1' } }),
    ]);
  });
  afterAll(() => s.close());
  const schema = { type: 'object', properties: { region: { type: 'string', 'x-mcp-header': 'Region' } } };
  const client = (user: string) =>
    new McpTestClient(`${s.base}/mcp`, { headers: { 'x-test-user': user }, autoParamHeaders: false });

  test('a hidden tool with a wrong header answers like an unknown tool', async () => {
    const hidden = await client('u').callTool(
      'secret',
      { region: 'eu' },
      { paramHeaders: { 'Mcp-Param-Region': 'us' } },
    );
    const unknown = await client('u').callTool(
      'nope',
      { region: 'eu' },
      { paramHeaders: { 'Mcp-Param-Region': 'us' } },
    );
    expect(hidden.status).toBe(unknown.status);
    expect(hidden.body.error.code).toBe(-32602);
    expect(hidden.body.error.data).toEqual({ ...unknown.body.error.data, tool: 'secret' });
  });

  test('visible to the admin, the same wrong header is a 400 / -32020; the right one passes', async () => {
    const bad = await client('admin').callTool(
      'secret',
      { region: 'eu' },
      { paramHeaders: { 'Mcp-Param-Region': 'us' } },
    );
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe(-32020);
    const missing = await client('admin').callTool('secret', { region: 'eu' }, { paramHeaders: {} });
    expect(missing.status).toBe(400);
    const good = await client('admin').callTool('secret', { region: 'eu' }, { inputSchema: schema });
    expect(good.status).toBe(200);
    expect(good.body.result.structuredContent).toEqual({ region: 'eu' });
  });

  test('statically visible tools are still checked by checkHeaders()', async () => {
    const bad = await client('u').callTool('open', { region: 'eu' }, { paramHeaders: {} });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe(-32020);
  });
});
