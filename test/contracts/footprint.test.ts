/**
 * What the stack adds to node's request and response objects. Under Express, which swaps their prototypes, every
 * property added to one of them gives that one object a hidden class of its own (a map and a descriptor copy per
 * request, which the garbage collector then traces): mcpware keeps its per-request state in `req.locals` and in
 * closures instead. The whole stack may add `req.locals` and replace `res.write`/`res.end` (audit counts the
 * bytes), nothing else. Also: replacing `req.locals` while the body is read makes the read's listeners do
 * nothing instead of throwing inside the stream.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { Writable } from 'node:stream';
import express from 'express';
import { Registry } from 'prom-client';
import request from 'supertest';
import winston from 'winston';
import { apiKeyAuth, hashKey } from '../../middleware/api-key-auth/index';
import { audit, auditJsonFormat } from '../../middleware/audit/index';
import { checkHeaders } from '../../middleware/check-headers/index';
import { classifyRevision } from '../../middleware/classify-revision/index';
import { compose } from '../../middleware/compose/index';
import { parseRequest } from '../../core/parse-step';
import { dispatch } from '../../middleware/dispatch/index';
import { guardOrigin } from '../../middleware/guard-origin/index';
import { limits } from '../../middleware/limits/index';
import { methodGuard } from '../../middleware/method-guard/index';
import { metrics } from '../../middleware/metrics/index';
import { parse } from '../../middleware/parse/index';
import { redact } from '../../middleware/redact/index';
import { rejectBatch } from '../../middleware/reject-batch/index';
import { ToolRegistry, textResult } from '../../handlers/tools/index';
import type { Middleware } from '../../core/types';
import { FLAVOURS, type Flavour } from '../support/servers';

const KEY = 'footprint-key-0123456789abcdef';
const quiet = { error() {} };

/** A real winston logger in audit's format whose lines land in `lines`. */
function lineLogger(lines: string[]): winston.Logger {
  return winston.createLogger({
    format: auditJsonFormat(),
    transports: [
      new winston.transports.Stream({
        stream: new Writable({
          write(chunk: Buffer, _enc, cb) {
            lines.push(chunk.toString());
            cb();
          },
        }),
      }),
    ],
  });
}

function fullStack(lines: string[]): Middleware[] {
  const tools = new ToolRegistry({
    logger: quiet,
    tools: [
      {
        name: 'echo',
        inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
        call: (args) => textResult(String(args.text)),
      },
    ],
  });
  const logger = lineLogger(lines);
  const m = metrics({ registry: new Registry(), tools: ['echo'] });
  return [
    audit({ logger }),
    m,
    guardOrigin(),
    methodGuard(),
    parse({ logger: quiet }),
    rejectBatch({ logger: quiet }),
    classifyRevision({ logger: quiet }),
    checkHeaders({ paramHeaders: tools.paramHeaders, logger: quiet }),
    apiKeyAuth({ keys: [{ userId: 'u', hash: hashKey(KEY), groups: ['g'] }], logger: quiet }),
    limits({ perUserRpm: 1000, store: 'memory', hooks: m.limiterHooks(), logger: quiet }),
    redact({ mode: 'mask' }),
    dispatch({
      anonymous: true,
      handlers: { tools },
      serverInfo: { name: 'footprint', version: '1' },
      logger: quiet,
    }),
  ];
}

/** A bare answer after reading the body: what node (and Express) add on their own. */
const bareAnswer: Middleware = (req, res) => {
  req.resume();
  req.on('end', () => {
    res.statusCode = 200;
    res.setHeader('Content-Type', 'application/json');
    res.end('{"jsonrpc":"2.0","id":1,"result":{}}');
  });
};

type Keys = { req: (string | symbol)[]; res: (string | symbol)[] };

/** Records the own keys that appear on req and res between the first middleware and the response's end. */
function recorder(into: Keys[]): Middleware {
  return (req, res, next) => {
    const before = { req: new Set(Reflect.ownKeys(req)), res: new Set(Reflect.ownKeys(res)) };
    res.on('close', () => {
      into.push({
        req: Reflect.ownKeys(req).filter((k) => !before.req.has(k)),
        res: Reflect.ownKeys(res).filter((k) => !before.res.has(k)),
      });
    });
    next();
  };
}

