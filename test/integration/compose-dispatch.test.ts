/**
 * dispatch() alone and in the documented order after the transport middlewares; outbound transforms; the
 * redaction helper; Express with express.json(); non-POST requests.
 */
import { checkHeaders } from '../../middleware/check-headers/index';
import { classifyRevision } from '../../middleware/classify-revision/index';
import { dispatch } from '../../middleware/dispatch/index';
import { methodGuard } from '../../middleware/method-guard/index';
import { parse } from '../../middleware/parse/index';
import { redact } from '../../middleware/redact/index';
import { ToolRegistry, ok } from '../../handlers/tools/index';
import type { Middleware, OutboundTransform } from '../../core/types';
import { ERAS, PLATFORMS, type Stack, memoryLogger, stack } from '../support/dispatch-harness';

const serverInfo = { name: 'compose', version: '1' };

function registry(): ToolRegistry {
  return new ToolRegistry({
    tools: [
      {
        name: 'weather',
        inputSchema: {
          type: 'object',
          properties: { region: { type: 'string', 'x-mcp-header': 'Region' }, city: { type: 'string' } },
          required: ['city'],
        },
        call: (a) => ok({ city: a.city, region: a.region ?? null, forecast: 'sunny' }),
      },
      { name: 'contact', call: () => ({ content: [{ type: 'text', text: 'Write to alice@example.com' }] }) },
    ],
  });
}

