/**
 * The test client (mcpware/testing) builds correct requests of either era, and breaks exactly one thing when
 * asked. A recording middleware keeps what reached the server.
 */
import express from 'express';
import http from 'node:http';
import { dispatch } from '../../middleware/dispatch/index';
import { parse } from '../../middleware/parse/index';
import { ToolRegistry, ok } from '../../handlers/tools/index';
import type { Middleware } from '../../core/types';
import { McpTestClient } from '../../testing/index';
import { PLATFORMS, type Stack, stack } from '../support/dispatch-harness';

interface Recorded {
  headers: http.IncomingHttpHeaders;
  body: Record<string, unknown>;
}

const META_PV = 'io.modelcontextprotocol/protocolVersion';
const META_CAPS = 'io.modelcontextprotocol/clientCapabilities';
const META_INFO = 'io.modelcontextprotocol/clientInfo';

function registry(): ToolRegistry {
  return new ToolRegistry({
    // A non-ASCII name, to check the Mcp-Name header's Base64 encoding (outside the spec's recommended characters).
    allowAnyToolName: true,
    tools: [
      {
        name: 'météo',
        inputSchema: {
          type: 'object',
          properties: {
            city: { type: 'string', 'x-mcp-header': 'City' },
            days: { type: 'integer', 'x-mcp-header': 'Days' },
            opts: { type: 'object', properties: { metric: { type: 'boolean', 'x-mcp-header': 'Metric' } } },
          },
        },
        call: (a) => ok(a),
      },
    ],
  });
}

