/**
 * mcpEndpoint() on every host (bare node:http, Express 5, Express 4, Connect) gets right what a hand-assembled
 * stack in the wrong order gets wrong: redaction applies to what the dispatcher sends, an unauthenticated
 * caller gets 401 (never 429), and bad JSON or a large call is answered by parse() with a JSON-RPC error, not
 * by an app-wide express.json()'s HTML page, whether that parser is mounted after the endpoint or kept off the
 * MCP route as the endpoint page shows.
 */
import http, { type Server } from 'node:http';
import connect from 'connect';
import express from 'express';
import request from 'supertest';
import { apiKeyAuth, hashKey } from '../../middleware/api-key-auth/index';
import { dispatch } from '../../middleware/dispatch/index';
import { mcpEndpoint, type McpEndpointOptions } from '../../middleware/endpoint/index';
import { limits } from '../../middleware/limits/index';
import { parse } from '../../middleware/parse/index';
import { redact } from '../../middleware/redact/index';
import type { Middleware } from '../../core/types';
import { ToolRegistry, ok } from '../../handlers/tools/index';
import { McpTestClient } from '../../testing/index';
import { jsonLogger } from '../support/json-logger';
import { APP_HOSTS, HOSTS, type Host, expressOf, hostServer } from '../support/hosts';

const KEY = 'endpoint-key-0123456789abcdef';
const AUTH = { Authorization: `Bearer ${KEY}` };
const EMAIL = 'sam.carter@acme.com';
const CARD = '4111 1111 1111 1111';
const quiet = { error() {}, warn() {} };

function tools(): ToolRegistry {
  return new ToolRegistry({
    logger: quiet,
    tools: [
      {
        name: 'customer',
        inputSchema: { type: 'object', properties: { id: { type: 'string' } } },
        call: ({ id }) => ok({ id: String(id), email: EMAIL, card: CARD }),
      },
      {
        name: 'echo',
        inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
        call: ({ text }) => ok({ length: String(text).length }),
      },
    ],
  });
}

function options(extra: Partial<McpEndpointOptions> = {}): McpEndpointOptions {
  return {
    auth: { apiKeys: [{ userId: 'ci', hash: hashKey(KEY), groups: ['bots'] }] },
    handlers: { tools: tools() },
    dispatch: { serverInfo: { name: 'endpoint-test', version: '1.0.0' } },
    logger: quiet,
    ...extra,
  };
}

const jsonParser = express.json() as unknown as Middleware;
const MESSAGE = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });

/** A tools/call of `echo` whose text makes the body about `kb` KiB. */
function bigCall(c: McpTestClient, kb: number): string {
  return JSON.stringify({
    jsonrpc: '2.0',
    id: 5,
    method: 'tools/call',
    params: { name: 'echo', arguments: { text: 'x'.repeat(kb * 1024) }, _meta: c.envelope() },
  });
}
const callHeaders = (c: McpTestClient) => ({
  ...AUTH,
  'Content-Type': 'application/json',
  Accept: 'application/json, text/event-stream',
  'Mcp-Method': 'tools/call',
  'Mcp-Name': 'echo',
  'MCP-Protocol-Version': c.version,
});

const expectJsonRpcError = (r: request.Response, status: number, code: number) => {
  expect(r.status).toBe(status);
  expect(r.headers['content-type']).toMatch(/^application\/json/);
  expect(r.body).toMatchObject({ jsonrpc: '2.0', error: { code } });
};

describe.each(HOSTS)('mcpEndpoint() on %s', (host) => {
  let server: Server;
  let base: string;
  beforeAll(async () => {
    // An app-wide express.json() mounted after the endpoint, as apps often have one.
    server = hostServer(host, { mcp: [mcpEndpoint(options())], after: [jsonParser] });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });

  test('redaction applies to what the dispatcher sends', async () => {
    const r = await new McpTestClient(base, { headers: AUTH }).callTool('customer', { id: 'c1' });
    expect(r.status).toBe(200);
    const text = JSON.stringify(r.body.result);
    expect(text).not.toContain(EMAIL);
    expect(text).not.toContain(CARD);
    expect(r.body.result?.structuredContent).toMatchObject({ id: 'c1' });
  });

  test('an unauthenticated caller gets 401, however many times, and uses nobody’s rate', async () => {
    const limited = hostServer(host, { mcp: [mcpEndpoint(options({ limits: { perUserRpm: 2 } }))] });
    for (let i = 0; i < 4; i++) {
      const r = await request(limited).post('/mcp').set('Content-Type', 'application/json').send(MESSAGE);
      expectJsonRpcError(r, 401, 401);
    }
    const c = new McpTestClient(limited, { headers: AUTH });
    try {
      for (let i = 0; i < 2; i++) expect((await c.listTools()).status).toBe(200);
      expectJsonRpcError(
        await request(await c.url())
          .post('/mcp')
          .set(AUTH)
          .set('Content-Type', 'application/json')
          .send(MESSAGE),
        429,
        429,
      );
    } finally {
      await c.close();
    }
  });

  test('bad JSON is a JSON-RPC parse error, not an HTML page', async () => {
    const r = await request(base)
      .post('/mcp')
      .set(AUTH)
      .set('Content-Type', 'application/json')
      .send('{"a":');
    expectJsonRpcError(r, 400, -32700);
    expect(r.body).not.toHaveProperty('id');
  });

  test('a 200 KB call is served (past the default limit of express.json())', async () => {
    const c = new McpTestClient(base, { headers: AUTH });
    const r = await c.post(bigCall(c, 200), callHeaders(c));
    expect(r.status).toBe(200);
    expect(r.body.result?.structuredContent).toEqual({ length: 200 * 1024 });
  });

  test('a GET is 405 with a JSON-RPC error', async () => {
    const r = await request(base).get('/mcp');
    expectJsonRpcError(r, 405, -32600);
    expect(r.headers.allow).toBe('POST');
  });
});

