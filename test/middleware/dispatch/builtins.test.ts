/**
 * Built-in services (initialize, ping, server/discover, logging/setLevel, the empty templates list), capability
 * gating and derivation, in both eras, on bare node:http and in Express 5.
 */
import { dispatch } from '../../../middleware/dispatch/index';
import { ERAS, PLATFORMS, type Stack, stack } from '../../support/dispatch-harness';

const SERVER_INFO = { name: 'builtins', version: '0.0.1', title: 'Built-ins' };
const SI = 'io.modelcontextprotocol/serverInfo';
const ALL_VERSIONS = ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'];

const tools = { list: () => ({ tools: [] }), call: () => ({ content: [] }) };
const resources = { list: () => ({ resources: [] }), read: () => ({ contents: [] }) };

describe.each(PLATFORMS)('built-in services on %s', (platform) => {
  describe('with declared capabilities (tools, resources, logging)', () => {
    let s: Stack;
    const capabilities = {
      tools: {},
      resources: {},
      logging: {},
      experimental: { 'example.com/x': { on: true } },
    };
    beforeAll(async () => {
      s = await stack(platform, [
        dispatch({
          anonymous: true,
          handlers: { tools, resources },
          capabilities,
          serverInfo: SERVER_INFO,
          instructions: 'Use the tools.',
          cache: { 'server/discover': { ttlMs: 3600000, cacheScope: 'public' } },
        }),
      ]);
    });
    afterAll(() => s.close());

    test('legacy initialize: negotiated version, capabilities exactly as declared, serverInfo, instructions', async () => {
      const c = s.client({ era: 'legacy' });
      const res = await c.initialize();
      expect(res.status).toBe(200);
      expect(res.body.result).toEqual({
        protocolVersion: '2025-11-25',
        capabilities,
        serverInfo: SERVER_INFO,
        instructions: 'Use the tools.',
      });
      // No version header was sent with initialize, so none comes back; a signed session is minted
      // (test/middleware/dispatch/session/).
      expect(res.headers['mcp-protocol-version']).toBeUndefined();
      expect(res.headers['mcp-session-id']).toMatch(/^s1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    });

    test.each([
      ['2025-11-25', '2025-11-25'],
      ['2025-06-18', '2025-06-18'],
      ['2025-08-01', '2025-06-18'],
      ['2030-01-01', '2025-11-25'],
      ['2026-07-28', '2025-11-25'],
      ['1900-01-01', '2025-11-25'],
      ['latest', '2025-11-25'],
    ])('legacy initialize asking %s is answered with %s (never an error)', async (asked, answered) => {
      const res = await s.client({ era: 'legacy' }).initialize({ protocolVersion: asked });
      expect(res.status).toBe(200);
      expect(res.body.result.protocolVersion).toBe(answered);
    });

    test('initialize with a modern envelope → 404 -32601 (removed)', async () => {
      const res = await s.client().request('initialize', {
        protocolVersion: '2026-07-28',
        capabilities: {},
        clientInfo: { name: 'x', version: '1' },
      });
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe(-32601);
    });

    test('modern server/discover', async () => {
      const res = await s.client().discover();
      expect(res.status).toBe(200);
      expect(res.headers['mcp-protocol-version']).toBe('2026-07-28');
      expect(res.body.result).toEqual({
        resultType: 'complete',
        supportedVersions: ALL_VERSIONS,
        capabilities,
        instructions: 'Use the tools.',
        _meta: { [SI]: SERVER_INFO },
        ttlMs: 3600000,
        cacheScope: 'public',
      });
      expect(Number.isInteger(res.body.result.ttlMs)).toBe(true);
    });

    test('legacy server/discover is answered too (plain)', async () => {
      const res = await s.client({ era: 'legacy' }).discover();
      expect(res.body.result).toEqual({
        supportedVersions: ALL_VERSIONS,
        capabilities,
        instructions: 'Use the tools.',
        _meta: { [SI]: SERVER_INFO },
      });
    });

    test('-32022 data.supported is a subset of discover.supportedVersions', async () => {
      const c = s.client();
      const bad = await c.listTools({}, { version: '1900-01-01' });
      expect(bad.status).toBe(400);
      expect(bad.body.error.code).toBe(-32022);
      expect(bad.body.error.data.requested).toBe('1900-01-01');
      const supported = (await c.discover()).body.result.supportedVersions as string[];
      for (const v of bad.body.error.data.supported as string[]) expect(supported).toContain(v);
    });

    test('legacy logging/setLevel: accepted when logging is declared; a bad level is -32602', async () => {
      const c = s.client({ era: 'legacy' });
      const okRes = await c.request('logging/setLevel', { level: 'warning' });
      expect(okRes.status).toBe(200);
      expect(okRes.body.result).toEqual({});
      const bad = await c.request('logging/setLevel', { level: 'loud' });
      expect(bad.status).toBe(200);
      expect(bad.body.error.code).toBe(-32602);
    });

    test.each(ERAS)('resources/templates/list without a handler: an empty list (%s)', async (era) => {
      const c = s.client({ era });
      const res = await c.listResourceTemplates();
      expect(res.status).toBe(200);
      expect(res.body.result.resourceTemplates).toEqual([]);
      if (era === 'modern')
        expect([res.body.result.ttlMs, res.body.result.cacheScope]).toEqual([0, 'private']);
      const badCursor = await c.listResourceTemplates({ cursor: 'abc' });
      expect(badCursor.body.error.code).toBe(-32602);
    });

    test.each(ERAS)('prompts are not declared: prompts/get → -32601 (%s)', async (era) => {
      const res = await s.client({ era }).getPrompt('x');
      expect(res.status).toBe(era === 'modern' ? 404 : 200);
      expect(res.body.error.code).toBe(-32601);
    });
  });

  describe('derived capabilities', () => {
    let s: Stack;
    beforeAll(async () => {
      s = await stack(platform, [
        dispatch({
          anonymous: true,
          handlers: {
            tools,
            resources: { ...resources, subscribe: () => ({}), unsubscribe: () => ({}) },
            prompts: { list: () => ({ prompts: [] }), get: () => ({ messages: [] }) },
            completion: { complete: () => ({ completion: { values: [] } }) },
          },
          serverInfo: SERVER_INFO,
        }),
      ]);
    });
    afterAll(() => s.close());

    test('the capabilities follow the handlers; logging is never derived; no instructions', async () => {
      const r = (await s.client().discover()).body.result;
      expect(r.capabilities).toEqual({
        tools: {},
        resources: { subscribe: true },
        prompts: {},
        completions: {},
      });
      expect(r.instructions).toBeUndefined();
      const legacy = s.client({ era: 'legacy' });
      expect((await legacy.request('logging/setLevel', { level: 'info' })).body.error.code).toBe(-32601);
      expect((await legacy.request('resources/subscribe', { uri: 'x://y' })).body.result).toEqual({});
    });
  });

  describe('a modern-only server (legacyVersions: [])', () => {
    let s: Stack;
    beforeAll(async () => {
      s = await stack(platform, [
        dispatch({
          anonymous: true,
          handlers: { tools },
          serverInfo: SERVER_INFO,
          versions: { legacyVersions: [] },
        }),
      ]);
    });
    afterAll(() => s.close());

    test('initialize gets 400 -32022 naming the supported versions', async () => {
      const res = await s.client({ era: 'legacy' }).initialize();
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe(-32022);
      expect(res.body.error.data).toEqual({ supported: ['2026-07-28'], requested: '2025-11-25' });
    });

    test('discover lists only the modern versions; modern requests work', async () => {
      const res = await s.client().discover();
      expect(res.body.result.supportedVersions).toEqual(['2026-07-28']);
      expect((await s.client().listTools()).status).toBe(200);
    });
  });

  describe('overriding a built-in', () => {
    let s: Stack;
    beforeAll(async () => {
      s = await stack(platform, [
        dispatch({
          anonymous: true,
          handlers: {
            tools,
            server: { discover: () => ({ supportedVersions: ['2026-07-28'], capabilities: {}, extra: 1 }) },
            ping: () => ({ pong: true }),
          },
          serverInfo: SERVER_INFO,
        }),
      ]);
    });
    afterAll(() => s.close());

    test('a registered handler replaces the built-in; the encoder still adds the protocol fields', async () => {
      const r = (await s.client().discover()).body.result;
      expect(r).toEqual({
        resultType: 'complete',
        supportedVersions: ['2026-07-28'],
        capabilities: {},
        extra: 1,
        ttlMs: 0,
        cacheScope: 'private',
        _meta: { [SI]: SERVER_INFO },
      });
      expect((await s.client({ era: 'legacy' }).ping()).body.result).toEqual({ pong: true });
      // A removed method stays removed in the modern era, whoever registered it.
      expect((await s.client().request('ping')).status).toBe(404);
    });
  });
});
