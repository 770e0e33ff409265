/**
 * Request-scoped streaming: notifications really are written before the result (while the handler still runs),
 * closing the stream or the connection cancels the handler and frees its limiter slot, and nothing more is
 * written for a cancelled request. Legacy logging follows the server's legacyLogLevel. Bare node:http and
 * Express 5.
 */
import { dispatch } from '../../../middleware/dispatch/index';
import { limits } from '../../../middleware/limits/index';
import { redact } from '../../../middleware/redact/index';
import { ToolRegistry, textResult } from '../../../handlers/tools/index';
import type { Middleware, RequestLocals } from '../../../core/types';
import { PLATFORMS, type Stack, fakeAuth, stack } from '../../support/dispatch-harness';
import {
  deferred,
  envelope,
  legacyHeaders,
  modernHeaders,
  openStream,
  post,
  startRequest,
  until,
} from '../../support/streaming';

const SI = { name: 'streaming', version: '1' };

function call(id: number | string, name: string, meta: Record<string, unknown> = {}, args = {}) {
  return {
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name, arguments: args, _meta: envelope({}, meta) },
  };
}

describe.each(PLATFORMS)('request-scoped streams on %s', (platform) => {
  let s: Stack;
  let url: string;
  const records: RequestLocals[] = [];
  // Per-test hand-offs between the handler and the test.
  let gate = deferred();
  let started = deferred();
  let aborted = deferred<{ progressAfter: boolean | undefined }>();
  const limiter = limits({
    perUserConcurrency: 1,
    globalConcurrency: 0,
    perUserRpm: 0,
    costBudgetPerHour: 0,
  });
  const observe: Middleware = (req, res, next) => {
    res.on('close', () => records.push({ ...(req.locals ?? {}) }));
    next();
  };
  const tools = new ToolRegistry({
    tools: [
      {
        name: 'gated',
        description: 'progress, then waits for the test',
        call: async (_a, ctx) => {
          ctx.progress!(1, 2, 'first');
          await gate.promise;
          ctx.progress!(2, 2, 'second');
          return textResult('done');
        },
      },
      {
        name: 'until-cancelled',
        description: 'progress, then waits for the client to go away',
        call: async (_a, ctx) => {
          ctx.progress!(1);
          started.resolve();
          await new Promise<void>((r) => ctx.signal.addEventListener('abort', () => r(), { once: true }));
          // After the cancellation nothing more may be sent for this request.
          aborted.resolve({ progressAfter: ctx.progress!(2) });
          return textResult('too late');
        },
      },
      {
        name: 'quiet-until-cancelled',
        description: 'no notifications (a JSON answer), waits for the client to go away',
        call: async (_a, ctx) => {
          started.resolve();
          await new Promise<void>((r) => ctx.signal.addEventListener('abort', () => r(), { once: true }));
          aborted.resolve({ progressAfter: undefined });
          return textResult('too late');
        },
      },
      {
        name: 'logs',
        description: 'logs at every level',
        call: (_a, ctx) => {
          const sent = (['debug', 'info', 'warning', 'error'] as const).map((l) => ctx.log!(l, `at ${l}`));
          return textResult(JSON.stringify(sent));
        },
      },
    ],
  });

  beforeAll(async () => {
    s = await stack(platform, [
      observe,
      fakeAuth(),
      limiter,
      redact(),
      dispatch({ anonymous: true, handlers: { tools }, serverInfo: SI, legacyLogLevel: 'warning' }),
    ]);
    url = `${s.base}/mcp`;
  });
  afterAll(() => s.close());
  beforeEach(() => {
    gate = deferred();
    started = deferred();
    aborted = deferred();
    records.length = 0;
  });

  test('a notification arrives while the handler still runs, the result after it, then the stream ends', async () => {
    const st = await openStream(
      url,
      call(1, 'gated', { progressToken: 'p' }),
      modernHeaders('tools/call', 'gated'),
    );
    expect(st.status).toBe(200);
    expect(st.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(st.headers['x-accel-buffering']).toBe('no');
    expect(st.headers['content-length']).toBeUndefined();
    // The handler is blocked on the gate: this event can only have been written before the result exists.
    const first = await st.next();
    expect(first).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/progress',
      params: { progressToken: 'p', progress: 1, total: 2, message: 'first' },
    });
    gate.resolve();
    const second = await st.next();
    expect(second.method).toBe('notifications/progress');
    const final = await st.next();
    expect(final.id).toBe(1);
    expect((final.result as Record<string, unknown>).content).toEqual([{ type: 'text', text: 'done' }]);
    await st.ended;
    await expect(st.next()).rejects.toThrow(/ended/);
    expect(st.text()).not.toMatch(/^id:/m);
    await until(() => records.some((r) => r.mcp?.id === 1), 'the request record');
    const rec = records.find((r) => r.mcp?.id === 1)!;
    expect(rec.response).toEqual({ resultType: 'stream', toolError: false });
    expect(rec.streamed).toBe(2);
  });

  test('closing the stream cancels: the signal fires, nothing more is sent, the limiter slot is freed', async () => {
    const headers = { ...modernHeaders('tools/call', 'until-cancelled'), 'x-user': 'carol' };
    const st = await openStream(url, call(2, 'until-cancelled', { progressToken: 7 }), headers);
    expect((await st.next()).method).toBe('notifications/progress');
    await started.promise;
    // While it runs, carol's only slot is taken.
    const busy = await post(url, call(3, 'logs'), {
      ...modernHeaders('tools/call', 'logs'),
      'x-user': 'carol',
    });
    expect(busy.status).toBe(429);
    expect(busy.messages[0]!.error).toMatchObject({ code: 429, data: { limit: 'user_concurrent' } });

    st.close();
    const after = await aborted.promise;
    expect(after.progressAfter).toBe(false);
    await until(() => limiter.stats().inflight.user === 0, 'the slot to be released');
    const again = await post(url, call(4, 'logs'), {
      ...modernHeaders('tools/call', 'logs'),
      'x-user': 'carol',
    });
    expect(again.status).toBe(200);
    await until(() => records.some((r) => r.mcp?.id === 2), 'the cancelled request record');
    const rec = records.find((r) => r.mcp?.id === 2)!;
    expect(rec.response).toEqual({ resultType: 'cancelled' });
    // Only the one progress notification was ever written.
    expect(rec.streamed).toBe(1);
  });

  test('closing the connection of a JSON answer cancels too', async () => {
    const headers = { ...modernHeaders('tools/call', 'quiet-until-cancelled'), 'x-user': 'dave' };
    const h = startRequest(url, call(5, 'quiet-until-cancelled'), headers);
    await started.promise;
    h.abort();
    await aborted.promise;
    await until(() => records.some((r) => r.mcp?.id === 5), 'the cancelled request record');
    expect(records.find((r) => r.mcp?.id === 5)!.response).toEqual({ resultType: 'cancelled' });
    await until(() => limiter.stats().inflight.user === 0, 'the slot to be released');
  });

  test('modern logs follow the request logLevel; none without it', async () => {
    const withLevel = await post(
      url,
      call(6, 'logs', { 'io.modelcontextprotocol/logLevel': 'warning' }),
      modernHeaders('tools/call', 'logs'),
    );
    const logs = withLevel.messages.filter((m) => m.method === 'notifications/message');
    expect(logs.map((m) => (m.params as Record<string, unknown>).level)).toEqual(['warning', 'error']);
    const without = await post(url, call(7, 'logs'), modernHeaders('tools/call', 'logs'));
    expect(without.headers['content-type']).toMatch(/^application\/json/);
    expect(
      JSON.parse(
        String(
          ((without.messages[0]!.result as Record<string, unknown>).content as { text: string }[])[0]!.text,
        ),
      ),
    ).toEqual([false, false, false, false]);
  });

  test('legacy logs follow the server legacyLogLevel; logging/setLevel cannot change it (stateless)', async () => {
    const msg = { jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'logs', arguments: {} } };
    const r = await post(url, msg, legacyHeaders());
    const logs = r.messages.filter((m) => m.method === 'notifications/message');
    expect(logs.map((m) => (m.params as Record<string, unknown>).level)).toEqual(['warning', 'error']);
    // No legacy client can see more than the server level, whatever it asked for before.
    const set = await post(
      url,
      { jsonrpc: '2.0', id: 9, method: 'logging/setLevel', params: { level: 'debug' } },
      legacyHeaders(),
    );
    expect(set.messages[0]!.error).toMatchObject({ code: -32601 }); // logging is not declared here
    const again = await post(url, { ...msg, id: 10 }, legacyHeaders());
    expect(again.messages.filter((m) => m.method === 'notifications/message')).toHaveLength(2);
  });
});

