/**
 * The dispatcher's rules and built-in services, in both eras, on bare node:http and in Express 5.
 */
import http from 'node:http';
import { McpError } from '../../../lib/errors';
import { dispatch } from '../../../middleware/dispatch/index';
import type { CallContext } from '../../../core/contract';
import type { Middleware, RequestLocals } from '../../../core/types';
import { ERAS, PLATFORMS, type Stack, deferred, memoryLogger, stack } from '../../support/dispatch-harness';

const SERVER_INFO = { name: 'test-server', version: '1.2.3' };
const SI = 'io.modelcontextprotocol/serverInfo';

/** Everything the handlers saw, per test run. */
interface Seen {
  notifications: { method: string; params: unknown; era: string }[];
  contexts: CallContext[];
  aborted: ReturnType<typeof deferred<string>>;
  started: ReturnType<typeof deferred<void>>;
}

function handlers(seen: Seen) {
  return {
    tools: {
      list: (_p: Record<string, unknown>, ctx: CallContext) => {
        seen.contexts.push(ctx);
        return { tools: [{ name: 'echo', inputSchema: { type: 'object' } }] };
      },
      call: async (p: Record<string, unknown>, ctx: CallContext) => {
        seen.contexts.push(ctx);
        switch (p.name) {
          case 'boom':
            throw new Error('secret detail: db password is hunter2');
          case 'invalid':
            throw new McpError(-32602, 'Bad thing', { field: 'x' });
          case 'needs-elicitation':
            throw new McpError(-32021, 'Server requires the elicitation capability', {
              requiredCapabilities: { elicitation: {} },
            });
          case 'old-not-found':
            throw new McpError(-32002, 'Resource not found', { uri: 'x://y' });
          case 'reserved':
            throw new McpError(-32050, 'Made-up reserved code');
          case 'app-status':
            throw new McpError(4000, 'Conflict', undefined, 409);
          case 'app-404':
            throw new McpError(4001, 'Gone', undefined, 404);
          case 'string':
            return 'not an object';
          case 'undefined':
            return undefined;
          case 'input-required':
            return { resultType: 'input_required', requestState: 'abc' };
          case 'weird-type':
            return { resultType: 'partial', content: [] };
          case 'forge':
            return { content: [], _meta: { [SI]: { name: 'forged', version: '0' }, 'example.com/k': 1 } };
          case 'bigint':
            return { content: [], n: BigInt(1) };
          case 'tool-error':
            return { content: [{ type: 'text', text: 'no' }], isError: true };
          case 'charge':
            ctx.charge(5);
            ctx.charge(7);
            ctx.charge(Number.NaN);
            return { content: [] };
          case 'wait':
            seen.started.resolve();
            return new Promise((resolve) => {
              ctx.signal.addEventListener('abort', () => {
                seen.aborted.resolve('aborted');
                resolve({ content: [] });
              });
            });
          case 'ctx':
            return {
              content: [],
              structuredContent: {
                method: ctx.method,
                id: ctx.id,
                era: ctx.era,
                version: ctx.version ?? null,
                principal: ctx.principal?.userId ?? null,
                caps: ctx.clientCapabilities,
                aborted: ctx.signal.aborted,
              },
            };
          default:
            return { content: [{ type: 'text', text: `called ${String(p.name)}` }] };
        }
      },
    },
    resources: {
      list: () => ({ resources: [], ttlMs: 60000, cacheScope: 'public' }),
      read: (p: Record<string, unknown>) => {
        if (p.uri === 'half://hint') return { contents: [{ uri: 'half://hint', text: '' }], ttlMs: 5 };
        if (p.uri === 'bad://hint')
          return { contents: [{ uri: 'bad://hint', text: '' }], ttlMs: -1, cacheScope: 'private' };
        return { contents: [{ uri: String(p.uri), text: 'hello' }] };
      },
    },
    notifications: {
      initialized: (params: unknown, ctx: CallContext) => {
        seen.notifications.push({ method: ctx.method, params, era: ctx.era });
      },
      boom: () => {
        throw new Error('notification handler failure');
      },
    },
    custom: () => ({ custom: true }),
  };
}

function newSeen(): Seen {
  return { notifications: [], contexts: [], aborted: deferred<string>(), started: deferred<void>() };
}

