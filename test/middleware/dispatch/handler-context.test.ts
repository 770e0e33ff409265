/**
 * The handler's context (`ctx`): which members each kind of call gets, and that they work when taken out of the
 * context (`const { progress } = ctx`). The context holds nothing of the request as a function of its own: the
 * functions are made when a handler reads them (docs/performance.md#handlercontext-getters). The first test
 * guards that.
 */
import request from 'supertest';
import { dispatch } from '../../../middleware/dispatch/index';
import type { CallContext } from '../../../core/contract';
import { parse } from '../../../middleware/parse/index';
import type { Middleware, RequestLocals } from '../../../core/types';
import { PLATFORMS, serve } from '../../support/dispatch-harness';

const INFO = { name: 's', version: '1' };
const quiet = { error() {} };
const MODERN = '2026-07-28';

const contexts: CallContext[] = [];
const locals: RequestLocals[] = [];

const handlers = {
  tools: {
    list: (_p: unknown, ctx: CallContext) => {
      contexts.push(ctx);
      return { tools: [] };
    },
    call: (p: Record<string, unknown>, ctx: CallContext) => {
      contexts.push(ctx);
      if (p.name === 'destructured') {
        // Every function taken out of the context and called on its own.
        const { progress, log, charge, requireClientCapabilities, signal } = ctx;
        charge(3);
        charge(4);
        requireClientCapabilities!({});
        const sent = [progress!(1, 2, 'half'), progress!(2, 2), log!('error', { x: 1 }, 'unit')];
        return { content: [{ type: 'text', text: JSON.stringify({ sent, aborted: signal.aborted }) }] };
      }
      if (p.name === 'input') {
        const { inputRequired } = ctx;
        if (ctx.inputResponses)
          return { content: [{ type: 'text', text: JSON.stringify(ctx.inputResponses) }] };
        return inputRequired!({
          inputRequests: {
            name: { method: 'elicitation/create', params: { message: 'name?', requestedSchema: {} } },
          },
          state: { step: 1 },
        });
      }
      return { content: [] };
    },
  },
  notifications: {
    ping: (_p: unknown, ctx: CallContext) => {
      contexts.push(ctx);
    },
  },
};

/** After dispatch's own work: keeps `req.locals` of every request. */
const keepLocals: Middleware = (req, _res, next) => {
  locals.push((req as unknown as { locals: RequestLocals }).locals);
  next();
};

function envelope(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    'io.modelcontextprotocol/protocolVersion': MODERN,
    'io.modelcontextprotocol/clientCapabilities': { elicitation: {} },
    'io.modelcontextprotocol/clientInfo': { name: 't', version: '1' },
    ...extra,
  };
}

