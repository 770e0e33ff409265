/**
 * Strings from the request are data: a method, tool or prompt named after an `Object.prototype` member
 * (`constructor`, `__proto__`, `toString`, …) is answered as any other unknown name, in both eras, over HTTP
 * against the demo's full stack.
 */
import { createHash } from 'node:crypto';
import { McpTestClient } from '../../testing/index';
import { startDemo, type RunningDemo } from '../support/demo';

const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const KEYS = `demo:sha256:${sha('demo-token')}:users`;
const AUTH = { Authorization: 'Bearer demo-token' };
const NAMES = Object.getOwnPropertyNames(Object.prototype);

let d: RunningDemo;
beforeAll(async () => {
  d = await startDemo({ MCP_API_KEYS: KEYS });
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
