/**
 * mcpEndpoint({ backend }): the recommended stack in front of a terminal middleware other than dispatch(), here
 * sdk() over the demo's tools written with the official SDK v2 (in-process, real): authentication, redaction
 * and the toolFilter section apply to its answers; readiness and close() drain it; the options are exclusive.
 */
import http from 'node:http';
import express from 'express';
import request from 'supertest';
import { hashKey } from '../../../middleware/api-key-auth/index';
import { mcpEndpoint, type McpEndpointOptions } from '../../../middleware/endpoint/index';
import { sdk } from '../../../middleware/sdk/index';
import { ToolRegistry, ok } from '../../../handlers/tools/index';
import { McpTestClient } from '../../../testing/index';
import { sdkDemoHandler } from '../../../examples/sdk-demo-tools';

const keys = [
  { userId: 'ann', hash: hashKey('ann-key'), groups: ['users'] },
  { userId: 'root', hash: hashKey('root-key'), groups: ['admin'] },
];
const ANN = { Authorization: 'Bearer ann-key' };
const ROOT = { Authorization: 'Bearer root-key' };
const quiet = { error() {}, warn() {} };

async function backendEndpoint(extra: Partial<McpEndpointOptions> = {}) {
  const handler = await sdkDemoHandler({ onError: () => {} });
  const backend = sdk({ handler });
  const endpoint = mcpEndpoint({
    auth: { apiKeys: keys },
    backend,
    toolFilter: { groups: { admin_report: ['admin'] } },
    logger: quiet,
    ...extra,
  });
  const app = express();
  app.get('/readyz', endpoint.readiness);
  app.use('/mcp', endpoint);
  const server = http.createServer(app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return {
    endpoint,
    base: `http://127.0.0.1:${port}`,
    client: (headers: Record<string, string>, era: 'modern' | 'legacy' = 'modern') =>
      new McpTestClient(`http://127.0.0.1:${port}/mcp`, { headers, era, autoParamHeaders: true }),
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      await endpoint.close({ deadlineMs: 0 });
      await handler.close();
    },
  };
}

describe('mcpEndpoint({ backend: sdk(...) })', () => {
  let e: Awaited<ReturnType<typeof backendEndpoint>>;
  beforeAll(async () => {
    e = await backendEndpoint();
  });
  afterAll(() => e.stop());

  test.each(['modern', 'legacy'] as const)('the stack applies to the backend (%s)', async (era) => {
    expect((await e.client({}, era).listTools()).status).toBe(401);
    const r = await e.client(ANN, era).callTool('customer', { id: 'c-1' });
    expect(r.status).toBe(200);
    expect(JSON.stringify(r.body)).not.toContain('4111 1111 1111 1111');
    expect(r.body.result.structuredContent.card).toBe('[masked:card]');
    const names = (await e.client(ANN, era).listTools()).body.result.tools.map(
      (t: { name: string }) => t.name,
    );
    expect(names).toContain('hello');
    expect(names).not.toContain('admin_report');
    expect((await e.client(ANN, era).callTool('admin_report', {})).body.error.code).toBe(-32602);
    const root = await e.client(ROOT, era).callTool('admin_report', {});
    expect(root.body.result.structuredContent).toMatchObject({ requestedBy: 'root' });
  });

  test('parts and stats name the backend, not a dispatcher', () => {
    expect(e.endpoint.parts.dispatch).toBeUndefined();
    expect(typeof e.endpoint.parts.backend).toBe('function');
    expect(typeof e.endpoint.parts.toolFilter).toBe('function');
    expect(e.endpoint.stats()).toMatchObject({ backend: { inFlight: 0 } });
    expect(e.endpoint.stats().dispatch).toBeUndefined();
  });
});

describe('close() drains the backend', () => {
  test('readiness 503, new requests 503, the request in flight answers, then the backend is closed', async () => {
    const e = await backendEndpoint();
    try {
      expect((await request(e.base).get('/readyz')).status).toBe(200);
      const slow = e.client(ANN).callTool('slow', { ms: 300 });
      // The call is in flight once the backend counts it.
      for (let i = 0; i < 200 && e.endpoint.stats().backend?.inFlight !== 1; i++) {
        await new Promise((r) => setTimeout(r, 5));
      }
      expect(e.endpoint.stats().backend?.inFlight).toBe(1);
      const closed = e.endpoint.close({ deadlineMs: 30_000 });
      const ready = await request(e.base).get('/readyz');
      expect(ready.status).toBe(503);
      expect(ready.body).toEqual({ status: 'draining' });
      const refused = await e.client(ANN).listTools();
      expect(refused.status).toBe(503);
      expect(refused.headers['retry-after']).toBe('1');
      const answered = await slow;
      expect(answered.body.result.structuredContent).toEqual({ slept: 300 });
      await closed;
    } finally {
      await e.stop();
    }
  });

  test("the backend's close() is called by the endpoint's", async () => {
    let closed = 0;
    const backend = Object.assign(
      (_req: unknown, res: http.ServerResponse) => {
        res.end('{}');
      },
      { close: async () => void closed++ },
    );
    const endpoint = mcpEndpoint({ auth: { apiKeys: keys }, backend, logger: quiet });
    await endpoint.close();
    await endpoint.close();
    expect(closed).toBe(1);
    await expect(endpoint.close({ deadline: 5 } as never)).rejects.toThrow(/unknown option "deadline"/);
  });
});

describe('backend options', () => {
  const backend = sdk({ handler: { fetch: async () => new Response(null, { status: 202 }) } });
  const tools = new ToolRegistry({ tools: [{ name: 'x', call: () => ok({}) }] });
  test.each([
    [
      'backend and handlers',
      { backend, handlers: { tools } },
      /option "backend" answers every request in place of dispatch\(\), so option "handlers"/,
    ],
    [
      'backend and dispatch',
      { backend, dispatch: { serverInfo: { name: 'x', version: '1' } } },
      /so option "dispatch" has nothing to configure/,
    ],
    ['a backend that is not a middleware', { backend: { fetch() {} } as never }, /option "backend"/],
    [
      'a backend close that is not a function',
      { backend: Object.assign(() => {}, { close: 1 }) as never },
      /backend.close/,
    ],
    ['neither backend nor dispatch', {}, /option "dispatch".*or a "backend"/],
    [
      'a misspelt toolFilter section',
      { backend, toolFilter: { group: {} } as never },
      /unknown option "group"/,
    ],
  ])('%s → TypeError', (_what, extra, message) => {
    const build = () =>
      mcpEndpoint({ auth: { apiKeys: keys }, logger: quiet, ...extra } as McpEndpointOptions);
    expect(build).toThrow(TypeError);
    expect(build).toThrow(message);
  });

  test('a misspelt backend names the known option', () => {
    expect(() => mcpEndpoint({ auth: { apiKeys: keys }, backnd: backend } as never)).toThrow(
      /unknown option "backnd"; did you mean "backend"\?/,
    );
  });
});
