/**
 * McpTestClient sends exactly the requests the test asks for (no tools/list of its own before a tool call, so
 * a limit counts what the test counts), its ping() is answered in both eras, and a server it started never keeps
 * the process alive when a test fails before close().
 */
import { execFile } from 'node:child_process';
import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import {
  apiKeyAuth,
  checkHeaders,
  classifyRevision,
  compose,
  dispatch,
  hashKey,
  limits,
  parse,
} from '../../index';
import { ToolRegistry, ok } from '../../handlers/tools/index';
import { McpTestClient } from '../../testing/index';

const KEY = 'client-requests-key-0123456789';

function tools(): ToolRegistry {
  return new ToolRegistry({
    tools: [
      { name: 'echo', call: () => ok({}) },
      {
        name: 'weather',
        inputSchema: { type: 'object', properties: { region: { type: 'string', 'x-mcp-header': 'Region' } } },
        call: (a) => ok(a),
      },
    ],
  });
}

async function listening(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function stop(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

describe('McpTestClient sends only the requests the test asks for', () => {
  let server: Server;
  let base: string;
  const methods: string[] = [];
  beforeAll(async () => {
    const registry = tools();
    server = http.createServer(
      compose([
        apiKeyAuth({
          keys: [
            { userId: 'alice', hash: hashKey(KEY), groups: ['users'] },
            { userId: 'carol', hash: hashKey(`${KEY}-3`), groups: ['users'] },
          ],
        }),
        parse(),
        (req, _res, next) => {
          methods.push(String(req.locals!.mcp!.message.raw.method));
          next();
        },
        limits({ perUserRpm: 3 }),
        classifyRevision(),
        checkHeaders({ paramHeaders: registry.paramHeaders }),
        dispatch({ handlers: { tools: registry }, serverInfo: { name: 'counted', version: '1' } }),
      ]),
    );
    base = await listening(server);
  });
  afterAll(() => stop(server));
  beforeEach(() => {
    methods.length = 0;
  });

  test('a limit of 3 requests a minute refuses the 4th tool call, not the 3rd', async () => {
    const c = new McpTestClient(base, { headers: { Authorization: `Bearer ${KEY}` } });
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await c.callTool('echo')).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    expect(methods).toEqual(['tools/call', 'tools/call', 'tools/call', 'tools/call']);
  });

  test('Mcp-Param-* headers come from a tools/list the test sent, or from the call', async () => {
    const key = `${KEY}-2`;
    const registry = tools();
    const app = compose([
      apiKeyAuth({ keys: [{ userId: 'bob', hash: hashKey(key), groups: ['users'] }] }),
      parse(),
      (req, _res, next) => {
        methods.push(
          `${String(req.locals!.mcp!.message.raw.method)} ${req.headers['mcp-param-region'] ?? '-'}`,
        );
        next();
      },
      classifyRevision(),
      checkHeaders({ paramHeaders: registry.paramHeaders }),
      dispatch({ handlers: { tools: registry }, serverInfo: { name: 'p', version: '1' } }),
    ]);
    const c = new McpTestClient(app, { headers: { Authorization: `Bearer ${key}` } });
    try {
      // Not listed yet: no header, and the server says which one is missing.
      const missing = await c.callTool('weather', { region: 'eu' });
      expect(missing.status).toBe(400);
      expect(missing.body.error.code).toBe(-32020);
      expect(
        (await c.callTool('weather', { region: 'eu' }, { paramHeaders: { 'Mcp-Param-Region': 'eu' } }))
          .status,
      ).toBe(200);
      expect((await c.listTools()).status).toBe(200);
      expect((await c.callTool('weather', { region: 'us' })).status).toBe(200);
      expect(methods).toEqual(['tools/call -', 'tools/call eu', 'tools/list -', 'tools/call us']);
    } finally {
      await c.close();
    }
  });

  test('autoParamHeaders: true fetches tools/list once, on its own, before the first tools/call', async () => {
    const c = new McpTestClient(base, {
      headers: { Authorization: `Bearer ${KEY}-3` },
      autoParamHeaders: true,
    });
    expect((await c.callTool('weather', { region: 'eu' })).status).toBe(200);
    await c.callTool('weather', { region: 'us' });
    expect(methods).toEqual(['tools/list', 'tools/call', 'tools/call']);
  });
});

describe('McpTestClient.ping() in each era', () => {
  let server: Server;
  let base: string;
  const methods: string[] = [];
  beforeAll(async () => {
    server = http.createServer(
      compose([
        parse(),
        (req, _res, next) => {
          methods.push(String(req.locals!.mcp!.message.raw.method));
          next();
        },
        classifyRevision(),
        checkHeaders(),
        dispatch({ anonymous: true, handlers: {}, serverInfo: { name: 'pinged', version: '1' } }),
      ]),
    );
    base = await listening(server);
  });
  afterAll(() => stop(server));

  test('modern: server/discover (ping was removed in 2026-07-28), answered 200', async () => {
    methods.length = 0;
    const res = await new McpTestClient(base).ping();
    expect(res.status).toBe(200);
    expect(methods).toEqual(['server/discover']);
    // A modern ping on purpose is still possible, and refused as the spec says.
    expect((await new McpTestClient(base).request('ping')).status).toBe(404);
  });

  test('legacy: ping, answered 200', async () => {
    methods.length = 0;
    const res = await new McpTestClient(base, { era: 'legacy', autoInitialize: false }).ping();
    expect(res.status).toBe(200);
    expect(methods).toEqual(['ping']);
  });
});

describe('a test that never calls close()', () => {
  test('leaves nothing that keeps the process alive (an app, a server not yet listening)', async () => {
    const root = path.join(__dirname, '..', '..');
    const script = `
      const http = require('node:http');
      const { McpTestClient } = require(${JSON.stringify(path.join(root, 'testing', 'index.ts'))});
      const answer = (_req, res) => { res.setHeader('content-type', 'application/json'); res.end('{"jsonrpc":"2.0","id":1,"result":{}}'); };
      (async () => {
        const a = new McpTestClient(answer);
        const b = new McpTestClient(http.createServer(answer));
        console.log((await a.ping()).status, (await b.ping()).status);
        // No close(): the process must still end on its own.
      })();
    `;
    const result = await new Promise<{ code: number | null; out: string }>((resolve) => {
      const child = execFile(
        process.execPath,
        [path.join(root, 'node_modules', 'tsx', 'dist', 'cli.mjs'), '-e', script],
        { cwd: root, timeout: 40_000, killSignal: 'SIGKILL' },
        (error, stdout) =>
          resolve({ code: error ? ((error.code as number | null) ?? null) : 0, out: stdout }),
      );
      child.stdin?.end();
    });
    expect(result).toEqual({ code: 0, out: '200 200\n' });
  }, 60_000);
});
