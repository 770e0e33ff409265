/**
 * Every middleware's answer to an HTTP method it does not serve is JSON. Each middleware that serves POST only,
 * mounted alone on Express (5 and 4, with no handler of the app's after it), answers GET and DELETE (PUT only,
 * for limits() and redact(), which serve a session's GET stream and DELETE) with methodGuard()'s 405: `Allow: POST` and a JSON-RPC error without id, never Express's HTML 404 page. OPTIONS
 * goes on (a CORS preflight); dispatch() answers the same 405 and passes OPTIONS on, and a middleware mounted
 * after dispatch() passes on what dispatch() passed on and still logs its misorder. The
 * official SDK v1 client, against a stack without methodGuard(), learns from the 405 that there is no GET
 * stream, and reports no error.
 */
import http, { type Server } from 'node:http';
import express from 'express';
import express4 from 'express4';
import request from 'supertest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { checkHeaders } from '../../middleware/check-headers/index';
import { classifyRevision } from '../../middleware/classify-revision/index';
import { dispatch } from '../../middleware/dispatch/index';
import { limits } from '../../middleware/limits/index';
import { methodGuard } from '../../middleware/method-guard/index';
import { parse } from '../../middleware/parse/index';
import { redact } from '../../middleware/redact/index';
import { rejectBatch } from '../../middleware/reject-batch/index';
import { toolFilter } from '../../middleware/tool-filter/index';
import { ToolRegistry, ok } from '../../handlers/tools/index';
import type { Middleware } from '../../core/types';
import { jsonLogger } from '../support/json-logger';
import { close, listen } from '../support/dispatch-harness';

const quiet = { error() {}, warn() {} };
const SI = { name: 'post-only', version: '1.0.0' };
const tools = () =>
  new ToolRegistry({
    tools: [{ name: 'hello', inputSchema: { type: 'object' }, call: () => ok({ hello: 'world' }) }],
  });

/** Each middleware that serves POST only, by the name its refusals are recorded under. */
const POST_ONLY: [string, () => Middleware][] = [
  ['methodGuard', () => methodGuard()],
  ['rejectBatch', () => rejectBatch({ logger: quiet })],
  ['parse', () => parse({ logger: quiet })],
  ['limits', () => limits({ perUserRpm: 100, logger: quiet })],
  ['classifyRevision', () => classifyRevision({ logger: quiet })],
  ['checkHeaders', () => checkHeaders({ logger: quiet })],
  ['toolFilter', () => toolFilter({ allow: ['hello'] })],
  ['redact', () => redact()],
];

const EXPRESSES = [
  ['express5', express],
  ['express4', express4],
] as const;

/** An app with `mws` on `/mcp` and nothing else: what they pass on gets Express's own final answer. */
function alone(e: typeof express, mws: Middleware[]): Server {
  const app = e();
  app.use('/mcp', ...mws);
  return http.createServer(app);
}

/** `mw`, recording who refused the request (a refusal of another method is written before `mw` returns). */
function recording(mw: Middleware, seen: string[]): Middleware {
  return (req, res, next) => {
    mw(req, res, next);
    seen.push(req.locals?.refusal?.by ?? 'none');
  };
}

