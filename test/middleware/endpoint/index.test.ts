/**
 * What mcpEndpoint() exposes of its parts (the metrics handler, the limiter's counts and hooks, the audit, the
 * dispatcher's close and counts, OIDC readiness, the RFC 9728 document) and the authentication choices: API
 * keys and OIDC together, or none when asked for by name.
 */
import http from 'node:http';
import { Writable } from 'node:stream';
import express from 'express';
import { Registry } from 'prom-client';
import request from 'supertest';
import winston from 'winston';
import { hashKey } from '../../../middleware/api-key-auth/index';
import { auditJsonFormat } from '../../../middleware/audit/index';
import { mcpEndpoint, type McpEndpointOptions } from '../../../middleware/endpoint/index';
import { ToolRegistry, ok } from '../../../handlers/tools/index';
import { McpTestClient, TestIssuer } from '../../../testing/index';
import { jsonLogger } from '../../support/json-logger';

const KEY = 'index-key-0123456789abcdef';
const AUTH = { Authorization: `Bearer ${KEY}` };
const keys = [{ userId: 'ci', hash: hashKey(KEY), groups: ['bots'] }];
const quiet = { error() {}, warn() {} };

const tools = () =>
  new ToolRegistry({
    logger: quiet,
    tools: [{ name: 'hello', inputSchema: { type: 'object' }, call: () => ok({ hi: true }) }],
  });
const base = (extra: Partial<McpEndpointOptions> = {}): McpEndpointOptions => ({
  auth: { apiKeys: keys },
  handlers: { tools: tools() },
  dispatch: { serverInfo: { name: 't', version: '1' } },
  logger: quiet,
  ...extra,
});

/** A real winston logger in audit's format whose records land in `records`. */
function auditLogger(records: Record<string, unknown>[]): winston.Logger {
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      records.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      cb();
    },
  });
  return winston.createLogger({
    format: auditJsonFormat(),
    transports: [new winston.transports.Stream({ stream })],
  });
}

describe('what the endpoint exposes', () => {
  test('metrics: the handler serves the registry, and the limiter reports its denials to it', async () => {
    const registry = new Registry();
    const e = mcpEndpoint(base({ registry, limits: { perUserRpm: 1 } }));
    const app = express();
    app.get('/metrics', e.metricsHandler!);
    app.use('/mcp', e);
    const c = new McpTestClient(app, { headers: AUTH });
    try {
      expect((await c.listTools()).status).toBe(200);
      expect((await c.listTools()).status).toBe(429);
      const text = (await request(await c.url()).get('/metrics')).text;
      expect(text).toMatch(/^mcp_ratelimit_denied_total\{reason="rpm"\} 1$/m);
      // The 429 comes before the era is decided.
      expect(text).toMatch(/^mcp_requests_total\{era="modern"\} 1$/m);
      expect(text).toMatch(/^mcp_requests_total\{era="unknown"\} 1$/m);
      expect(e.parts.metrics?.registry).toBe(registry);
    } finally {
      await c.close();
    }
  });

  test('limits hooks of the application run next to the metrics', async () => {
    const denied: string[] = [];
    const e = mcpEndpoint(
      base({ metrics: true, limits: { perUserRpm: 1, hooks: { onDenied: (r) => void denied.push(r) } } }),
    );
    const c = new McpTestClient(http.createServer(e), { headers: AUTH });
    try {
      await c.listTools();
      await c.listTools();
      expect(denied).toEqual(['rpm']);
      const text = await e.parts.metrics!.registry.metrics();
      expect(text).toMatch(/^mcp_ratelimit_denied_total\{reason="rpm"\} 1$/m);
    } finally {
      await c.close();
    }
  });

  test('stats(): the dispatcher, the limiter and the audit; close() resolves', async () => {
    const records: Record<string, unknown>[] = [];
    const e = mcpEndpoint(base({ audit: { logger: auditLogger(records) } }));
    const c = new McpTestClient(http.createServer(e), { headers: AUTH });
    try {
      expect((await c.callTool('hello')).status).toBe(200);
      const s = e.stats();
      expect(s.dispatch).toEqual({
        listenStreams: 0,
        listenPrincipals: 0,
        listenTaskIds: 0,
        pendingInputs: 0,
        tasksRunning: 0,
        inFlight: 0,
        draining: false,
      });
      expect(s.limits?.inflight).toEqual({ user: 0, global: 0 });
      expect(s.audit).toEqual({ dropped: 0 });
      await new Promise((r) => setImmediate(r));
      expect(records.some((r) => r.method === 'tools/call' && r.principal === 'ci')).toBe(true);
    } finally {
      await c.close();
    }
    await expect(e.close()).resolves.toBeUndefined();
    await expect(e.ready).resolves.toBeUndefined();
  });

  test('origin: the allow-lists go to guardOrigin()', async () => {
    const e = mcpEndpoint(base({ origin: { allowedOrigins: ['https://ok.example'] } }));
    const server = http.createServer(e);
    const r = await request(server).post('/mcp').set('Origin', 'https://evil.example').send('{}');
    expect(r.status).toBe(403);
  });
});

describe('API keys and OIDC in one endpoint', () => {
  let idp: TestIssuer;
  const AUD = 'http://127.0.0.1/mcp';
  beforeAll(async () => {
    idp = await TestIssuer.start();
  });
  afterAll(() => idp.stop());

  test('a key and a token are both served; the challenge names the RFC 9728 document', async () => {
    const e = mcpEndpoint(
      base({
        auth: {
          apiKeys: keys,
          oidc: { issuer: idp.url, audience: AUD },
          resourceMetadata: { resource: AUD, authorizationServers: [idp.url] },
        },
      }),
    );
    await e.ready;
    const app = express();
    app.use(e.resourceMetadata!);
    app.use('/mcp', e);
    const token = await idp.sign({ sub: 'alice', aud: AUD });
    const byKey = new McpTestClient(app, { headers: AUTH });
    try {
      expect((await byKey.listTools()).status).toBe(200);
      const byToken = new McpTestClient(await byKey.url(), { headers: { Authorization: `Bearer ${token}` } });
      expect((await byToken.listTools()).status).toBe(200);
      const none = await request(await byKey.url())
        .post('/mcp')
        .set('Content-Type', 'application/json')
        .send('{}');
      expect(none.status).toBe(401);
      expect(none.headers['www-authenticate']).toContain(
        'resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource/mcp"',
      );
      const doc = await request(await byKey.url()).get('/.well-known/oauth-protected-resource/mcp');
      expect(doc.body).toMatchObject({ resource: AUD, authorization_servers: [idp.url] });
    } finally {
      await byKey.close();
      await e.close();
    }
  });
});

describe('auth: { insecureNoAuth: true }', () => {
  test('serves without a principal; limits() says once that it sees none', async () => {
    const log = jsonLogger();
    const e = mcpEndpoint(base({ auth: { insecureNoAuth: true }, logger: log.logger }));
    const c = new McpTestClient(http.createServer(e));
    try {
      for (let i = 0; i < 3; i++) expect((await c.listTools()).status).toBe(200);
    } finally {
      await c.close();
    }
    expect(log.records('mcpEndpoint:')).toHaveLength(1);
    expect(log.records('limits:')).toHaveLength(1);
  });
});