describe('mcpEndpoint() as the whole node:http listener', () => {
  test('http.createServer(endpoint): POST served, GET 405, every path is the endpoint', async () => {
    const server = http.createServer(mcpEndpoint(options()));
    const c = new McpTestClient(server, { headers: AUTH });
    try {
      expect((await c.listTools()).status).toBe(200);
      expect((await request(await c.url()).get('/anything')).status).toBe(405);
    } finally {
      await c.close();
    }
  });

  test('a body past body.limit is 413 with a JSON-RPC error', async () => {
    const server = http.createServer(mcpEndpoint(options({ body: { limit: '64kb' } })));
    const c = new McpTestClient(server, { headers: AUTH });
    try {
      const r = await c.post(bigCall(c, 100), callHeaders(c));
      expect(r.status).toBe(413);
      expect(r.body.error?.code).toBe(-32600);
    } finally {
      await c.close();
    }
  });
});

/** An app with the endpoint on /mcp, express.json() kept off it in `way`, and a JSON route of its own. */
function guideApp(
  host: Exclude<Host, 'node:http'>,
  way: 'mounted first' | 'path filter',
  endpoint: Middleware,
) {
  const echo: Middleware = (req, res) => {
    res.setHeader('Content-Type', 'application/json');
    res.end(JSON.stringify({ body: (req as { body?: unknown }).body ?? null }));
  };
  if (host === 'connect') {
    const app = connect();
    app.use('/mcp', endpoint);
    app.use(jsonParser);
    app.use('/api/echo', echo);
    return http.createServer(app);
  }
  const app = expressOf(host)!();
  if (way === 'path filter') {
    // Every path but /mcp and below: the MCP route's body is left to parse().
    app.use(/^(?!\/mcp(?:\/|$))/, express.json());
    app.use('/mcp', endpoint);
  } else {
    app.use('/mcp', endpoint);
    app.use(express.json());
  }
  app.post('/api/echo', echo);
  return http.createServer(app);
}

const GUIDE: [Exclude<Host, 'node:http'>, 'mounted first' | 'path filter'][] = [
  ...APP_HOSTS.map((h) => [h, 'mounted first'] as [Exclude<Host, 'node:http'>, 'mounted first']),
  ['express5', 'path filter'],
  ['express4', 'path filter'],
];

describe.each(GUIDE)('keeping express.json() off the MCP route on %s: %s', (host, way) => {
  let server: Server;
  const log = jsonLogger();
  beforeAll(() => {
    server = guideApp(host, way, mcpEndpoint(options({ logger: log.logger })));
  });

  test('bad JSON to /mcp is a JSON-RPC parse error', async () => {
    const r = await request(server).post('/mcp').set(AUTH).set('Content-Type', 'application/json').send('{');
    expectJsonRpcError(r, 400, -32700);
  });

  test('a 200 KB call to /mcp is served, and parse() read it itself', async () => {
    const c = new McpTestClient(server, { headers: AUTH });
    try {
      const r = await c.post(bigCall(c, 200), callHeaders(c));
      expect(r.status).toBe(200);
    } finally {
      await c.close();
    }
    expect(log.records('parse:')).toEqual([]);
  });

  test('the rest of the app still gets its JSON bodies', async () => {
    const r = await request(server).post('/api/echo').set('Content-Type', 'application/json').send('{"a":1}');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ body: { a: 1 } });
  });
});

describe('hand-assembled in the wrong order (what the endpoint rules out)', () => {
  const keys = [{ userId: 'ci', hash: hashKey(KEY), groups: ['bots'] }];
  const serverInfo = { name: 'misordered', version: '1' };

  test('redact() after dispatch(): the e-mail and the card leave unmasked', async () => {
    const app = express();
    app.use(
      '/mcp',
      parse(),
      dispatch({ anonymous: true, handlers: { tools: tools() }, serverInfo }),
      redact(),
    );
    const c = new McpTestClient(app);
    try {
      const r = await c.callTool('customer', { id: 'c1' });
      expect(JSON.stringify(r.body.result)).toContain(EMAIL);
    } finally {
      await c.close();
    }
  });

  test('limits() before authentication: the third unauthenticated caller gets 429', async () => {
    const app = express();
    app.use('/mcp', limits({ perUserRpm: 2, logger: quiet }), apiKeyAuth({ keys, logger: quiet }));
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++)
      statuses.push(
        (await request(app).post('/mcp').set('Content-Type', 'application/json').send(MESSAGE)).status,
      );
    expect(statuses).toEqual([401, 401, 429]);
  });

  test('an app-wide express.json() before the stack: bad JSON gets its HTML page', async () => {
    const app = express();
    app.use(express.json());
    app.use('/mcp', mcpEndpoint(options()));
    const r = await request(app).post('/mcp').set(AUTH).set('Content-Type', 'application/json').send('{');
    expect(r.status).toBe(400);
    expect(r.headers['content-type']).toMatch(/^text\/html/);
  });
});
