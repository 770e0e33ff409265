/**
 * Request-scoped streaming: a handler's progress and log notifications turn the answer into an SSE stream
 * (when the client accepts it), in order, ending with the response. Both eras, bare node:http and Express 5.
 */
import { McpError } from '../../../lib/errors';
import { dispatch } from '../../../middleware/dispatch/index';
import { redact } from '../../../middleware/redact/index';
import { ToolRegistry, ok } from '../../../handlers/tools/index';
import type { Middleware, RequestLocals } from '../../../core/types';
import { parseSse } from '../../../testing/client';
import { ERAS, PLATFORMS, type Stack, stack } from '../../support/dispatch-harness';

const PROGRESS_AND_LOG = { progressToken: 'tok-1', 'io.modelcontextprotocol/logLevel': 'warning' };

function registry(): ToolRegistry {
  return new ToolRegistry({
    tools: [
      {
        name: 'work',
        call: async (_args, ctx) => {
          const r1 = ctx.progress!(1, 3, 'one');
          const r2 = ctx.progress!(1); // not increasing: dropped
          const r3 = ctx.progress!(2, 3);
          const r4 = ctx.log!('info', { detail: 'below the threshold' });
          const r5 = ctx.log!('error', { note: 'mail alice@example.com' }, 'db');
          return ok({ r1, r2, r3, r4, r5 });
        },
      },
      {
        name: 'late-failure',
        call: (_args, ctx) => {
          ctx.progress!(1);
          throw new McpError(-32602, 'Failed after starting');
        },
      },
    ],
  });
}

describe.each(PLATFORMS)('streaming on %s', (platform) => {
  let s: Stack;
  const records: RequestLocals[] = [];
  const observe: Middleware = (req, res, next) => {
    res.on('finish', () => records.push({ ...(req.locals ?? {}) }));
    next();
  };
  beforeAll(async () => {
    s = await stack(platform, [
      observe,
      redact(),
      dispatch({
        anonymous: true,
        handlers: { tools: registry() },
        serverInfo: { name: 'st', version: '1' },
      }),
    ]);
  });
  afterAll(() => s.close());

  describe.each(ERAS)('%s era', (era) => {
    const client = () => s.client({ era, autoParamHeaders: false });
    const isModern = era === 'modern';

    test('notifications stream first, in order, then the response', async () => {
      records.length = 0;
      const res = await client().callTool('work', {}, { meta: PROGRESS_AND_LOG });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
      expect(res.headers['x-accel-buffering']).toBe('no');
      expect(res.headers['cache-control']).toBe('no-cache');
      expect(res.headers['mcp-protocol-version']).toBe(isModern ? '2026-07-28' : '2025-11-25');
      expect(res.headers['content-length']).toBeUndefined();
      // The raw stream: one `event: message` per JSON-RPC message, no event ids.
      expect(res.text).not.toMatch(/^id:/m);
      const messages = parseSse(res.text);
      expect(messages.map((m) => m.method ?? 'response')).toEqual(
        isModern
          ? ['notifications/progress', 'notifications/progress', 'notifications/message', 'response']
          : ['notifications/progress', 'notifications/progress', 'response'],
      );
      expect(res.events![0]).toEqual({
        jsonrpc: '2.0',
        method: 'notifications/progress',
        params: { progressToken: 'tok-1', progress: 1, total: 3, message: 'one' },
      });
      expect(res.events![1]!.params).toEqual({ progressToken: 'tok-1', progress: 2, total: 3 });
      expect(res.body.id).toEqual(expect.any(Number));
      expect(res.body.result.structuredContent).toEqual({
        r1: true,
        r2: false,
        r3: true,
        r4: false,
        r5: isModern,
      });
      if (isModern) {
        expect(res.body.result.resultType).toBe('complete');
        const log = res.events![2]!;
        expect((log.params as Record<string, unknown>).level).toBe('error');
        expect((log.params as Record<string, unknown>).logger).toBe('db');
        // The redaction transform ran on the notification too.
        expect(JSON.stringify(log)).not.toContain('alice@example.com');
      }
      const rec = records.find((r) => r.mcp?.method === 'tools/call');
      expect(rec?.response).toEqual({ resultType: 'stream', toolError: false });
    });

    test('without a progressToken or a log level: a plain JSON answer, nothing sent', async () => {
      const res = await client().callTool('work');
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.events).toBeUndefined();
      expect(res.body.result.structuredContent).toEqual({
        r1: false,
        r2: false,
        r3: false,
        r4: false,
        r5: false,
      });
    });

    test('a client that does not accept text/event-stream gets JSON; the notifications are not delivered', async () => {
      const res = await client().callTool(
        'work',
        {},
        { meta: PROGRESS_AND_LOG, headers: { Accept: 'application/json' } },
      );
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.body.result.structuredContent).toEqual({
        r1: false,
        r2: false,
        r3: false,
        r4: false,
        r5: false,
      });
    });

    test('an error after the stream started travels as the last event', async () => {
      const res = await client().callTool('late-failure', {}, { meta: PROGRESS_AND_LOG });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
      expect(res.events).toHaveLength(1);
      expect(res.body.error).toEqual({ code: -32602, message: 'Failed after starting' });
    });
  });
});

describe('parseSse', () => {
  test('events, CRLF, multi-line data, comments', () => {
    const text = ': keep-alive\r\n\r\nevent: message\r\ndata: {"a":1}\r\n\r\ndata: {"b":\ndata: 2}\n\n';
    expect(parseSse(text)).toEqual([{ a: 1 }, { b: 2 }]);
  });
});