describe.each(PLATFORMS)('dispatch: the handler context on %s', (platform) => {
  const server = serve(platform, [
    parse({ logger: quiet }),
    keepLocals,
    dispatch({ anonymous: true, handlers, serverInfo: INFO, logger: quiet, legacyLogLevel: 'debug' }),
  ]);

  function post(method: string, params: Record<string, unknown>, id: number | null = 1, name?: string) {
    const r = request(server)
      .post('/mcp')
      .set('Content-Type', 'application/json')
      .set('Accept', 'application/json, text/event-stream')
      .set('MCP-Protocol-Version', MODERN)
      .set('Mcp-Method', method);
    if (name !== undefined) r.set('Mcp-Name', name);
    const body: Record<string, unknown> = {
      jsonrpc: '2.0',
      method,
      params: { ...params, _meta: envelope(params._meta as Record<string, unknown>) },
    };
    if (id !== null) body.id = id;
    return r.send(JSON.stringify(body));
  }

  beforeEach(() => {
    contexts.length = 0;
    locals.length = 0;
  });

  test('no own property of a context is a function', async () => {
    await post('tools/call', { name: 'plain' }, 1, 'plain');
    await post('tools/list', {});
    await post('notifications/ping', {}, null);
    expect(contexts).toHaveLength(3);
    for (const ctx of contexts) {
      const own = Object.getOwnPropertyNames(ctx).filter(
        (k) => typeof Object.getOwnPropertyDescriptor(ctx, k)?.value === 'function',
      );
      expect(own).toEqual([]);
    }
  });

  test('a request gets progress, log and requireClientCapabilities; MRTR members only where MRTR applies', async () => {
    await post('tools/call', { name: 'plain' }, 1, 'plain');
    await post('tools/list', {});
    const [call, list] = contexts as [CallContext, CallContext];
    for (const ctx of [call, list]) {
      expect(typeof ctx.progress).toBe('function');
      expect(typeof ctx.log).toBe('function');
      expect(typeof ctx.requireClientCapabilities).toBe('function');
      expect(typeof ctx.charge).toBe('function');
      expect(ctx.inputResponses).toBeUndefined();
      expect(ctx.requestState).toBeUndefined();
    }
    expect(typeof call.inputRequired).toBe('function');
    expect(list.inputRequired).toBeUndefined();
    expect(call.method).toBe('tools/call');
    expect(call.era).toBe('modern');
    expect(call.version).toBe(MODERN);
    expect(call.clientCapabilities).toEqual({ elicitation: {} });
  });

  test('a notification gets none of the request-only members', async () => {
    const r = await post('notifications/ping', {}, null);
    expect({ status: r.status, body: r.text }).toEqual({ status: 202, body: '' });
    const [ctx] = contexts as [CallContext];
    expect(ctx.method).toBe('notifications/ping');
    expect(ctx.progress).toBeUndefined();
    expect(ctx.log).toBeUndefined();
    expect(ctx.requireClientCapabilities).toBeUndefined();
    expect(ctx.inputRequired).toBeUndefined();
    expect(typeof ctx.charge).toBe('function');
    expect(ctx.signal.aborted).toBe(false);
  });

  test('functions taken out of the context work: progress and log stream, charge counts', async () => {
    const r = await post(
      'tools/call',
      { name: 'destructured', _meta: { progressToken: 'tok', 'io.modelcontextprotocol/logLevel': 'info' } },
      7,
      'destructured',
    );
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toMatch(/^text\/event-stream/);
    const messages = (r.text.match(/^data: .*$/gm) ?? []).map(
      (l) => JSON.parse(l.slice(6)) as Record<string, any>,
    );
    expect(messages.map((m) => m.method ?? 'answer')).toEqual([
      'notifications/progress',
      'notifications/progress',
      'notifications/message',
      'answer',
    ]);
    expect(messages[0]!.params).toEqual({ progressToken: 'tok', progress: 1, total: 2, message: 'half' });
    expect(messages[2]!.params).toEqual({ level: 'error', data: { x: 1 }, logger: 'unit' });
    expect(JSON.parse(messages[3]!.result.content[0].text)).toEqual({
      sent: [true, true, true],
      aborted: false,
    });
    expect(locals[0]!.chargedMs).toBe(7);
  });

  test('progress refuses a value that does not increase, per request', async () => {
    await post('tools/call', { name: 'plain', _meta: { progressToken: 1 } }, 1, 'plain');
    const [ctx] = contexts as [CallContext];
    // The answer is written: nothing more is sent, whatever the value.
    expect(ctx.progress!(5)).toBe(false);
  });

  test('inputRequired taken out of the context signs a state that comes back on the retry', async () => {
    const first = await post('tools/call', { name: 'input' }, 1, 'input');
    expect(first.body.result.resultType).toBe('input_required');
    const state = first.body.result.requestState as string;
    expect(typeof state).toBe('string');
    const retry = await post(
      'tools/call',
      {
        name: 'input',
        inputResponses: { name: { action: 'accept', content: { name: 'Ada' } } },
        requestState: state,
      },
      2,
      'input',
    );
    expect(JSON.parse(retry.body.result.content[0].text)).toEqual({
      name: { action: 'accept', content: { name: 'Ada' } },
    });
    expect(contexts[1]!.requestState).toEqual({ step: 1 });
  });
});