describe.each(PLATFORMS)('composition on %s', (platform) => {
  describe('documented order: methodGuard → parse → classifyRevision → checkHeaders → dispatch', () => {
    let s: Stack;
    beforeAll(async () => {
      const reg = registry();
      s = await stack(platform, [
        methodGuard(),
        parse(),
        classifyRevision(),
        checkHeaders({ paramHeaders: reg.paramHeaders }),
        dispatch({ anonymous: true, handlers: { tools: reg }, serverInfo }),
      ]);
    });
    afterAll(() => s.close());

    test.each(ERAS)(
      'a correct %s call goes through (Mcp-Param-* derived by the test client)',
      async (era) => {
        const res = await s.client({ era }).callTool('weather', { city: 'Oslo', region: 'eu-north' });
        expect(res.status).toBe(200);
        expect(res.body.result.structuredContent).toEqual({
          city: 'Oslo',
          region: 'eu-north',
          forecast: 'sunny',
        });
      },
    );

    test('a missing Mcp-Param-Region is refused before dispatch (400 -32020)', async () => {
      const res = await s
        .client()
        .callTool('weather', { city: 'Oslo', region: 'eu-north' }, { omitHeader: 'Mcp-Param-Region' });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe(-32020);
    });

    test('a wrong Mcp-Param-Region is refused (400 -32020); a sentinel-encoded one is accepted', async () => {
      const c = s.client();
      const bad = await c.callTool(
        'weather',
        { city: 'Oslo', region: 'eu-north' },
        { headers: { 'Mcp-Param-Region': 'us-west' } },
      );
      expect(bad.status).toBe(400);
      const good = await c.callTool(
        'weather',
        { city: 'Oslo', region: 'eu-north' },
        { headers: { 'Mcp-Param-Region': '=?base64?ZXUtbm9ydGg=?=' } },
      );
      expect(good.status).toBe(200);
    });

    test('a missing Mcp-Name is refused (400 -32020)', async () => {
      const res = await s.client().callTool('weather', { city: 'Oslo' }, { omitHeader: 'Mcp-Name' });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe(-32020);
    });

    test('GET → 405 from the method guard', async () => {
      const { default: request } = await import('supertest');
      const get = await request(s.base).get('/mcp');
      expect(get.status).toBe(405);
    });
  });

  describe('dispatch alone', () => {
    let s: Stack;
    let log: ReturnType<typeof memoryLogger>;
    beforeAll(async () => {
      log = memoryLogger();
      s = await stack(platform, [
        dispatch({ anonymous: true, handlers: { tools: registry() }, serverInfo, logger: log }),
      ]);
    });
    afterAll(() => s.close());

    test('parses and classifies by itself: a bad body is refused with the parse step rules', async () => {
      const res = await s.client().post('{"jsonrpc":"2.0",', { 'Content-Type': 'application/json' });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' } });
      const batch = await s.client().post('[{"jsonrpc":"2.0","id":1,"method":"ping"}]');
      expect(batch.status).toBe(400);
      expect(batch.body.error.code).toBe(-32600);
    });

    test('an unsound envelope is refused by the classification step (400)', async () => {
      const c = s.client();
      const unsupported = await c.listTools({}, { version: '1900-01-01' });
      expect([unsupported.status, unsupported.body.error.code]).toEqual([400, -32022]);
      const mismatch = await c.listTools({}, { metaVersion: '1900-01-01' });
      expect([mismatch.status, mismatch.body.error.code]).toEqual([400, -32020]);
      const noCaps = await c.listTools({}, { omitMeta: ['io.modelcontextprotocol/clientCapabilities'] });
      expect([noCaps.status, noCaps.body.error.code]).toEqual([400, -32602]);
    });

    test("it does not check headers (that is checkHeaders' job)", async () => {
      const res = await s
        .client()
        .callTool('weather', { city: 'Oslo', region: 'x' }, { omitHeader: ['Mcp-Name', 'Mcp-Param-Region'] });
      expect(res.status).toBe(200);
    });

    test('another HTTP method gets the JSON 405; OPTIONS is passed on (next())', async () => {
      const { default: request } = await import('supertest');
      const res = await request(s.base).get('/mcp');
      expect([res.status, res.headers.allow]).toEqual([405, 'POST']);
      const preflight = await request(s.base).options('/mcp');
      expect(preflight.status).toBe(404);
      expect(preflight.body).toEqual({ fell: 'through' });
    });
  });

  describe('outbound transforms and redaction', () => {
    let s: Stack;
    const seen: { method: string; kind: string }[] = [];
    beforeAll(async () => {
      const upper: Middleware = (req, _res, next) => {
        const t: OutboundTransform = (value, info) => {
          seen.push(info);
          if (info.method !== 'tools/call') return value;
          const v = value as { content: { type: string; text?: string }[] };
          // Async on purpose: the dispatcher awaits a promised value.
          return Promise.resolve({
            ...v,
            content: v.content.map((b) => (b.text ? { ...b, text: b.text.toUpperCase() } : b)),
          });
        };
        ((req.locals ??= {}).outbound ??= []).push(t);
        next();
      };
      const failing: Middleware = (req, _res, next) => {
        if (req.headers['x-fail-transform']) {
          ((req.locals ??= {}).outbound ??= []).push(() => {
            throw new Error('transform broke');
          });
        }
        next();
      };
      s = await stack(platform, [
        redact(),
        upper,
        failing,
        dispatch({ anonymous: true, handlers: { tools: registry() }, serverInfo, logger: memoryLogger() }),
      ]);
    });
    afterAll(() => s.close());

    test.each(ERAS)(
      'the redaction helper masks a tool result (%s); later transforms see the masked value',
      async (era) => {
        const res = await s.client({ era }).callTool('contact');
        expect(res.status).toBe(200);
        const text = res.body.result.content[0].text as string;
        expect(text).not.toContain('alice@example.com');
        expect(text).not.toContain('ALICE@EXAMPLE.COM');
        expect(text.startsWith('WRITE TO ')).toBe(true);
        expect(seen.some((x) => x.method === 'tools/call' && x.kind === 'result')).toBe(true);
      },
    );

    test('a transform that throws: -32603, nothing of the result is sent', async () => {
      const res = await s
        .client({ autoParamHeaders: false })
        .callTool('contact', {}, { headers: { 'x-fail-transform': '1' } });
      expect(res.status).toBe(200);
      expect(res.body.error).toEqual({ code: -32603, message: 'Internal error' });
      expect(res.text).not.toContain('alice');
    });
  });
});

describe('Express with express.json() mounted first', () => {
  let s: Stack;
  beforeAll(async () => {
    s = await stack('express', [dispatch({ anonymous: true, handlers: { tools: registry() }, serverInfo })], {
      json: true,
    });
  });
  afterAll(() => s.close());

  test.each(ERAS)('the pre-parsed body is used (%s)', async (era) => {
    const res = await s.client({ era }).callTool('weather', { city: 'Rome' });
    expect(res.status).toBe(200);
    expect(res.body.result.structuredContent.city).toBe('Rome');
  });
});
