/**
 * The shared parse step hands its result on synchronously: parse() calls next() from the body's `end` event,
 * with no promise in between, and the middlewares after it go on in the same turn. Concurrent callers of the
 * promise API (parseRequest, readRawBody, isBatch) share the same single read and parse.
 */
import http from 'node:http';
import net from 'node:net';
import request from 'supertest';
import { parse } from '../../middleware/parse/index';
import { classifyRevision } from '../../middleware/classify-revision/index';
import { checkHeaders } from '../../middleware/check-headers/index';
import { isBatch, parseRequest, parsed, readRawBody } from '../../core/parse-step';
import { FLAVOURS, makeServer } from '../support/servers';
import type { Middleware } from '../../core/types';

const body = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list', params: {} });

/** Records whether the middlewares after parse() ran before a microtask queued at the body's `end`. */
function probe(): { before: Middleware; after: Middleware; seen: string[] } {
  const seen: string[] = [];
  const before: Middleware = (req, _res, next) => {
    req.on('end', () => {
      // Queued when the body ends, before parse's own `end` listener runs (this one was added first).
      queueMicrotask(() => seen.push('microtask'));
    });
    next();
  };
  const after: Middleware = (_req, _res, next) => {
    seen.push('after');
    next();
  };
  return { before, after, seen };
}

describe.each(FLAVOURS)('parse(): synchronous hand-off on %s', (flavour) => {
  test('the next middlewares run in the same turn as the body end, before any microtask', async () => {
    const p = probe();
    const server = makeServer(flavour, [p.before, parse(), classifyRevision(), checkHeaders(), p.after]);
    const res = await request(server)
      .post('/mcp')
      .set('Content-Type', 'application/json')
      .set('MCP-Protocol-Version', '2025-11-25')
      .send(body);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ passed: true, method: 'tools/list', id: 7 });
    expect(p.seen).toEqual(['after', 'microtask']);
  });

  test('refusals are unchanged (415, 400 -32700) and nothing after parse() runs', async () => {
    const p = probe();
    const server = makeServer(flavour, [p.before, parse(), p.after]);
    const r1 = await request(server).post('/mcp').set('Content-Type', 'text/plain').send('x');
    expect(r1.status).toBe(415);
    const r2 = await request(server).post('/mcp').set('Content-Type', 'application/json').send('{"a":');
    expect(r2.status).toBe(400);
    expect(r2.body).toEqual({ jsonrpc: '2.0', error: expect.objectContaining({ code: -32700 }) });
    expect(p.seen.filter((s) => s === 'after')).toEqual([]);
  });
});