describe.each(PLATFORMS)('McpTestClient against %s', (platform) => {
  let s: Stack;
  const rec: Recorded[] = [];
  const recorder: Middleware = (req, _res, next) => {
    rec.push({ headers: req.headers, body: req.locals!.mcp!.message.raw });
    next();
  };
  beforeAll(async () => {
    s = await stack(platform, [
      parse(),
      recorder,
      dispatch({ anonymous: true, handlers: { tools: registry() }, serverInfo: { name: 'c', version: '1' } }),
    ]);
  });
  afterAll(() => s.close());
  beforeEach(() => {
    rec.length = 0;
  });

  test('modern: envelope, standard headers, ids from 1', async () => {
    const c = s.client({ clientCapabilities: { elicitation: {} }, clientInfo: { name: 'me', version: '9' } });
    await c.listTools();
    await c.discover();
    const [a, b] = rec;
    expect(a!.body).toEqual({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/list',
      params: {
        _meta: {
          [META_PV]: '2026-07-28',
          [META_CAPS]: { elicitation: {} },
          [META_INFO]: { name: 'me', version: '9' },
        },
      },
    });
    expect(a!.headers['mcp-protocol-version']).toBe('2026-07-28');
    expect(a!.headers['mcp-method']).toBe('tools/list');
    expect(a!.headers['mcp-name']).toBeUndefined();
    expect(a!.headers['content-type']).toBe('application/json');
    expect(a!.headers.accept).toBe('application/json, text/event-stream');
    expect(b!.body.id).toBe(2);
    expect(b!.headers['mcp-method']).toBe('server/discover');
  });

  test('modern tools/call: Mcp-Name with the sentinel, Mcp-Param-* from the schema learned once via tools/list', async () => {
    const c = s.client();
    const res = await c.callTool('météo', { city: 'São Paulo', days: 3, opts: { metric: false } });
    expect(res.status).toBe(200);
    expect(rec.map((r) => r.body.method)).toEqual(['tools/list', 'tools/call']);
    const call = rec[1]!;
    expect(call.headers['mcp-name']).toBe('=?base64?' + Buffer.from('météo').toString('base64') + '?=');
    expect(call.headers['mcp-param-city']).toBe(
      '=?base64?' + Buffer.from('São Paulo').toString('base64') + '?=',
    );
    expect(call.headers['mcp-param-days']).toBe('3');
    expect(call.headers['mcp-param-metric']).toBe('false');
    expect(call.body.id).toBe(2);
    await c.callTool('météo', { city: 'Oslo' });
    expect(rec.map((r) => r.body.method)).toEqual(['tools/list', 'tools/call', 'tools/call']);
    expect(rec[2]!.headers['mcp-param-city']).toBe('Oslo');
    expect(rec[2]!.headers['mcp-param-days']).toBeUndefined();
  });

  test('modern: explicit schema or explicit Mcp-Param-* headers skip tools/list', async () => {
    const c = s.client();
    await c.callTool(
      'météo',
      { city: 'Rome' },
      { inputSchema: { type: 'object', properties: { city: { type: 'string', 'x-mcp-header': 'Town' } } } },
    );
    await c.callTool('météo', { city: 'Rome' }, { paramHeaders: { 'Mcp-Param-City': 'Paris' } });
    expect(rec.map((r) => r.body.method)).toEqual(['tools/call', 'tools/call']);
    expect(rec[0]!.headers['mcp-param-town']).toBe('Rome');
    expect(rec[1]!.headers['mcp-param-city']).toBe('Paris');
  });

  test('breaking one thing: omitHeader, headers, version, headerVersion, metaVersion, omitMeta, meta', async () => {
    const c = s.client({ autoParamHeaders: false, headers: { 'X-Everywhere': '1' } });
    await c.listTools({}, { omitHeader: ['mcp-method', 'X-Everywhere'] });
    await c.listTools({}, { headers: { 'mcp-method': 'prompts/list' } });
    await c.listTools({}, { version: '1900-01-01' });
    await c.listTools({}, { headerVersion: '2025-11-25' });
    await c.listTools({}, { metaVersion: '2030-01-01' });
    await c.listTools({}, { omitMeta: true });
    await c.listTools({}, { omitMeta: [META_CAPS], meta: { progressToken: 7 } });
    expect(rec).toHaveLength(7);
    // The recorder sits after parse(): it sees the requests dispatch() later refuses (bad versions, no _meta).
    const [omit, override, both, header, meta, noMeta, partial] = rec;
    expect(omit!.headers['mcp-method']).toBeUndefined();
    expect(omit!.headers['x-everywhere']).toBeUndefined();
    expect(override!.headers['mcp-method']).toBe('prompts/list');
    expect(override!.headers['x-everywhere']).toBe('1');
    expect(both!.headers['mcp-protocol-version']).toBe('1900-01-01');
    expect((both!.body.params as { _meta: Record<string, unknown> })._meta[META_PV]).toBe('1900-01-01');
    expect(header!.headers['mcp-protocol-version']).toBe('2025-11-25');
    expect((header!.body.params as { _meta: Record<string, unknown> })._meta[META_PV]).toBe('2026-07-28');
    expect(meta!.headers['mcp-protocol-version']).toBe('2026-07-28');
    expect((meta!.body.params as { _meta: Record<string, unknown> })._meta[META_PV]).toBe('2030-01-01');
    expect(noMeta!.body.params).toEqual({});
    const pm = (partial!.body.params as { _meta: Record<string, unknown> })._meta;
    expect(pm[META_CAPS]).toBeUndefined();
    expect(pm.progressToken).toBe(7);
  });

  test('legacy: initialize and notifications/initialized once, then plain requests with the version header', async () => {
    const c = s.client({ era: 'legacy' });
    await c.listTools();
    await c.callTool('météo', { city: 'Oslo' });
    expect(rec.map((r) => r.body.method)).toEqual([
      'initialize',
      'notifications/initialized',
      'tools/list',
      'tools/call',
    ]);
    const [init, initialized, list, call] = rec;
    expect(init!.headers['mcp-protocol-version']).toBeUndefined();
    expect(init!.body.params).toEqual({
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'mcpware-test', version: '0' },
    });
    expect(initialized!.body.id).toBeUndefined();
    expect(initialized!.headers['mcp-protocol-version']).toBe('2025-11-25');
    for (const r of [list!, call!]) {
      expect(r.headers['mcp-protocol-version']).toBe('2025-11-25');
      expect(r.headers['mcp-method']).toBeUndefined();
      expect(r.headers['mcp-name']).toBeUndefined();
      expect((r.body.params as Record<string, unknown>)._meta).toBeUndefined();
    }
  });

  test('legacy: a chosen revision, and skipping the handshake', async () => {
    const c = s.client({ era: 'legacy', version: '2025-06-18' });
    const init = await c.initialize();
    expect(init.body.result.protocolVersion).toBe('2025-06-18');
    await c.listTools();
    expect(rec[rec.length - 1]!.headers['mcp-protocol-version']).toBe('2025-06-18');
    const fresh = s.client({ era: 'legacy' });
    await fresh.listTools({}, { skipInitialize: true });
    expect(rec[rec.length - 1]!.body.method).toBe('tools/list');
  });

  test('notify sends no id', async () => {
    const res = await s.client().notify('notifications/initialized');
    expect(res.status).toBe(202);
    expect('id' in rec[0]!.body).toBe(false);
  });
});

describe('McpTestClient targets', () => {
  test('an Express app: the client starts it on 127.0.0.1 and closes it', async () => {
    const app = express();
    app.use(
      '/mcp',
      dispatch({ anonymous: true, handlers: { tools: registry() }, serverInfo: { name: 'c', version: '1' } }),
    );
    const c = new McpTestClient(app);
    const url = await c.url();
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect((await c.discover()).status).toBe(200);
    await c.close();
  });

  test('an http.Server that is not listening yet', async () => {
    const mw = dispatch({
      anonymous: true,
      handlers: { tools: registry() },
      serverInfo: { name: 'c', version: '1' },
    });
    const server = http.createServer((req, res) => mw(req, res, () => res.end()));
    const c = new McpTestClient(server, { path: '/anything' });
    expect((await c.listTools()).status).toBe(200);
    expect(server.listening).toBe(true);
    expect((server.address() as { address: string }).address).toBe('127.0.0.1');
    await c.close();
    expect(server.listening).toBe(false);
  });
});