describe('legacy logging without legacyLogLevel', () => {
  test('no log notifications for legacy requests; logging/setLevel is accepted and validated', async () => {
    const tools = new ToolRegistry({
      tools: [
        {
          name: 'logs',
          description: 'logs',
          call: (_a, ctx) => textResult(String(ctx.log!('emergency', 'x'))),
        },
      ],
    });
    const s = await stack('node:http', [
      dispatch({
        anonymous: true,
        handlers: { tools },
        serverInfo: SI,
        capabilities: { tools: {}, logging: {} },
      }),
    ]);
    try {
      const url = `${s.base}/mcp`;
      const r = await post(
        url,
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'logs' } },
        legacyHeaders(),
      );
      expect(r.headers['content-type']).toMatch(/^application\/json/);
      expect(r.messages[0]!.result).toMatchObject({ content: [{ type: 'text', text: 'false' }] });
      const ok = await post(
        url,
        { jsonrpc: '2.0', id: 2, method: 'logging/setLevel', params: { level: 'info' } },
        legacyHeaders(),
      );
      expect(ok.messages[0]!.result).toEqual({});
      const bad = await post(
        url,
        { jsonrpc: '2.0', id: 3, method: 'logging/setLevel', params: { level: 'loud' } },
        legacyHeaders(),
      );
      expect(bad.messages[0]!.error).toMatchObject({ code: -32602 });
    } finally {
      await s.close();
    }
  });
});
