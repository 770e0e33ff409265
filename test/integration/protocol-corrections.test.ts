/**
 * Small protocol corrections, compared request by request with the official SDK v2: an empty method is an
 * unknown method, `arguments: null` is invalid params, and an empty `_meta` protocol version is a version (no
 * server supports it). Over HTTP against the demo's full stack.
 */
import { createHash } from 'node:crypto';
import { McpTestClient } from '../../testing/index';
import { checkHeaders, classifyRevision, dispatch, ok, parse, ToolRegistry } from '../../index';
import type { JsonObject } from '../../lib/jsonrpc';
import { startDemo, type RunningDemo } from '../support/demo';
import { PLATFORMS, stack, type Stack } from '../support/dispatch-harness';

const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const KEYS = `demo:sha256:${sha('demo-token')}:users`;
const AUTH = { Authorization: 'Bearer demo-token' };

let d: RunningDemo;
beforeAll(async () => {
  d = await startDemo({ MCP_API_KEYS: KEYS });
});
afterAll(() => d.stop());

describe.each(['modern', 'legacy'] as const)('%s', (era) => {
  test('"method": "" is an unknown method', async () => {
    const c = new McpTestClient(d.url, { era, headers: AUTH });
    const r = await c.request('');
    expect(r.body.error?.code).toBe(-32601);
    expect(r.status).toBe(era === 'modern' ? 404 : 200);
  });

  test('tools/call with "arguments": null is invalid params', async () => {
    const c = new McpTestClient(d.url, { era, headers: AUTH });
    const r = await c.request('tools/call', { name: 'hello', arguments: null });
    expect(r.status).toBe(200);
    expect(r.body.error?.code).toBe(-32602);
  });
});

describe('an empty protocol version in _meta', () => {
  const body = (c: McpTestClient) => {
    const env = c.envelope() as Record<string, unknown>;
    return JSON.stringify({
      jsonrpc: '2.0',
      id: 9,
      method: 'tools/list',
      params: { _meta: { ...env, 'io.modelcontextprotocol/protocolVersion': '' } },
    });
  };
  const headers = (version: string) => ({
    ...AUTH,
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
    'Mcp-Method': 'tools/list',
    'MCP-Protocol-Version': version,
  });

  test('is an unsupported version (400 -32022 with supported) when the header says the same', async () => {
    const c = new McpTestClient(d.url, { era: 'modern', headers: AUTH });
    const r = await c.post(body(c), headers(''));
    expect(r.status).toBe(400);
    expect(r.body.error?.code).toBe(-32022);
    expect(r.body.error?.data).toMatchObject({ requested: '' });
    expect(r.body.error?.data?.supported).toEqual(expect.arrayContaining(['2026-07-28']));
  });

  test('differs from a header that names a revision: 400 -32020, the equality check first', async () => {
    const c = new McpTestClient(d.url, { era: 'modern', headers: AUTH });
    const r = await c.post(body(c), headers('2026-07-28'));
    expect(r.status).toBe(400);
    expect(r.body.error?.code).toBe(-32020);
  });
});

