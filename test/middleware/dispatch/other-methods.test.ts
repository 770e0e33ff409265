/**
 * dispatch() mounted alone answers an HTTP method it does not serve as every POST-only middleware does: 405,
 * `Allow: POST` and a JSON-RPC error without id, on bare node:http and in Express (5 and 4), never the host's
 * HTML 404. OPTIONS (a CORS preflight) goes on, to the CORS middleware after it. The official SDK v1 client,
 * connected to a dispatch-only app, opens its session's GET stream (a legacy session's stream, see
 * test/integration/legacy-notify.test.ts), reports no error and lists the tools.
 */
import http, { type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import express from 'express';
import express4 from 'express4';
import request from 'supertest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { dispatch } from '../../../middleware/dispatch/index';
import { ToolRegistry, ok } from '../../../handlers/tools/index';
import type { Middleware } from '../../../core/types';
import { close, listen } from '../../support/dispatch-harness';

const quiet = { error() {}, warn() {} };
const SI = { name: 'dispatch-alone', version: '1.0.0' };
const onlyDispatch = (): Middleware =>
  dispatch({
    anonymous: true,
    handlers: {
      tools: new ToolRegistry({
        tools: [{ name: 'hello', inputSchema: { type: 'object' }, call: () => ok({ hello: 'world' }) }],
      }),
    },
    serverInfo: SI,
    logger: quiet,
  });

/** A CORS stand-in: answers OPTIONS, passes anything else on. */
const cors: Middleware = (req, res, next) => {
  if (req.method !== 'OPTIONS') return next();
  res.statusCode = 204;
  res.setHeader('Access-Control-Allow-Methods', 'POST');
  res.end();
};

/** Bare node:http: `mws` in order, and what falls off the end gets node's plain 404. */
function bare(mws: Middleware[]): Server {
  return http.createServer((req: IncomingMessage, res: ServerResponse) => {
    let i = 0;
    const next = (): void => {
      const mw = mws[i++];
      if (!mw) {
        res.statusCode = 404;
        res.end('Not Found');
        return;
      }
      mw(req, res, next);
    };
    next();
  });
}

/** Express (5 or 4): `mws` on `/mcp`, nothing else: what they pass on gets Express's HTML 404. */
function inExpress(e: typeof express, mws: Middleware[]): Server {
  const app = e();
  app.use('/mcp', ...mws);
  return http.createServer(app);
}

const HOSTS: [string, (mws: Middleware[]) => Server][] = [
  ['node:http', bare],
  ['express5', (mws) => inExpress(express, mws)],
  ['express4', (mws) => inExpress(express4 as unknown as typeof express, mws)],
];

describe.each(HOSTS)('dispatch() alone on %s', (_name, host) => {
  let server: Server;
  beforeAll(() => {
    server = host([onlyDispatch(), cors]);
  });
  afterAll(() => close(server));

  test.each(['GET', 'DELETE', 'PUT', 'HEAD'])(
    '%s: 405, Allow: POST, a JSON-RPC error without id',
    async (m) => {
      const res = await request(server)[m.toLowerCase() as 'get' | 'delete' | 'put' | 'head']('/mcp');
      expect(res.status).toBe(405);
      expect(res.headers.allow).toBe('POST');
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      if (m !== 'HEAD')
        expect(JSON.parse(res.text)).toEqual({
          jsonrpc: '2.0',
          error: { code: -32600, message: 'Method not allowed: use POST' },
        });
    },
  );

  test('OPTIONS goes on, to the CORS middleware after it', async () => {
    const res = await request(server).options('/mcp');
    expect(res.status).toBe(204);
    expect(res.headers['access-control-allow-methods']).toBe('POST');
  });

  test('POST is still served', async () => {
    const res = await request(server)
      .post('/mcp')
      .set('Content-Type', 'application/json')
      .set('Accept', 'application/json, text/event-stream')
      .send({ jsonrpc: '2.0', id: 7, method: 'tools/list', params: {} });
    expect(res.status).toBe(200);
    expect(res.body.id).toBe(7);
    expect(res.body.result.tools.map((t: { name: string }) => t.name)).toEqual(['hello']);
  });
});

describe.each(HOSTS)('the official SDK v1 client against dispatch() alone on %s', (_name, host) => {
  let server: Server;
  let base: string;
  beforeAll(async () => {
    server = host([onlyDispatch()]);
    base = await listen(server);
  });
  afterAll(() => close(server));

  test('connects, lists the tools, and reports no "Failed to open SSE stream" error', async () => {
    const errors: string[] = [];
    // The client opens its GET stream after `notifications/initialized` without waiting for it: the test waits
    // for that GET's answer, then for the client to have handled it.
    const gets: Promise<Response>[] = [];
    const recordingFetch = (url: string | URL, init?: RequestInit): Promise<Response> => {
      const p = fetch(url, init);
      if (init?.method === 'GET') gets.push(p);
      return p;
    };
    const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { fetch: recordingFetch });
    const client = new Client({ name: 'dispatch-alone', version: '1.0.0' });
    client.onerror = (err) => errors.push(err.message);
    await client.connect(transport);
    try {
      const listed = await client.listTools();
      expect(listed.tools.map((t) => t.name)).toEqual(['hello']);
      expect(gets).toHaveLength(1);
      const get = await gets[0]!;
      await new Promise((resolve) => setImmediate(resolve));
      expect(errors).toEqual([]);
      // The GET carries the session minted at initialize: its stream opens.
      expect(get.status).toBe(200);
    } finally {
      await client.close();
    }
  });
});
