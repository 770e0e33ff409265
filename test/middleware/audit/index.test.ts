import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import winston from 'winston';
import { hashKey } from '../../../lib/apikeys';
import { apiKeyAuth } from '../../../middleware/api-key-auth/index';
import { argumentsDigest } from '../../../lib/canonical-json';
import { AUDIT_KEYS, audit } from '../../../middleware/audit/index';
import { classifyRevision } from '../../../middleware/classify-revision/index';
import { guardOrigin } from '../../../middleware/guard-origin/index';
import { limits } from '../../../middleware/limits/index';
import { methodGuard } from '../../../middleware/method-guard/index';
import { parse } from '../../../middleware/parse/index';
import { redact } from '../../../middleware/redact/index';
import { rejectBatch } from '../../../middleware/reject-batch/index';
import type { Middleware } from '../../../core/types';
import {
  type Platform,
  PLATFORMS,
  finalHandler,
  modern,
  modernHeaders,
  serve,
} from '../../support/observe-harness';

const dir = mkdtempSync(join(tmpdir(), 'mcpware-audit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let fileSeq = 0;

const ALICE = 'k-alice-0123456789';
const keys = [{ userId: 'alice', hash: hashKey(ALICE), groups: ['users'] }];
const quiet = { error() {}, warn() {} };

const fixtures = {
  tools: {
    lookup: (p: Record<string, unknown>) => ({
      content: [
        { type: 'text', text: `result for ${JSON.stringify(p.arguments)}: the owner is sergey@acme.com` },
      ],
    }),
    fails: () => ({ content: [{ type: 'text', text: 'nope' }], isError: true }),
  },
};

interface Logged {
  file: string;
  logger: winston.Logger;
  /** Wait until the file holds at least n lines, then return them parsed. */
  lines(n: number): Promise<Record<string, unknown>[]>;
  raw(): string;
}

function fileLogger(): Logged {
  const file = join(dir, `audit-${process.pid}-${++fileSeq}.log`);
  const logger = winston.createLogger({
    level: 'info',
    format: winston.format.json(),
    transports: [new winston.transports.File({ filename: file })],
  });
  const raw = (): string => (existsSync(file) ? readFileSync(file, 'utf8') : '');
  return {
    file,
    logger,
    raw,
    async lines(n) {
      for (let i = 0; i < 400; i++) {
        const text = raw();
        // Only complete lines: the last piece is '' or a record still being written.
        const ls = text
          .split('\n')
          .slice(0, -1)
          .filter((l) => l !== '');
        if (ls.length >= n) return ls.map((l) => JSON.parse(l) as Record<string, unknown>);
        await new Promise((r) => setTimeout(r, 25));
      }
      throw new Error(`audit file has fewer than ${n} lines:\n${raw()}`);
    },
  };
}

function chain(
  log: winston.Logger,
  extra: { limit?: Middleware; auditOptions?: Record<string, unknown> } = {},
): Middleware[] {
  return [
    audit({ logger: log, arguments: ['who'], ...extra.auditOptions }),
    guardOrigin({ allowedOrigins: ['http://localhost:3000'] }),
    methodGuard(),
    parse(),
    rejectBatch(),
    classifyRevision(),
    apiKeyAuth({ keys, logger: quiet }),
    ...(extra.limit ? [extra.limit] : []),
    redact(),
    finalHandler(fixtures),
  ];
}

function toolCall(
  server: http.Server,
  args: Record<string, unknown>,
  opts: { name?: string; id?: string | number; key?: string | null; meta?: Record<string, unknown> } = {},
) {
  const name = opts.name ?? 'lookup';
  const body = modern(
    'tools/call',
    { name, arguments: args, ...(opts.meta ? { _meta: opts.meta } : {}) },
    opts.id ?? 7,
  );
  const req = request(server)
    .post('/mcp')
    .set(modernHeaders('tools/call', name.replace(/[^\x20-\x7e]/g, '?')))
    .set('User-Agent', 'audit-test/1.0');
  if (opts.key !== null) req.set('Authorization', `Bearer ${opts.key ?? ALICE}`);
  return { req: req.send(body), bytes: Buffer.byteLength(JSON.stringify(body)) };
}

describe.each(PLATFORMS)('audit() on %s with a winston File transport', (platform: Platform) => {
  test('an allowed call: one record with every fixed key, the digest of the arguments, never the answer', async () => {
    const log = fileLogger();
    const server = serve(platform, chain(log.logger));
    const { req, bytes } = toolCall(server, { b: [true, null], a: 1, who: 'alice' });
    const res = await req;
    expect(res.status).toBe(200);
    const [rec] = await log.lines(1);
    expect(Object.keys(rec!).sort()).toEqual([...AUDIT_KEYS, 'level', 'message'].sort());
    expect(rec).toMatchObject({
      level: 'info',
      message: 'mcp call',
      event: 'audit',
      rpc_id: '7',
      http_method: 'POST',
      path: '/mcp',
      remote_addr: expect.stringMatching(/127\.0\.0\.1/),
      user_agent: 'audit-test/1.0',
      principal: 'alice',
      auth_method: 'api-key',
      auth: 'ok',
      era: 'modern',
      protocol_version: '2026-07-28',
      client: 'test-client/1.0.0',
      method: 'tools/call',
      target_type: 'tool',
      target: 'lookup',
      decision: 'allowed',
      reason: '',
      detail: '',
      refused_by: '',
      status: 200,
      outcome: 'ok',
      error_code: null,
      bytes_in: bytes,
      bytes_out: Buffer.byteLength(res.text),
      args: { who: 'alice' },
      redacted: ['email'],
    });
    expect(rec!.request_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Date(rec!.time as string).toISOString()).toBe(rec!.time);
    expect(typeof rec!.duration_ms).toBe('number');
    // SHA-256 over the canonical form: sorted keys, no whitespace.
    expect(rec!.args_sha256).toBe(
      createHash('sha256').update('{"a":1,"b":[true,null],"who":"alice"}').digest('hex'),
    );
    expect(log.raw()).not.toContain('result for');
    expect(log.raw()).not.toContain('owner');
  });

  test('refused calls are recorded: 401, 403, 405, 400 (parse, batch, envelope)', async () => {
    const log = fileLogger();
    const server = serve(platform, chain(log.logger));
    const r401 = await toolCall(server, { who: 'x' }, { key: null }).req;
    const r401b = await toolCall(server, { who: 'x' }, { key: 'wrong-key-000000' }).req;
    const r403 = await request(server)
      .post('/mcp')
      .set(modernHeaders('tools/call', 'lookup'))
      .set('Origin', 'http://evil.example')
      .send(modern('tools/call', { name: 'lookup' }));
    const r405 = await request(server).get('/mcp');
    const rParse = await request(server)
      .post('/mcp')
      .set('Content-Type', 'application/json')
      .send('{"jsonrpc":');
    const rBatch = await request(server)
      .post('/mcp')
      .set('Content-Type', 'application/json')
      .send('[{"jsonrpc":"2.0","id":1,"method":"ping"}]');
    const rEnvelope = await request(server)
      .post('/mcp')
      .set({ 'Content-Type': 'application/json', 'MCP-Protocol-Version': '2026-07-28' })
      .send({ jsonrpc: '2.0', id: 'e1', method: 'tools/list', params: {} });
    expect([
      r401.status,
      r401b.status,
      r403.status,
      r405.status,
      rParse.status,
      rBatch.status,
      rEnvelope.status,
    ]).toEqual([401, 401, 403, 405, 400, 400, 400]);
    const recs = await log.lines(7);
    expect(recs.map((r) => [r.decision, r.reason, r.refused_by, r.status, r.outcome, r.error_code])).toEqual([
      ['refused', 'unauthorized', 'apiKeyAuth', 401, 'error', 401],
      ['refused', 'unauthorized', 'apiKeyAuth', 401, 'error', 401],
      ['refused', 'origin_not_allowed', 'guardOrigin', 403, 'error', 403],
      ['refused', 'method_not_allowed', 'methodGuard', 405, 'error', -32600],
      ['refused', 'parse_error', 'parse', 400, 'error', -32700],
      ['refused', 'batch', expect.any(String), 400, 'error', -32600],
      ['refused', 'missing_envelope', 'classifyRevision', 400, 'error', -32602],
    ]);
    expect(recs.map((r) => r.auth)).toEqual(['missing', 'invalid', '', '', '', '', '']);
    expect(recs[0]).toMatchObject({
      principal: '',
      era: 'modern',
      method: 'tools/call',
      target: 'lookup',
      args_sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(recs[3]).toMatchObject({ http_method: 'GET', method: '', rpc_id: '', bytes_in: 0 });
    expect(recs[6]).toMatchObject({ rpc_id: 'e1', method: 'tools/list' });
    for (const r of recs) expect(Object.keys(r).sort()).toEqual([...AUDIT_KEYS, 'level', 'message'].sort());
  });

  test('a 429 from the real limits middleware is recorded with its reason', async () => {
    const log = fileLogger();
    const limit = limits({
      perUserRpm: 1,
      perUserConcurrency: 0,
      globalConcurrency: 0,
      costBudgetPerHour: 0,
      logger: quiet,
    });
    const server = serve(platform, chain(log.logger, { limit }));
    expect((await toolCall(server, { who: 'a' }).req).status).toBe(200);
    expect((await toolCall(server, { who: 'a' }).req).status).toBe(429);
    const recs = await log.lines(2);
    expect(recs[1]).toMatchObject({
      decision: 'refused',
      reason: 'rate_limited',
      refused_by: 'limits',
      status: 429,
      error_code: 429,
      principal: 'alice',
    });
  });

  test('a tool error and an unknown tool are allowed calls with an error outcome', async () => {
    const log = fileLogger();
    const server = serve(platform, chain(log.logger));
    await toolCall(server, {}, { name: 'fails' }).req;
    await toolCall(server, {}, { name: 'nope' }).req;
    const recs = await log.lines(2);
    expect(recs.map((r) => [r.decision, r.outcome, r.error_code, r.target])).toEqual([
      ['allowed', 'tool_error', null, 'fails'],
      ['allowed', 'error', -32602, 'nope'],
    ]);
  });

  test('a forged line (newline, ANSI/OSC escapes, U+2028, C1 CSI in who, the id, the name, the client) gives one clean record', async () => {
    const log = fileLogger();
    const server = serve(platform, chain(log.logger));
    const forged =
      'mallory\n{"level":"info","message":"mcp call","event":"audit","decision":"allowed","principal":"root"}\r\n\x1b[2J\x1b]52;c;cm0gLXJmIH4=\x07\u009b31m\u2028\u202eevil';
    const res = await toolCall(
      server,
      { who: forged },
      {
        id: `id\n${forged}`,
        name: `lookup\n\x1b[31mred`,
        meta: {
          'io.modelcontextprotocol/clientInfo': { name: `cli\r\n\x1b]0;title\x07`, version: '1\u2029' },
        },
      },
    ).req;
    expect(res.status).toBe(200);
    await log.lines(1);
    const text = log.raw();
    const lines = text.split('\n').filter((l) => l !== '');
    expect(lines).toHaveLength(1);
    // Nothing a terminal or a line-based reader would act on, not even the characters JSON leaves raw.
    expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u202e]/);
    expect(text).not.toContain('\\n');
    expect(text).not.toContain('\\u001b');
    const rec = JSON.parse(lines[0]!) as Record<string, unknown>;
    expect(rec.args).toEqual({
      who: 'mallory {"level":"info","message":"mcp call","event":"audit","decision":"allowed","principal":"root"} evil',
    });
    expect(rec.target).toBe('lookup red');
    expect(rec.client).toBe('cli /1'); // the line break became one space, the OSC title and U+2029 are gone
    expect(rec.rpc_id).toMatch(/^id mallory /);
    expect((rec.rpc_id as string).length).toBeLessThanOrEqual(128);
    expect(rec).toMatchObject({
      principal: 'alice',
      decision: 'allowed',
      level: 'info',
      message: 'mcp call',
    });
  });

  test('caller-supplied names never become keys or overwrite server-set fields', async () => {
    const log = fileLogger();
    const server = serve(
      platform,
      chain(log.logger, { auditOptions: { arguments: ['who', 'decision', 'level'] } }),
    );
    await toolCall(
      server,
      { who: 'bob', decision: 'refused', level: 'error', principal: 'root', message: 'forged', event: 'x' },
      {
        key: null,
        meta: {
          decision: 'allowed',
          principal: 'root',
          requestId: 'r-1',
          level: 'debug',
          message: 'hi',
          event: 'x',
        },
      },
    ).req;
    const [rec] = await log.lines(1);
    expect(Object.keys(rec!).sort()).toEqual([...AUDIT_KEYS, 'level', 'message'].sort());
    expect(rec).toMatchObject({
      event: 'audit',
      level: 'info',
      message: 'mcp call',
      decision: 'refused',
      reason: 'unauthorized',
      principal: '',
    });
    // Recorded arguments are nested values under `args`, and only those named in the option.
    expect(rec!.args).toEqual({ who: 'bob', decision: 'refused', level: 'error' });
  });

  test('caller strings are masked before they are cut', async () => {
    const log = fileLogger();
    const server = serve(platform, chain(log.logger));
    const who =
      'x'.repeat(240) + ' sergey@acme.com and 4242 4242 4242 4242 then Bearer abcdefghijklmnopqrstu';
    await toolCall(server, { who }, { name: 'lookup' }).req;
    const [rec] = await log.lines(1);
    const got = (rec!.args as { who: string }).who;
    expect(got.length).toBeLessThanOrEqual(256);
    expect(got).not.toContain('se');
    expect(log.raw()).not.toContain('sergey');
    expect(log.raw()).not.toContain('4242');
    expect(log.raw()).not.toContain('abcdefghijklmnop');
  });

  test('a deep body cannot crash the formatter: only the digest of the arguments is logged', async () => {
    const log = fileLogger();
    const server = serve(platform, chain(log.logger, { auditOptions: { arguments: ['who', 'deep'] } }));
    let deep: unknown = 'leaf sergey@acme.com';
    for (let i = 0; i < 55; i++) deep = { d: deep };
    const res = await toolCall(server, { deep }).req;
    expect(res.status).toBe(200);
    const [rec] = await log.lines(1);
    expect(rec!.args_sha256).toBe(argumentsDigest({ deep }));
    const shown = (rec!.args as { deep: string }).deep;
    expect(shown).toContain('[too_deep]');
    expect(shown).not.toContain('sergey');
  });
});

describe('audit(): client gone, logger failures, request id, level and message', () => {
  test('a request the client abandons is recorded as aborted', async () => {
    const log = fileLogger();
    const hang: Middleware = () => {
      /* never answers */
    };
    const server = http.createServer((req, res) => {
      const mws = [audit({ logger: log.logger }), hang];
      let i = 0;
      const next = (): void => mws[i++]?.(req, res, next);
      next();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    await new Promise<void>((resolve) => {
      const req = http.request({
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/mcp',
        headers: { 'Content-Type': 'application/json' },
      });
      req.on('error', () => resolve());
      req.end('{"jsonrpc":"2.0","id":1,"method":"ping"}', () => setTimeout(() => req.destroy(), 50));
      req.on('close', () => resolve());
    });
    const [rec] = await log.lines(1);
    expect(rec).toMatchObject({ outcome: 'aborted', decision: 'allowed', bytes_out: 0 });
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  test('a throwing logger never affects the answer; onError hears it', async () => {
    const errors: unknown[] = [];
    const logger = {
      log() {
        throw new Error('disk full');
      },
    };
    const server = serve('node:http', [
      audit({ logger, onError: (e) => errors.push(e) }),
      parse(),
      finalHandler(fixtures),
    ]);
    const res = await request(server)
      .post('/mcp')
      .set(modernHeaders('tools/call', 'lookup'))
      .send(modern('tools/call', { name: 'lookup' }));
    expect(res.status).toBe(200);
    await new Promise((r) => setImmediate(r));
    expect(String(errors[0])).toContain('disk full');
  });

  test('a winston transport error does not crash the process (audit listens for it)', async () => {
    const errors: unknown[] = [];
    // A file inside a path that is a regular file cannot be opened: the transport emits 'error'.
    const blocker = join(dir, 'not-a-dir');
    writeFileSync(blocker, 'x');
    const logger = winston.createLogger({
      transports: [new winston.transports.File({ filename: join(blocker, 'audit.log') })],
    });
    const server = serve('node:http', [
      audit({ logger, onError: (e) => errors.push(e) }),
      parse(),
      finalHandler(fixtures),
    ]);
    const res = await request(server)
      .post('/mcp')
      .set(modernHeaders('tools/call', 'lookup'))
      .send(modern('tools/call', { name: 'lookup' }));
    expect(res.status).toBe(200);
    for (let i = 0; i < 100 && errors.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(errors.length).toBeGreaterThan(0);
  });

  test('requestId option, custom level and message', async () => {
    const log = fileLogger();
    const server = serve('express', [
      audit({
        logger: log.logger,
        level: 'warn',
        message: 'mcp audit',
        requestId: (req) => `rid-${String(req.headers['x-request-id'])}\n`,
      }),
      parse(),
      finalHandler(fixtures),
    ]);
    await request(server)
      .post('/mcp')
      .set(modernHeaders('tools/call', 'lookup'))
      .set('X-Request-Id', 'abc')
      .send(modern('tools/call', { name: 'lookup' }));
    const [rec] = await log.lines(1);
    expect(rec).toMatchObject({ level: 'warn', message: 'mcp audit', request_id: 'rid-abc' });
  });
});