describe('the promise API shares the callback path', () => {
  function serve(handler: http.RequestListener): http.Server {
    return http.createServer(handler);
  }

  test('parseRequest, readRawBody and isBatch started together read and parse once', async () => {
    const seen: unknown[] = [];
    const server = serve((req, res) => {
      let dataListeners = 0;
      const on = req.on.bind(req);
      req.on = ((ev: string, fn: (...a: unknown[]) => void) => {
        if (ev === 'data') dataListeners++;
        return on(ev, fn);
      }) as typeof req.on;
      void Promise.all([parseRequest(req), parseRequest(req), readRawBody(req), isBatch(req)]).then(
        ([a, b, raw, batch]) => {
          seen.push(a === b, Buffer.isBuffer(raw) && raw.toString() === body, batch, dataListeners);
          seen.push(parsed(req) === a);
          res.end('ok');
        },
      );
    });
    await request(server).post('/mcp').set('Content-Type', 'application/json').send(body).expect(200);
    expect(seen).toEqual([true, true, false, 1, true]);
  });

  test('isBatch while the parse runs waits for its verdict', async () => {
    let verdict: unknown;
    const server = serve((req, res) => {
      void parseRequest(req);
      void isBatch(req).then((b) => {
        verdict = b;
        res.end();
      });
    });
    await request(server).post('/mcp').set('Content-Type', 'application/json').send('[{"jsonrpc":"2.0"}]');
    expect(verdict).toBe(true);
  });

  /** A server whose handler starts the shared read; resolves with the parse outcome and the request. */
  function parsingServer(): {
    server: http.Server;
    outcome: Promise<{ result: unknown; req: http.IncomingMessage }>;
  } {
    let done!: (v: { result: unknown; req: http.IncomingMessage }) => void;
    const outcome = new Promise<{ result: unknown; req: http.IncomingMessage }>((r) => (done = r));
    const server = http.createServer((req, res) => {
      void parseRequest(req).then((result) => {
        done({ result, req });
        if (!res.destroyed) res.end();
      });
    });
    return { server, outcome };
  }

  const bodyListeners = (req: http.IncomingMessage): number[] =>
    ['data', 'end', 'error', 'aborted'].map((ev) => req.listenerCount(ev));

  test('a client that goes away mid-body: the waiters get body_unreadable and the listeners come off', async () => {
    const { server, outcome } = parsingServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const { port } = server.address() as net.AddressInfo;
      const sock = net.connect(port, '127.0.0.1');
      await new Promise<void>((r) => sock.once('connect', () => r()));
      sock.write(
        'POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"jsonrpc":',
      );
      // Let the server start reading before the connection drops.
      await new Promise((r) => setTimeout(r, 50));
      sock.destroy();
      let timer: NodeJS.Timeout | undefined;
      const { result, req } = await Promise.race([
        outcome,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error('the parse step never settled')), 3000);
        }),
      ]).finally(() => clearTimeout(timer));
      expect(result).toMatchObject({ ok: false, reason: 'body_unreadable' });
      expect(bodyListeners(req)).toEqual([0, 0, 0, 0]);
    } finally {
      server.close();
    }
  });

  test('a chunked body over the limit: 413 once the limit is passed, and the listeners come off', async () => {
    let seen: http.IncomingMessage | undefined;
    let before: number[] = [];
    const server = http.createServer((req, res) => {
      seen = req;
      before = bodyListeners(req);
      makeServer('node:http', [parse({ limit: 64 })]).emit('request', req, res);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as net.AddressInfo;
    // No Content-Length: the body arrives in chunks and only the running size can refuse it.
    const res = await new Promise<{ status: number }>((resolve, reject) => {
      const rq = http.request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/mcp',
          headers: { 'Content-Type': 'application/json' },
        },
        (r) => {
          r.resume();
          resolve({ status: r.statusCode! });
        },
      );
      rq.on('error', reject);
      rq.write('{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"pad":"');
      rq.write('x'.repeat(200));
      rq.end('"}}');
    }).finally(() => server.close());
    expect(seen!.headers['content-length']).toBeUndefined();
    expect(res.status).toBe(413);
    // The parse step's four listeners are gone; node adds its own 'end' listener once the answer is sent
    // before the body was read to its end.
    const ours = ['data', 'end', 'error', 'aborted'].flatMap((ev) =>
      seen!.listeners(ev).filter((f) => f.name.startsWith('onBody')),
    );
    expect(ours).toEqual([]);
    expect(bodyListeners(seen!).filter((_, i) => i !== 1)).toEqual(before.filter((_, i) => i !== 1));
  });

  test('once the body has ended, a late error on the request changes nothing', async () => {
    const { server, outcome } = parsingServer();
    await request(server).post('/mcp').set('Content-Type', 'application/json').send(body).expect(200);
    const { result, req } = await outcome;
    expect(result).toMatchObject({ kind: 'request', method: 'tools/list' });
    // The listeners stay (the stream has ended) and do nothing: no throw, the outcome is kept.
    expect(() => req.emit('error', new Error('late'))).not.toThrow();
    expect(() => req.emit('aborted')).not.toThrow();
    expect(await parseRequest(req)).toBe(result);
  });

  test('an exception inside the parse step becomes a generic -32603, the stack only in the log', async () => {
    const logged: string[] = [];
    const logger = {
      error: (m: string, meta?: Record<string, unknown>) => logged.push(m + JSON.stringify(meta)),
    };
    const server = makeServer('node:http', [parse({ logger })]);
    // Headers whose getter throws: toMcpRequest reads them after the body is parsed.
    const app = http.createServer((req, res) => {
      let calls = 0;
      Object.defineProperty(req, 'headers', {
        get() {
          if (++calls > 2) throw new Error('secret detail');
          return { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) };
        },
      });
      server.emit('request', req, res);
    });
    const res = await request(app).post('/mcp').set('Content-Type', 'application/json').send(body);
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' } });
    expect(JSON.stringify(res.body)).not.toContain('secret');
    expect(logged.join('\n')).toContain('secret detail');
  });
});
