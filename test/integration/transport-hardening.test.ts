/**
 * The transport refuses what it cannot read: a Content-Encoding it does not decode (415), a body that does not
 * decode (400) or decodes past the limit (413); a request that names its host twice, or two hosts (400); a body
 * another parser read from a non-JSON Content-Type (415). Over HTTP, on bare node:http and Express, through
 * the transport stack in front of dispatch.
 */
import express from 'express';
import http from 'node:http';
import net from 'node:net';
import zlib from 'node:zlib';
import request from 'supertest';
import { checkHeaders } from '../../middleware/check-headers/index';
import { classifyRevision } from '../../middleware/classify-revision/index';
import { dispatch } from '../../middleware/dispatch/index';
import { type GuardOriginOptions, guardOrigin } from '../../middleware/guard-origin/index';
import { parse } from '../../middleware/parse/index';
import { rejectBatch } from '../../middleware/reject-batch/index';
import { ToolRegistry, ok } from '../../handlers/tools/index';
import type { Middleware } from '../../core/types';
import { ERAS, PLATFORMS, type Platform, chain, close, listen } from '../support/dispatch-harness';

type Era = (typeof ERAS)[number];
const MODERN = '2026-07-28';
const LEGACY = '2025-11-25';

/** The stack in the documented order, with a `hello` tool that records each call. */
function transportStack(calls: unknown[], guard: GuardOriginOptions = {}): Middleware[] {
  const tools = new ToolRegistry({
    tools: [
      {
        name: 'hello',
        inputSchema: { type: 'object', properties: { who: { type: 'string' } } },
        call: (a) => (calls.push(a), ok({ hello: a.who ?? 'world' })),
      },
    ],
  });
  return [
    guardOrigin(guard),
    rejectBatch(),
    parse(),
    classifyRevision(),
    checkHeaders({ paramHeaders: tools.paramHeaders }),
    dispatch({ anonymous: true, handlers: { tools }, serverInfo: { name: 'hardening', version: '1' } }),
  ];
}

/** The request listener for the stack; `before` runs first, app-wide (as `app.use(express.urlencoded())`). */
function listener(platform: Platform, mws: Middleware[], before: Middleware[] = []): http.RequestListener {
  if (platform === 'node:http') return chain([...before, ...mws]);
  const app = express();
  for (const b of before) app.use(b);
  app.use('/mcp', ...mws);
  app.use((_req, res) => void res.status(404).json({ fell: 'through' }));
  return app;
}

function server(platform: Platform, mws: Middleware[], before: Middleware[] = []): http.Server {
  return http.createServer(listener(platform, mws, before));
}

function callMessage(era: Era, id: number, who = 'x'): Record<string, unknown> {
  const params: Record<string, unknown> = { name: 'hello', arguments: { who } };
  if (era === 'modern') {
    params._meta = {
      'io.modelcontextprotocol/protocolVersion': MODERN,
      'io.modelcontextprotocol/clientCapabilities': {},
      'io.modelcontextprotocol/clientInfo': { name: 't', version: '1' },
    };
  }
  return { jsonrpc: '2.0', id, method: 'tools/call', params };
}

function callHeaders(era: Era): Record<string, string> {
  const h: Record<string, string> = {
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
    'MCP-Protocol-Version': era === 'modern' ? MODERN : LEGACY,
  };
  if (era === 'modern') Object.assign(h, { 'Mcp-Method': 'tools/call', 'Mcp-Name': 'hello' });
  return h;
}

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: any;
}

