/**
 * The shared parse step hands its result on synchronously: parse() calls next() from the body's `end` event,
 * with no promise in between, and the middlewares after it go on in the same turn. Concurrent callers of the
 * promise API (parseRequest, readRawBody, isBatch) share the same single read and parse.
 */
import http from 'node:http';
import request from 'supertest';
import { parse } from '../../middleware/parse';
import { classifyRevision } from '../../middleware/classifyRevision';
import { checkHeaders } from '../../middleware/checkHeaders';
import { isBatch, parseRequest, parsedNow, readRawBody } from '../../middleware/context';
import { FLAVOURS, makeServer } from '../helpers/servers';
import type { Middleware } from '../../middleware/types';

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
          seen.push(parsedNow(req) === a);
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