function server(flavour: Flavour, mws: Middleware[]): http.Server {
  if (flavour === 'node:http') return http.createServer(compose(mws, { logger: quiet }));
  const app = express();
  app.use('/mcp', compose(mws, { logger: quiet }));
  return http.createServer(app);
}

async function added(flavour: Flavour, mws: Middleware[]): Promise<Keys> {
  const seen: Keys[] = [];
  const s = server(flavour, [recorder(seen), ...mws]);
  const res = await request(s)
    .post('/mcp')
    .set('Content-Type', 'application/json')
    .set('Accept', 'application/json, text/event-stream')
    .set('Authorization', `Bearer ${KEY}`)
    .set('MCP-Protocol-Version', '2025-11-25')
    .send({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'echo', arguments: { text: 'hi' } },
    });
  expect(res.status).toBe(200);
  await new Promise((r) => setTimeout(r, 20));
  expect(seen).toHaveLength(1);
  return seen[0]!;
}

describe.each(FLAVOURS)('what the full stack adds to req and res on %s', (flavour) => {
  test('req.locals, res.write and res.end; nothing else', async () => {
    const lines: string[] = [];
    const baseline = await added(flavour, [bareAnswer]);
    const stack = await added(flavour, fullStack(lines));
    const extra = (k: 'req' | 'res') => stack[k].filter((x) => !baseline[k].includes(x)).map(String);
    expect(extra('req')).toEqual(['locals']);
    expect(extra('res').sort()).toEqual(['end', 'write']);
    // The stack did its work: audit wrote its record (with the bytes it counted) and the tool answered.
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({
      method: 'tools/call',
      outcome: 'ok',
      bytes_out: expect.any(Number),
    });
    expect(JSON.parse(lines[0]!).bytes_out).toBeGreaterThan(0);
  });
});

describe.each(FLAVOURS)('req.locals replaced during the body read on %s', (flavour) => {
  test('the read listeners do nothing and nothing throws; a later parse is refused as unreadable', async () => {
    const errors: unknown[] = [];
    const onError = (e: unknown) => errors.push(e);
    process.on('uncaughtException', onError);
    try {
      const verdicts: unknown[] = [];
      const replacer: Middleware = (req: IncomingMessage, res: ServerResponse) => {
        // Starts the shared read, then throws its state away before the body arrives.
        void parseRequest(req);
        req.locals = {};
        req.on('end', () => {
          setImmediate(() => {
            void parseRequest(req).then((v) => {
              verdicts.push(v);
              res.statusCode = 204;
              res.end();
            });
          });
        });
      };
      const s = server(flavour, [replacer]);
      const res = await request(s)
        .post('/mcp')
        .set('Content-Type', 'application/json')
        .send({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
      expect(res.status).toBe(204);
      expect(verdicts).toEqual([expect.objectContaining({ ok: false, reason: 'body_unreadable' })]);
      expect(errors).toEqual([]);
    } finally {
      process.removeListener('uncaughtException', onError);
    }
  });
});

describe.each(FLAVOURS)('req.locals replaced after audit() and metrics() on %s', (flavour) => {
  test('the answer is intact; audit says its record is lost, metrics skips the request', async () => {
    const lines: string[] = [];
    const errors: string[] = [];
    const logger = lineLogger(lines);
    const registry = new Registry();
    const m = metrics({ registry });
    const replacer: Middleware = (req, res) => {
      if (!req.headers['x-keep']) req.locals = {};
      res.statusCode = 200;
      res.write('part one, ');
      res.end('part two');
    };
    const s = server(flavour, [
      audit({ logger, onError: (e) => errors.push(String((e as Error).message)) }),
      m,
      replacer,
    ]);
    const res = await request(s).post('/mcp').send('x');
    expect(res.status).toBe(200);
    expect(res.text).toBe('part one, part two');
    await new Promise((r) => setTimeout(r, 20));
    expect(lines).toEqual([]);
    expect(errors).toEqual([expect.stringContaining('req.locals was replaced during a request')]);
    const counted = async () => {
      const metric = await registry.getSingleMetric('mcp_requests_total')!.get();
      return metric.values.reduce((n, v) => n + v.value, 0);
    };
    expect(await counted()).toBe(0);
    // The same chain without the replacement: recorded by both.
    await request(s).post('/mcp').set('x-keep', '1').send('x');
    await new Promise((r) => setTimeout(r, 20));
    expect(await counted()).toBe(1);
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ bytes_out: 18 });
  });
});
