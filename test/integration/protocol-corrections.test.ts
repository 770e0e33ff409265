/**
 * Small protocol corrections, compared request by request with the official SDK v2: an empty method is an
 * unknown method, and `arguments: null` is invalid params. Over HTTP against the demo's full stack.
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
