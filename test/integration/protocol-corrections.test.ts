/**
 * Small protocol corrections, compared request by request with the official SDK v2: an empty method is an
 * unknown method, `arguments: null` is invalid params, and an empty `_meta` protocol version is a version (no
 * server supports it). Over HTTP against the demo's full stack.
 */
import { createHash } from 'node:crypto';
import { McpTestClient } from '../../testing/index';
import { startDemo, type RunningDemo } from '../support/demo';

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