describe.each(EXPRESSES)('alone on %s', (_name, e) => {
  describe.each(POST_ONLY)('%s()', (by, make) => {
    let server: Server;
    const seen: string[] = [];
    beforeAll(() => {
      server = alone(e, [recording(make(), seen)]);
    });
    afterAll(() => close(server));

    // limits() and redact() serve a session's GET stream and DELETE as well (docs/middleware/sdk.md).
    const refused = by === 'limits' || by === 'redact' ? ['PUT'] : ['GET', 'DELETE', 'PUT'];
    test.each(refused)('%s: the JSON 405 methodGuard() gives, no id', async (method) => {
      const res = await request(server)[method.toLowerCase() as 'get' | 'delete' | 'put']('/mcp');
      expect(res.status).toBe(405);
      expect(res.headers.allow).toBe('POST');
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(JSON.parse(res.text)).toEqual({
        jsonrpc: '2.0',
        error: { code: -32600, message: 'Method not allowed: use POST' },
      });
      expect(seen.at(-1)).toBe(by);
    });
  });

  test('OPTIONS goes on past every POST-only middleware but methodGuard() (a CORS preflight)', async () => {
    const cors: Middleware = (req, res, next) => {
      if (req.method !== 'OPTIONS') return next();
      res.statusCode = 204;
      res.setHeader('Access-Control-Allow-Methods', 'POST');
      res.end();
    };
    const mws = POST_ONLY.filter(([by]) => by !== 'methodGuard').map(([, make]) => make());
    const server = alone(e, [...mws, cors]);
    try {
      const res = await request(server).options('/mcp');
      expect(res.status).toBe(204);
      expect(res.headers['access-control-allow-methods']).toBe('POST');
    } finally {
      await close(server);
    }
  });

  test("dispatch() answers other methods with the 405; the app's own route for GET goes before it", async () => {
    const app = e();
    app.get('/mcp/own', (_req, res) => {
      res.json({ app: 'own route' });
    });
    app.use(
      '/mcp',
      dispatch({ anonymous: true, handlers: { tools: tools() }, serverInfo: SI, logger: quiet }),
    );
    const server = http.createServer(app);
    try {
      const res = await request(server).get('/mcp');
      expect([res.status, res.headers.allow, res.body.error?.code]).toEqual([405, 'POST', -32600]);
      const own = await request(server).get('/mcp/own');
      expect([own.status, own.body]).toEqual([200, { app: 'own route' }]);
    } finally {
      await close(server);
    }
  });

  test('a middleware mounted after dispatch() passes on what dispatch() passed on, and logs its misorder once', async () => {
    const log = jsonLogger();
    const app = e();
    app.use(
      '/mcp',
      dispatch({ anonymous: true, handlers: { tools: tools() }, serverInfo: SI, logger: quiet }),
      classifyRevision({ logger: log.logger }),
      parse({ logger: quiet }),
    );
    app.options('/mcp', (_req, res) => {
      res.status(204).end();
    });
    const server = http.createServer(app);
    try {
      for (let i = 0; i < 2; i++) {
        const res = await request(server).options('/mcp');
        expect(res.status).toBe(204);
      }
      const told = log.records('classifyRevision:');
      expect(told).toHaveLength(1);
      expect(told[0]!.message).toMatch(/mounted after dispatch\(\)/);
    } finally {
      await close(server);
    }
  });
});

describe('the official SDK v1 client against a stack without methodGuard()', () => {
  let server: Server;
  let base: string;
  beforeAll(async () => {
    const app = express();
    app.use(
      '/mcp',
      rejectBatch({ logger: quiet }),
      parse({ logger: quiet }),
      classifyRevision({ logger: quiet }),
      checkHeaders({ logger: quiet }),
      redact(),
      dispatch({ anonymous: true, handlers: { tools: tools() }, serverInfo: SI, logger: quiet }),
    );
    server = http.createServer(app);
    base = await listen(server);
  });
  afterAll(() => close(server));

  test('gets 405 for its GET stream, takes it as "no stream", reports no error, and calls the tool', async () => {
    const errors: string[] = [];
    // The client opens its GET stream after `notifications/initialized`, without waiting for it: the test
    // waits for that GET's answer, then for the client to have handled it.
    const gets: Promise<Response>[] = [];
    const recordingFetch = (url: string | URL, init?: RequestInit): Promise<Response> => {
      const p = fetch(url, init);
      if (init?.method === 'GET') gets.push(p);
      return p;
    };
    const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { fetch: recordingFetch });
    const client = new Client({ name: 'post-only', version: '1.0.0' });
    client.onerror = (err) => errors.push(err.message);
    await client.connect(transport);
    try {
      const hello = (await client.callTool({ name: 'hello', arguments: {} })) as {
        structuredContent: unknown;
      };
      expect(hello.structuredContent).toEqual({ hello: 'world' });
      expect(gets).toHaveLength(1);
      const get = await gets[0]!;
      await new Promise((resolve) => setImmediate(resolve));
      expect(get.status).toBe(405);
      expect(get.headers.get('allow')).toBe('POST');
      expect(errors).toEqual([]);
    } finally {
      await client.close();
    }
  });
});