describe.each(PLATFORMS)('dispatch on %s', (platform) => {
  describe.each(ERAS)('%s era', (era) => {
    let s: Stack;
    let seen: Seen;
    let log: ReturnType<typeof memoryLogger>;
    const records: RequestLocals[] = [];
    // Records what the dispatcher left on req.locals once the response finished (audit/metrics read it so).
    const observe: Middleware = (req, res, next) => {
      res.on('finish', () => records.push({ ...(req.locals ?? {}) }));
      next();
    };

    beforeAll(async () => {
      seen = newSeen();
      log = memoryLogger();
      s = await stack(platform, [
        observe,
        dispatch({
          anonymous: true,
          handlers: handlers(seen),
          serverInfo: SERVER_INFO,
          instructions: 'Be nice.',
          cache: { 'tools/list': { ttlMs: 30000, cacheScope: 'public' } },
          logger: log,
        }),
      ]);
    });
    afterAll(() => s.close());

    const client = () => s.client({ era, autoParamHeaders: false });
    const isModern = era === 'modern';
    const notFoundStatus = isModern ? 404 : 200;

    test('a result carries the protocol fields of its era', async () => {
      const res = await client().listTools();
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      const r = res.body.result;
      expect(r.tools).toEqual([{ name: 'echo', inputSchema: { type: 'object' } }]);
      if (isModern) {
        expect(Object.keys(r)[0]).toBe('resultType');
        expect(r.resultType).toBe('complete');
        expect(r.ttlMs).toBe(30000);
        expect(r.cacheScope).toBe('public');
        expect(r._meta[SI]).toEqual(SERVER_INFO);
      } else {
        expect(r).toEqual({ tools: [{ name: 'echo', inputSchema: { type: 'object' } }] });
      }
    });

    test('the response repeats MCP-Protocol-Version', async () => {
      const res = await client().listTools();
      expect(res.headers['mcp-protocol-version']).toBe(isModern ? '2026-07-28' : '2025-11-25');
    });

    test(
      isModern
        ? 'Mcp-Session-Id and Last-Event-ID are ignored; no session id is sent back'
        : 'an Mcp-Session-Id this server did not sign → 404 session_invalid (no session id sent back)',
      async () => {
        const res = await client().listTools(
          {},
          { headers: { 'Mcp-Session-Id': 'abc', 'Last-Event-ID': '5' } },
        );
        expect(res.headers['mcp-session-id']).toBeUndefined();
        if (!isModern) {
          expect(res.status).toBe(404);
          expect(res.body.error).toEqual({ code: -32001, message: 'Session not found' });
          return;
        }
        expect(res.status).toBe(200);
        expect(res.body.result.tools).toHaveLength(1);
      },
    );

    if (!isModern) {
      test('legacy: an unsupported MCP-Protocol-Version header → 400; a missing one is served (assumed 2025-03-26)', async () => {
        const c = client();
        const bad = await c.listTools({}, { headerVersion: '2024-01-01' });
        expect(bad.status).toBe(400);
        expect(bad.body.error.code).toBe(-32602);
        const none = await c.callTool('ctx', {}, { omitHeader: 'MCP-Protocol-Version' });
        expect(none.status).toBe(200);
        expect(none.body.result.structuredContent.version).toBe('2025-03-26');
        expect(none.headers['mcp-protocol-version']).toBeUndefined();
      });
    }

    test('non-cacheable results carry no cache hint; every modern result carries resultType and serverInfo', async () => {
      const res = await client().callTool('plain');
      const r = res.body.result;
      expect(r.content).toEqual([{ type: 'text', text: 'called plain' }]);
      expect(r.ttlMs).toBeUndefined();
      expect(r.cacheScope).toBeUndefined();
      if (isModern) {
        expect(r.resultType).toBe('complete');
        expect(r._meta[SI]).toEqual(SERVER_INFO);
      } else {
        expect(r.resultType).toBeUndefined();
        expect(r._meta).toBeUndefined();
      }
    });

    test('an undefined result is the empty result', async () => {
      const r = (await client().callTool('undefined')).body.result;
      expect(r).toEqual(isModern ? { resultType: 'complete', _meta: { [SI]: SERVER_INFO } } : {});
    });

    test('a handler cache hint wins over the default; a half or invalid hint is a server bug (-32603)', async () => {
      const list = (await client().listResources()).body.result;
      if (isModern) expect([list.ttlMs, list.cacheScope]).toEqual([60000, 'public']);
      else expect(list).toEqual({ resources: [] });
      const read = (await client().readResource('ok://x')).body.result;
      if (isModern) expect([read.ttlMs, read.cacheScope]).toEqual([0, 'private']);
      for (const uri of ['half://hint', 'bad://hint']) {
        const res = await client().readResource(uri);
        if (isModern) {
          expect(res.status).toBe(200);
          expect(res.body.error).toEqual({ code: -32603, message: 'Internal error' });
        } else {
          // Legacy results carry no cache hint at all, so the handler's fields are simply dropped.
          expect(res.body.result.ttlMs).toBeUndefined();
        }
      }
    });

    test('a handler cannot forge serverInfo; its own _meta keys are kept (modern)', async () => {
      const r = (await client().callTool('forge')).body.result;
      if (isModern) expect(r._meta).toEqual({ [SI]: SERVER_INFO, 'example.com/k': 1 });
      else expect(r._meta).toEqual({ [SI]: { name: 'forged', version: '0' }, 'example.com/k': 1 });
    });

    test('unknown method → -32601 (404 modern, 200 legacy)', async () => {
      const res = await client().request('unknown/method');
      expect(res.status).toBe(notFoundStatus);
      expect(res.body).toEqual({
        jsonrpc: '2.0',
        id: expect.any(Number),
        error: { code: -32601, message: 'Method not found', data: { method: 'unknown/method' } },
      });
    });

    test('a method of an undeclared capability → -32601 with the reason', async () => {
      const res = await client().listPrompts();
      expect(res.status).toBe(notFoundStatus);
      expect(res.body.error.code).toBe(-32601);
      expect(res.body.error.data.reason).toBe('Server does not support the prompts capability');
      const c = await client().complete({
        ref: { type: 'ref/prompt', name: 'x' },
        argument: { name: 'a', value: '' },
      });
      expect(c.status).toBe(notFoundStatus);
      expect(c.body.error.data.reason).toBe('Server does not support the completions capability');
    });

    test.each([
      ['tools/list/'],
      ['tools//list'],
      ['/tools/list'],
      ['tools.list'],
      ['tools/constructor'],
      ['tools/toString'],
      ['tools/hasOwnProperty'],
      ['tools/__proto__'],
      ['constructor'],
      ['toString'],
      ['notifications/initialized'],
    ])('%s as a request is not routed (-32601)', async (method) => {
      const res = await client().request(method);
      expect(res.status).toBe(notFoundStatus);
      expect(res.body.error.code).toBe(-32601);
    });

    test('a root method handler answers in both eras', async () => {
      const res = await client().request('custom');
      expect(res.status).toBe(200);
      expect(res.body.result.custom).toBe(true);
    });

    test.each(['ping', 'logging/setLevel', 'resources/subscribe', 'resources/unsubscribe'])(
      '%s: removed in the modern era (404), legacy rules otherwise',
      async (method) => {
        const params =
          method === 'logging/setLevel'
            ? { level: 'info' }
            : method.startsWith('resources/')
              ? { uri: 'x://y' }
              : {};
        const res = await client().request(method, params);
        if (isModern) {
          expect(res.status).toBe(404);
          expect(res.body.error.code).toBe(-32601);
          expect(res.body.error.data.reason).toMatch(/Removed/);
        } else if (method === 'ping') {
          expect(res.status).toBe(200);
          expect(res.body.result).toEqual({});
        } else {
          // No logging capability, no resources.subscribe: not declared, not answered.
          expect(res.status).toBe(200);
          expect(res.body.error.code).toBe(-32601);
        }
      },
    );

    test('notification → 202 with an empty body; its handler runs', async () => {
      const before = seen.notifications.length;
      const res = await client().notify('notifications/initialized', { x: 1 });
      expect(res.status).toBe(202);
      expect(res.text).toBe('');
      expect(res.headers['content-length']).toBe('0');
      expect(res.headers['mcp-protocol-version']).toBe(isModern ? '2026-07-28' : '2025-11-25');
      // The handler runs after the 202 (it is not awaited): wait for it without timing assumptions.
      for (let i = 0; i < 100 && seen.notifications.length === before; i++)
        await new Promise((r) => setImmediate(r));
      const n = seen.notifications[seen.notifications.length - 1]!;
      expect(n.method).toBe('notifications/initialized');
      expect(n.era).toBe(era);
      expect((n.params as Record<string, unknown>).x).toBe(1);
    });

    test('a failing notification handler is logged; the 202 stands', async () => {
      const res = await client().notify('notifications/boom');
      expect(res.status).toBe(202);
      for (let i = 0; i < 100 && !log.lines.some((l) => l.message.includes('notifications/boom')); i++)
        await new Promise((r) => setImmediate(r));
      expect(
        log.lines.some((l) => l.message.includes('notification handler for notifications/boom failed')),
      ).toBe(true);
    });

    test('a notification for a request method is accepted and runs nothing', async () => {
      const n = seen.contexts.length;
      const res = await client().notify('tools/call', { name: 'plain' });
      expect(res.status).toBe(202);
      await new Promise((r) => setImmediate(r));
      expect(seen.contexts.length).toBe(n);
    });

    test('a posted JSON-RPC response: 202 legacy, 400 -32600 with a modern header', async () => {
      const res = await client().respond(7, { ok: true });
      if (isModern) {
        expect(res.status).toBe(400);
        expect(res.body).toEqual({
          jsonrpc: '2.0',
          error: { code: -32600, message: 'JSON-RPC responses are not accepted by this server' },
        });
      } else {
        expect(res.status).toBe(202);
        expect(res.text).toBe('');
      }
    });

    test('McpError keeps its code and data, in-band on 200', async () => {
      const res = await client().callTool('invalid');
      expect(res.status).toBe(200);
      expect(res.body.error).toEqual({ code: -32602, message: 'Bad thing', data: { field: 'x' } });
    });

    test('-32021 travels with 400', async () => {
      const res = await client().callTool('needs-elicitation');
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe(-32021);
      expect(res.body.error.data).toEqual({ requiredCapabilities: { elicitation: {} } });
    });

    test('-32002: replaced by -32602 in the modern era, kept in the legacy era', async () => {
      const res = await client().callTool('old-not-found');
      expect(res.status).toBe(200);
      expect(res.body.error.code).toBe(isModern ? -32602 : -32002);
      expect(res.body.error.data).toEqual({ uri: 'x://y' });
    });

    test('an undefined code of the MCP-reserved range becomes -32603', async () => {
      const res = await client().callTool('reserved');
      expect(res.body.error).toEqual({ code: -32603, message: 'Internal error' });
    });

    test('an explicit McpError status is kept, but a legacy answer is never 404', async () => {
      expect((await client().callTool('app-status')).status).toBe(409);
      expect((await client().callTool('app-404')).status).toBe(isModern ? 404 : 200);
    });

    test('anything else thrown → -32603 "Internal error", detail only in the log', async () => {
      const res = await client().callTool('boom');
      expect(res.status).toBe(200);
      expect(res.body.error).toEqual({ code: -32603, message: 'Internal error' });
      expect(res.text).not.toContain('hunter2');
      const line = log.lines.find((l) => JSON.stringify(l.meta ?? {}).includes('hunter2'));
      expect(line).toBeDefined();
      expect(JSON.stringify(line!.meta)).toContain('stack');
    });

    test.each(['string', 'weird-type', 'bigint'])('a malformed result (%s) → -32603', async (name) => {
      const res = await client().callTool(name);
      expect(res.status).toBe(200);
      expect(res.body.error).toEqual({ code: -32603, message: 'Internal error' });
    });

    test('input_required: modern only, on the methods that allow it, without a cache hint', async () => {
      const res = await client().callTool('input-required');
      if (isModern) {
        expect(res.body.result.resultType).toBe('input_required');
        expect(res.body.result.requestState).toBe('abc');
        expect(res.body.result.ttlMs).toBeUndefined();
      } else expect(res.body.error.code).toBe(-32603);
    });

    test('the context: method, id, era, version, client capabilities', async () => {
      const c = s.client({ era, autoParamHeaders: false, clientCapabilities: { elicitation: {} } });
      const res = await c.callTool('ctx', {}, { id: 'req-1' });
      expect(res.body.result.structuredContent).toEqual({
        method: 'tools/call',
        id: 'req-1',
        era,
        version: isModern ? '2026-07-28' : '2025-11-25',
        principal: null,
        caps: isModern ? { elicitation: {} } : {},
        aborted: false,
      });
    });

    test('req.locals.response is written before the answer', async () => {
      records.length = 0;
      await client().callTool('tool-error');
      await client().callTool('boom');
      await client().listTools();
      const rs = records
        .filter((r) => r.mcp?.kind === 'request' && r.mcp.method !== 'initialize')
        .map((r) => r.response);
      expect(rs).toEqual([
        { resultType: 'complete', toolError: true },
        { code: -32603 },
        { resultType: 'complete' },
      ]);
    });

    test('ctx.charge adds to req.locals.chargedMs (non-finite values ignored)', async () => {
      records.length = 0;
      await client().callTool('charge');
      const r = records.find((x) => x.mcp?.method === 'tools/call');
      expect(r?.chargedMs).toBe(12);
    });

    test('the AbortSignal fires when the client goes away', async () => {
      seen.aborted = deferred<string>();
      seen.started = deferred<void>();
      const c = client();
      if (!isModern) await c.initialize();
      const url = new URL('/mcp', s.base);
      const body = JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: isModern ? { name: 'wait', _meta: c.envelope() } : { name: 'wait' },
      });
      const headers: Record<string, string> = {
        'Content-Type': 'application/json',
        'MCP-Protocol-Version': c.version,
      };
      if (isModern) Object.assign(headers, { 'Mcp-Method': 'tools/call', 'Mcp-Name': 'wait' });
      const req = http.request(url, { method: 'POST', headers });
      req.on('error', () => undefined);
      req.end(body);
      await seen.started.promise;
      req.destroy();
      await expect(seen.aborted.promise).resolves.toBe('aborted');
    });
  });
});
