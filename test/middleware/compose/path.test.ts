/**
 * compose() on a path: with `path`, the chain answers that path only, and every other request goes on to the
 * host's next() (Express 4 and 5, Connect) or gets 404 (bare node:http), whether compose() is the whole app or
 * one layer. Connect mounts one function per app.use(), so the stack goes in as one compose().
 */
import connect from 'connect';
import express from 'express';
import express4 from 'express4';
import http, { type RequestListener } from 'node:http';
import request from 'supertest';
import { compose } from '../../../middleware/compose/index';
import { dispatch } from '../../../middleware/dispatch/index';
import { methodGuard } from '../../../middleware/method-guard/index';
import { parse } from '../../../middleware/parse/index';
import type { Middleware } from '../../../core/types';

const ping = { jsonrpc: '2.0', id: 7, method: 'ping' };
const quiet = { error() {}, warn() {} };

/** The MCP stack, counting the requests that reach it. */
function mcp(seen: string[], options?: Parameters<typeof compose>[1]) {
  const count: Middleware = (req, _res, next) => {
    seen.push(req.url ?? '');
    next();
  };
  return compose(
    [
      count,
      methodGuard(),
      parse({ logger: quiet }),
      dispatch({ anonymous: true, handlers: {}, serverInfo: { name: 'path', version: '1' }, logger: quiet }),
    ],
    options,
  );
}

type Host = 'express' | 'express4' | 'connect';
const HOSTS: Host[] = ['express', 'express4', 'connect'];

/** An app of the host with `mount` installed, a /healthz route and a JSON 404 of its own. */
function app(host: Host, mount: (use: (...args: unknown[]) => void) => void): RequestListener {
  const a = host === 'connect' ? connect() : host === 'express' ? express() : express4();
  const use = (...args: unknown[]) => (a.use as (...x: unknown[]) => void)(...args);
  mount(use);
  use('/healthz', (_req: http.IncomingMessage, res: http.ServerResponse) => {
    res.end('ok');
  });
  use((_req: http.IncomingMessage, res: http.ServerResponse) => {
    res.statusCode = 404;
    res.setHeader('Content-Type', 'application/json');
    res.end('{"host":"404"}');
  });
  return a as unknown as RequestListener;
}

describe('compose({ path }) on bare node:http', () => {
  const seen: string[] = [];
  let server: http.Server;
  beforeAll(() => {
    server = http.createServer(mcp(seen, { path: '/mcp' }));
  });
  beforeEach(() => {
    seen.length = 0;
  });

  test('answers the path (a query string included)', async () => {
    for (const url of ['/mcp', '/mcp?x=1']) {
      const res = await request(server).post(url).send(ping);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ jsonrpc: '2.0', id: 7, result: {} });
    }
    expect(seen).toEqual(['/mcp', '/mcp?x=1']);
  });

  test('another path gets 404 and never reaches the chain', async () => {
    for (const [method, url] of [
      ['get', '/healthz'],
      ['post', '/'],
      ['post', '/mcp/extra'],
      ['post', '/mcpx'],
      ['get', '/other?/mcp'],
    ] as const) {
      const agent = request(server);
      const res = method === 'post' ? await agent.post(url).send(ping) : await agent.get(url);
      expect([url, res.status, res.body]).toEqual([url, 404, { error: 'Not found' }]);
    }
    expect(seen).toEqual([]);
  });

  test('a GET on the path is the chain’s to answer (405 from methodGuard)', async () => {
    const res = await request(server).get('/mcp');
    expect(res.status).toBe(405);
    expect(seen).toEqual(['/mcp']);
  });

  test('an absolute-form target is matched by its path', async () => {
    const base = await new Promise<string>((resolve) =>
      server.listen(0, '127.0.0.1', () => {
        const a = server.address() as { port: number };
        resolve(`127.0.0.1:${a.port}`);
      }),
    );
    try {
      const send = (target: string) =>
        new Promise<number>((resolve, reject) => {
          const [host, port] = base.split(':');
          const r = http.request(
            {
              host,
              port: Number(port),
              method: 'POST',
              path: target,
              headers: { 'content-type': 'application/json' },
            },
            (res) => {
              res.resume();
              resolve(res.statusCode!);
            },
          );
          r.on('error', reject);
          r.end(JSON.stringify(ping));
        });
      expect(await send(`http://${base}/mcp`)).toBe(200);
      expect(await send(`http://${base}/other`)).toBe(404);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe.each(HOSTS)('compose() in %s', (host) => {
  const seen: string[] = [];
  beforeEach(() => {
    seen.length = 0;
  });

  test('mounted as the whole app with { path }: the path is MCP, every other path the app’s', async () => {
    const listener = app(host, (use) => use(mcp(seen, { path: '/mcp' })));
    const answered = await request(listener).post('/mcp').send(ping);
    expect(answered.status).toBe(200);
    expect(answered.body).toEqual({ jsonrpc: '2.0', id: 7, result: {} });
    expect((await request(listener).get('/mcp')).status).toBe(405);
    const health = await request(listener).get('/healthz');
    expect([health.status, health.text]).toEqual([200, 'ok']);
    const other = await request(listener).post('/other').send(ping);
    expect([other.status, other.body]).toEqual([404, { host: '404' }]);
    expect(seen).toEqual(['/mcp', '/mcp']);
  });

  test('mounted on its path with the same { path }: the full path is matched', async () => {
    const listener = app(host, (use) => use('/mcp', mcp(seen, { path: '/mcp' })));
    expect((await request(listener).post('/mcp').send(ping)).body.result).toEqual({});
    const below = await request(listener).post('/mcp/extra').send(ping);
    expect([below.status, below.body]).toEqual([404, { host: '404' }]);
    expect(seen).toEqual(['/']);
  });

  test('mounted on a path without { path }: the host routes, as before', async () => {
    const listener = app(host, (use) => use('/mcp', mcp(seen)));
    expect((await request(listener).post('/mcp').send(ping)).body.result).toEqual({});
    expect((await request(listener).get('/healthz')).text).toBe('ok');
  });
});

describe('compose() options: path', () => {
  test.each([
    ['not a string', 5, /compose: option "path"/],
    ['empty', '', /compose: option "path"/],
    ['relative', 'mcp', /compose: option "path" must be a path starting with "\/"/],
    ['with a query', '/mcp?x=1', /compose: option "path"/],
    ['with a fragment', '/mcp#x', /compose: option "path"/],
    ['too long', `/${'m'.repeat(2048)}`, /compose: option "path"/],
  ])('%s is refused', (_what, path, message) => {
    expect(() => compose([], { path } as never)).toThrow(message);
  });

  test('a misspelt path is refused naming it', () => {
    expect(() => compose([], { paht: '/mcp' } as never)).toThrow(/did you mean "path"/);
  });
});
