/**
 * docs/troubleshooting.md says what a first-hour mistake is answered with: each case here sends that mistake
 * to the Quick start stack (mcpEndpoint, in Express) and checks the status, the code and the message, and that
 * the page quotes the same message.
 */
import { readFileSync } from 'node:fs';
import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import express from 'express';
import { hashKey, mcpEndpoint } from '../../index';
import { ToolRegistry, ok } from '../../handlers/tools/index';
import { dispatch } from '../../middleware/dispatch/index';
import type { Logger } from '../../core/types';

const PAGE = readFileSync(path.join(__dirname, '..', '..', 'docs', 'troubleshooting.md'), 'utf8');
const KEY = 'troubleshooting-key-0123456789';
const V = '2026-07-28';
const META = {
  'io.modelcontextprotocol/protocolVersion': V,
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 't', version: '1' },
};
const quiet: Logger = { error: () => undefined, warn: () => undefined };

let server: Server;
let port: number;
const warnings: string[] = [];

beforeAll(async () => {
  const app = express();
  server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  const tools = new ToolRegistry({
    logger: quiet,
    tools: [
      {
        name: 'weather',
        inputSchema: { type: 'object', properties: { region: { type: 'string', 'x-mcp-header': 'Region' } } },
        call: (a) => ok(a),
      },
    ],
  });
  const mcp = () =>
    mcpEndpoint({
      auth: { apiKeys: { keys: [{ userId: 'dev', hash: hashKey(KEY), groups: ['bots'] }], logger: quiet } },
      handlers: { tools },
      dispatch: { serverInfo: { name: 'first-hour', version: '1' } },
      origin: { allowedOrigins: [], allowedHosts: [`127.0.0.1:${port}`] },
      limits: { perUserRpm: 1000 },
      logger: { error: () => undefined, warn: (m: string) => void warnings.push(m) },
    });
  const withJson = express();
  withJson.use(express.json());
  withJson.use('/mcp', mcp());
  app.use('/json', withJson);
  app.use(
    '/no-auth',
    dispatch({ handlers: { tools }, serverInfo: { name: 'x', version: '1' }, logger: quiet }),
  );
  app.use('/mcp', mcp());
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

interface Case {
  method?: string;
  path?: string;
  headers?: Record<string, string | undefined>;
  body?: string;
}

function send(c: Case): Promise<{ status: number; body: { error?: { code: number; message: string } } }> {
  const headers: Record<string, string> = {
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
    'MCP-Protocol-Version': V,
    'Mcp-Method': 'tools/list',
    Authorization: `Bearer ${KEY}`,
  };
  for (const [k, v] of Object.entries(c.headers ?? {})) {
    if (v === undefined) delete headers[k];
    else headers[k] = v;
  }
  const body = c.method === 'GET' ? undefined : (c.body ?? message('tools/list'));
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, path: c.path ?? '/mcp', method: c.method ?? 'POST', headers },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode!, body: text ? JSON.parse(text) : {} }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

function message(method: string, params: Record<string, unknown> = {}): string {
  return JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: META } });
}

const call = message('tools/call', { name: 'weather', arguments: { region: 'eu' } });

test.each<[string, Case, number, number, string]>([
  ['no key', { headers: { Authorization: undefined } }, 401, 401, 'Authentication required'],
  ['a wrong key', { headers: { Authorization: 'Bearer nope' } }, 401, 401, 'Invalid token'],
  ['a Host not listed', { headers: { Host: `localhost:${0}` } }, 403, 403, 'Host not allowed'],
  ['an Origin not listed', { headers: { Origin: 'http://evil.example' } }, 403, 403, 'Origin not allowed'],
  ['a GET', { method: 'GET' }, 405, -32600, 'Method not allowed: use POST'],
  [
    'text/plain',
    { headers: { 'Content-Type': 'text/plain' } },
    415,
    -32600,
    'Content-Type must be application/json',
  ],
  ['bad JSON', { body: '{"jsonrpc":' }, 400, -32700, 'Parse error'],
  [
    'a batch',
    { body: `[${message('tools/list')}]` },
    400,
    -32600,
    'JSON-RPC batch requests are not supported',
  ],
  [
    'no MCP-Protocol-Version',
    { headers: { 'MCP-Protocol-Version': undefined } },
    400,
    -32020,
    'MCP-Protocol-Version header is missing (required on every request)',
  ],
  [
    'a version header that differs from _meta',
    { headers: { 'MCP-Protocol-Version': '2025-06-18' } },
    400,
    -32020,
    'does not match _meta protocol version',
  ],
  [
    'no _meta envelope',
    { body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }) },
    400,
    -32602,
    'Request is missing params._meta["io.modelcontextprotocol/protocolVersion"]',
  ],
  [
    'Mcp-Method mismatch',
    { headers: { 'Mcp-Method': 'tools/call' } },
    400,
    -32020,
    'does not match the body method',
  ],
  [
    'no Mcp-Method',
    { headers: { 'Mcp-Method': undefined } },
    400,
    -32020,
    'Mcp-Method header is missing (required on every request)',
  ],
  [
    'no Mcp-Name',
    { body: call, headers: { 'Mcp-Method': 'tools/call', 'Mcp-Param-Region': 'eu' } },
    400,
    -32020,
    'Mcp-Name header is missing (required for tools/call)',
  ],
  [
    'no Mcp-Param-Region',
    { body: call, headers: { 'Mcp-Method': 'tools/call', 'Mcp-Name': 'weather' } },
    400,
    -32020,
    'Mcp-Param-',
  ],
  [
    'a modern ping',
    { body: message('ping'), headers: { 'Mcp-Method': 'ping' } },
    404,
    -32601,
    'Removed in protocol revision 2026-07-28',
  ],
  [
    'an unknown tool',
    {
      body: message('tools/call', { name: 'nope' }),
      headers: { 'Mcp-Method': 'tools/call', 'Mcp-Name': 'nope' },
    },
    200,
    -32602,
    'Unknown tool: "',
  ],
  [
    'dispatch() without auth',
    { path: '/no-auth' },
    500,
    -32603,
    'Server misconfiguration: the request was not authenticated',
  ],
])('%s: the answer the page gives', async (_name, c, status, code, text) => {
  const headers = { ...c.headers };
  if (headers.Host !== undefined) headers.Host = `localhost:${port}`;
  const res = await send({ ...c, headers });
  expect(res.status).toBe(status);
  expect(res.body.error?.code).toBe(code);
  expect(JSON.stringify(res.body.error)).toContain(JSON.stringify(text).slice(1, -1));
  expect(PAGE).toContain(text);
  expect(PAGE).toContain(`${status}`);
});

test('express.json() before the MCP route: parse() says so, and the page quotes it', async () => {
  warnings.length = 0;
  expect((await send({ path: '/json/mcp' })).status).toBe(200);
  const said = 'parse: the request body was already read by another body parser';
  expect(warnings.some((w) => w.startsWith(said))).toBe(true);
  expect(PAGE).toContain(said);
});