describe('Mcp-Param-* headers compare with the canonical string form of each JSON type', () => {
  const tools = new ToolRegistry();
  tools.register({
    name: 'mirrored',
    inputSchema: {
      type: 'object',
      properties: {
        label: { type: 'string', 'x-mcp-header': 'Label' },
        count: { type: 'integer', 'x-mcp-header': 'Count' },
        dry: { type: 'boolean', 'x-mcp-header': 'Dry-Run' },
      },
      additionalProperties: false,
    },
    call: (args) => ok({ args }),
  });
  const mws = [
    parse(),
    classifyRevision(),
    checkHeaders({ paramHeaders: tools.paramHeaders }),
    dispatch({ anonymous: true, handlers: { tools }, serverInfo: { name: 't', version: '1' } }),
  ];
  type Row = [string, JsonObject, Record<string, string>];

  describe.each(PLATFORMS)('%s', (platform) => {
    let s: Stack;
    beforeAll(async () => {
      s = await stack(platform, mws);
    });
    afterAll(() => s.close());
    const call = (args: JsonObject, paramHeaders: Record<string, string>) =>
      s.client({ era: 'modern' }).callTool('mirrored', args, { paramHeaders });

    test.each<Row>([
      ['count: 5 with Mcp-Param-Count: 5', { count: 5 }, { 'Mcp-Param-Count': '5' }],
      ['count: -12 with Mcp-Param-Count: -12', { count: -12 }, { 'Mcp-Param-Count': '-12' }],
      ['count: 42 with Mcp-Param-Count: 42.0 (numerically)', { count: 42 }, { 'Mcp-Param-Count': '42.0' }],
      ['dry: true with Mcp-Param-Dry-Run: true', { dry: true }, { 'Mcp-Param-Dry-Run': 'true' }],
      ['dry: false with Mcp-Param-Dry-Run: false', { dry: false }, { 'Mcp-Param-Dry-Run': 'false' }],
      [
        'count and dry Base64-encoded',
        { count: 5, dry: true },
        { 'Mcp-Param-Count': '=?base64?NQ==?=', 'Mcp-Param-Dry-Run': '=?base64?dHJ1ZQ==?=' },
      ],
    ])('%s is served', async (_label, args, headers) => {
      const r = await call(args, headers);
      expect(r.status).toBe(200);
      expect(r.body.result?.structuredContent).toEqual({ args });
    });

    // The header mirrors the value it was sent with: the type the schema wants is the arguments' check.
    test.each<Row>([
      ['label: 5 with Mcp-Param-Label: 5', { label: 5 }, { 'Mcp-Param-Label': '5' }],
      ['label: 1.5 with Mcp-Param-Label: 1.5', { label: 1.5 }, { 'Mcp-Param-Label': '1.5' }],
      ['label: true with Mcp-Param-Label: true', { label: true }, { 'Mcp-Param-Label': 'true' }],
      ['count: 1.5 with Mcp-Param-Count: 1.5', { count: 1.5 }, { 'Mcp-Param-Count': '1.5' }],
      ['count: "5" with Mcp-Param-Count: 5', { count: '5' }, { 'Mcp-Param-Count': '5' }],
      ['dry: "true" with Mcp-Param-Dry-Run: true', { dry: 'true' }, { 'Mcp-Param-Dry-Run': 'true' }],
    ])('%s matches; the wrong type is invalid arguments', async (_label, args, headers) => {
      const r = await call(args, headers);
      expect(r.status).toBe(200);
      expect(r.body.error).toBeUndefined();
      expect(r.body.result?.isError).toBe(true);
    });

    test.each<Row>([
      ['count: 5 with Mcp-Param-Count: 6', { count: 5 }, { 'Mcp-Param-Count': '6' }],
      ['count: 5 with Mcp-Param-Count: five', { count: 5 }, { 'Mcp-Param-Count': 'five' }],
      ['label: 5 with Mcp-Param-Label: 6', { label: 5 }, { 'Mcp-Param-Label': '6' }],
      ['label: 1.5 with Mcp-Param-Label: 2.5', { label: 1.5 }, { 'Mcp-Param-Label': '2.5' }],
      ['label: true with Mcp-Param-Label: True', { label: true }, { 'Mcp-Param-Label': 'True' }],
      ['dry: true with Mcp-Param-Dry-Run: false', { dry: true }, { 'Mcp-Param-Dry-Run': 'false' }],
      ['dry: true with Mcp-Param-Dry-Run: TRUE', { dry: true }, { 'Mcp-Param-Dry-Run': 'TRUE' }],
      ['dry: false with Mcp-Param-Dry-Run: 0', { dry: false }, { 'Mcp-Param-Dry-Run': '0' }],
      ['label: {} with Mcp-Param-Label: {}', { label: {} }, { 'Mcp-Param-Label': '{}' }],
    ])('%s is refused 400 -32020', async (_label, args, headers) => {
      const r = await call(args, headers);
      expect(r.status).toBe(400);
      expect(r.body.error?.code).toBe(-32020);
    });
  });

  test('the demo: region_status with region: 5 and Mcp-Param-Region: 5 is invalid arguments', async () => {
    const c = new McpTestClient(d.url, { era: 'modern', headers: AUTH });
    const r = await c.callTool('region_status', { region: 5 }, { paramHeaders: { 'Mcp-Param-Region': '5' } });
    expect(r.status).toBe(200);
    expect(r.body.result?.isError).toBe(true);
  });
});