/** POST bytes as they are (supertest would turn a Buffer sent as application/json into JSON). */
function send(base: string, headers: Record<string, string>, body: Buffer): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${base}/mcp`, { method: 'POST', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode!, headers: res.headers, body: text ? JSON.parse(text) : undefined });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

function expectRefusal(res: Answer | request.Response, status: number, code: number): void {
  expect(res.status).toBe(status);
  expect(res.body.jsonrpc).toBe('2.0');
  expect(res.body.error.code).toBe(code);
  expect(res.body).not.toHaveProperty('id');
}

interface RawAnswer {
  status: number;
  headers: string;
  body: any;
}

/** Send a request head exactly as written (two Host lines, an absolute-form target) on a raw socket. */
function raw(base: string, head: string[], body = ''): Promise<RawAnswer> {
  const { port } = new URL(base);
  const bytes = Buffer.from(body);
  const text = [...head, `Content-Length: ${bytes.length}`, 'Connection: close', '', ''].join('\r\n');
  return new Promise((resolve, reject) => {
    const c = net.connect(Number(port), '127.0.0.1', () => c.end(Buffer.concat([Buffer.from(text), bytes])));
    const chunks: Buffer[] = [];
    c.on('data', (d: Buffer) => chunks.push(d));
    c.on('error', reject);
    c.on('end', () => {
      const all = Buffer.concat(chunks).toString('utf8');
      const split = all.indexOf('\r\n\r\n');
      const headers = all.slice(0, split);
      const rest = all.slice(split + 4);
      let parsed: unknown;
      try {
        parsed = rest ? JSON.parse(rest) : undefined;
      } catch {
        parsed = rest;
      }
      resolve({ status: Number(headers.split(' ')[1]), headers, body: parsed });
    });
  });
}

const MiB = 1024 * 1024;

describe.each(PLATFORMS)('on %s', (platform) => {
  describe('Content-Encoding', () => {
    const calls: unknown[] = [];
    let s: http.Server;
    let base: string;
    beforeAll(async () => {
      s = server(platform, transportStack(calls));
      base = await listen(s);
    });
    afterAll(() => close(s));
    beforeEach(() => void calls.splice(0));

    const post = (era: Era, body: Buffer, encoding?: string) =>
      send(
        base,
        { ...callHeaders(era), ...(encoding === undefined ? {} : { 'Content-Encoding': encoding }) },
        body,
      );
    const json = (era: Era, id: number) => Buffer.from(JSON.stringify(callMessage(era, id)));

    describe.each(ERAS)('%s', (era) => {
      test.each([
        ['gzip', zlib.gzipSync],
        ['x-gzip', zlib.gzipSync],
        ['deflate', zlib.deflateSync],
        ['br', zlib.brotliCompressSync],
        ['GZip', zlib.gzipSync],
      ] as const)('a %s body is decoded and served', async (coding, encode) => {
        const res = await post(era, encode(json(era, 3)), coding);
        expect(res.status).toBe(200);
        expect(res.body.id).toBe(3);
        expect(res.body.result.structuredContent).toEqual({ hello: 'x' });
        expect(calls).toEqual([{ who: 'x' }]);
      });

      test('identity is a plain body', async () => {
        const res = await post(era, json(era, 4), 'identity');
        expect(res.status).toBe(200);
        expect(calls).toHaveLength(1);
      });

      test('a 10 KB gzip body that inflates to 10 MiB is refused with 413, the tool not called', async () => {
        const msg = JSON.stringify(callMessage(era, 5, 'x'.repeat(10 * MiB)));
        const bomb = zlib.gzipSync(msg);
        expect(bomb.length).toBeLessThan(20 * 1024);
        const res = await post(era, bomb, 'gzip');
        expectRefusal(res, 413, -32600);
        expect(calls).toEqual([]);
      });

      test.each(['x-unknown', 'compress', 'gzip, br', 'gzip, gzip'])(
        'Content-Encoding: %s is refused with 415 (Accept-Encoding names what is decoded)',
        async (coding) => {
          const res = await post(era, json(era, 6), coding);
          expectRefusal(res, 415, -32600);
          expect(res.headers['accept-encoding']).toBe('gzip, deflate, br');
          expect(calls).toEqual([]);
        },
      );

      test('Content-Encoding: gzip over a plain body is refused with 400 -32700, not served', async () => {
        const res = await post(era, json(era, 7), 'gzip');
        expectRefusal(res, 400, -32700);
        expect(calls).toEqual([]);
      });
    });

    test('a gzip bomb of 1 GiB (1 MB sent) is stopped at the limit: 413, and the memory stays bounded', async () => {
      // Concatenated gzip members inflate one after the other; an inflater left running would hold 1 GiB.
      const member = zlib.gzipSync(Buffer.alloc(10 * MiB, 0x20));
      const bomb = Buffer.concat(Array.from({ length: 100 }, () => member));
      expect(bomb.length).toBeLessThan(1.5 * MiB);
      const before = process.memoryUsage.rss();
      let peak = before;
      const sample = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 2);
      const started = Date.now();
      const res = await post('legacy', bomb, 'gzip').finally(() => clearInterval(sample));
      // Inflating all of it takes seconds and a gigabyte; stopped at the limit, milliseconds and megabytes.
      expect(Date.now() - started).toBeLessThan(5000);
      expect(peak - before).toBeLessThan(256 * MiB);
      expectRefusal(res, 413, -32600);
      expect(calls).toEqual([]);
    });

    test('two Content-Encoding lines are stacked codings: 415', async () => {
      const body = zlib.gzipSync(json('legacy', 8)).toString('latin1');
      const head = ['POST /mcp HTTP/1.1', `Host: ${new URL(base).host}`];
      for (const [k, v] of Object.entries(callHeaders('legacy'))) head.push(`${k}: ${v}`);
      head.push('Content-Encoding: gzip', 'Content-Encoding: identity', 'Content-Encoding: br');
      const res = await raw(base, head, body);
      expect(res.status).toBe(415);
      expect(calls).toEqual([]);
    });

    test('a gzip-encoded batch is seen as a batch (400 -32600) by rejectBatch', async () => {
      const batch = Buffer.from(JSON.stringify([callMessage('legacy', 9), callMessage('legacy', 10)]));
      const res = await post('legacy', zlib.gzipSync(batch), 'gzip');
      expectRefusal(res, 400, -32600);
      expect(res.body.error.message).toMatch(/batch/);
      expect(calls).toEqual([]);
    });
  });

  describe('a body another parser read', () => {
    const calls: unknown[] = [];
    let s: http.Server;
    let base: string;
    beforeAll(async () => {
      const before = [
        express.urlencoded({ extended: true }),
        express.text(),
        express.json(),
      ] as unknown as Middleware[];
      s = server(platform, transportStack(calls), before);
      base = await listen(s);
    });
    afterAll(() => close(s));
    beforeEach(() => void calls.splice(0));

    const form = (era: Era, id: number) => {
      const pairs: [string, string][] = [
        ['jsonrpc', '2.0'],
        ['id', String(id)],
        ['method', 'tools/call'],
        ['params[name]', 'hello'],
        ['params[arguments][who]', 'form'],
      ];
      if (era === 'modern') {
        const m = 'params[_meta]';
        pairs.push(
          [`${m}[io.modelcontextprotocol/protocolVersion]`, MODERN],
          [`${m}[io.modelcontextprotocol/clientCapabilities][x]`, '1'],
          [`${m}[io.modelcontextprotocol/clientInfo][name]`, 't'],
          [`${m}[io.modelcontextprotocol/clientInfo][version]`, '1'],
        );
      }
      return new URLSearchParams(pairs).toString();
    };

    test.each(ERAS)('%s: a form POST parsed by express.urlencoded gets 415 and runs no tool', async (era) => {
      const res = await request(base)
        .post('/mcp')
        .set({ ...callHeaders(era), 'Content-Type': 'application/x-www-form-urlencoded' })
        .send(form(era, 7));
      expectRefusal(res, 415, -32600);
      expect(calls).toEqual([]);
    });

    test.each(ERAS)('%s: a text/plain JSON body read by express.text gets 415', async (era) => {
      const res = await request(base)
        .post('/mcp')
        .set({ ...callHeaders(era), 'Content-Type': 'text/plain' })
        .send(JSON.stringify(callMessage(era, 8)));
      expectRefusal(res, 415, -32600);
      expect(calls).toEqual([]);
    });

    test.each(ERAS)('%s: a JSON body read by express.json is still served', async (era) => {
      const res = await request(base)
        .post('/mcp')
        .set(callHeaders(era))
        .send(JSON.stringify(callMessage(era, 9)));
      expect(res.status).toBe(200);
      expect(res.body.id).toBe(9);
      expect(calls).toEqual([{ who: 'x' }]);
    });

    test.each(ERAS)('%s: a gzip JSON body express.json decoded is served', async (era) => {
      const gz = zlib.gzipSync(JSON.stringify(callMessage(era, 10)));
      const res = await send(base, { ...callHeaders(era), 'Content-Encoding': 'gzip' }, gz);
      expect(res.status).toBe(200);
      expect(res.body.id).toBe(10);
      expect(calls).toEqual([{ who: 'x' }]);
    });
  });

  describe('Host', () => {
    const calls: unknown[] = [];
    let s: http.Server;
    let base: string;
    let host: string;
    let port: string;
    beforeAll(async () => {
      // The allow-list names the port the server got: the stack is attached once it listens.
      s = http.createServer();
      base = await listen(s);
      ({ host, port } = new URL(base));
      s.on(
        'request',
        listener(platform, transportStack(calls, { allowedHosts: [host, `localhost:${port}`] })),
      );
    });
    afterAll(() => close(s));
    beforeEach(() => void calls.splice(0));

    const head = (target: string, hostLines: string[], extra: string[] = []) => {
      const lines = [`POST ${target} HTTP/1.1`, ...hostLines.map((h) => `Host: ${h}`), ...extra];
      for (const [k, v] of Object.entries(callHeaders('legacy'))) lines.push(`${k}: ${v}`);
      return lines;
    };
    const body = JSON.stringify(callMessage('legacy', 11));

    test('one allowed Host is served', async () => {
      const res = await raw(base, head('/mcp', [host]), body);
      expect(res.status).toBe(200);
      expect(calls).toHaveLength(1);
    });

    test.each([
      ['the same allowed host twice', (h: string) => [h, h]],
      ['an allowed host, then another', (h: string) => [h, 'evil.example.com']],
      ['two allowed hosts', (h: string) => [h, `localhost:${new URL(`http://${h}`).port}`]],
    ])('two Host lines (%s) are refused with 400', async (_what, lines) => {
      const res = await raw(base, head('/mcp', lines(host)), body);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ jsonrpc: '2.0', error: { code: -32600 } });
      expect(res.body).not.toHaveProperty('id');
      expect(calls).toEqual([]);
    });

    test('an absolute-form target naming another host, with an allowed Host, is refused with 403', async () => {
      const res = await raw(base, head('http://evil.example.com/mcp', [host]), body);
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe(403);
      expect(calls).toEqual([]);
    });

    test('an absolute-form target naming an allowed host that the Host header contradicts: 400', async () => {
      const res = await raw(base, head(`http://localhost:${port}/mcp`, [host]), body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe(-32600);
      expect(calls).toEqual([]);
    });

    test('an absolute-form target naming the allowed host the Host header names is served', async () => {
      const res = await raw(base, head(`http://${host}/mcp`, [host]), body);
      expect(res.status).toBe(200);
      expect(calls).toHaveLength(1);
    });

    test('two Origin lines are refused with 403, even when each would be allowed alone', async () => {
      const lines = head('/mcp', [host], ['Origin: http://a.example', 'Origin: http://a.example']);
      const open = server(platform, transportStack(calls, { allowedOrigins: '*' }));
      const openBase = await listen(open);
      try {
        const res = await raw(openBase, lines, body);
        expect(res.status).toBe(403);
        expect(res.body.error.code).toBe(403);
        expect(calls).toEqual([]);
      } finally {
        await close(open);
      }
    });
  });
});
