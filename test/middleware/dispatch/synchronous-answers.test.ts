/**
 * A synchronous handler is answered in the turn that parsed its request: no promise and no microtask between
 * the body's `end` and the response (the hot path of every tools/list and plain tools/call). Asynchronous
 * handlers, thrown errors, streamed notifications before the answer and cancelled calls keep their behaviour.
 */
import request from 'supertest';
import { dispatch } from '../../../middleware/dispatch/index';
import { parse } from '../../../middleware/parse/index';
import { redact } from '../../../middleware/redact/index';
import { type Tool, ToolRegistry } from '../../../handlers/tools/index';
import type { Middleware } from '../../../core/types';
import { PLATFORMS, serve } from '../../support/dispatch-harness';

const INFO = { name: 's', version: '1' };
const quiet = { error() {} };

function call(method: string, params: Record<string, unknown> = {}): string {
  return JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });
}

/** A legacy JSON-RPC POST. */
function post(server: ReturnType<typeof serve>, body: string) {
  return request(server)
    .post('/mcp')
    .set('Content-Type', 'application/json')
    .set('Accept', 'application/json, text/event-stream')
    .set('MCP-Protocol-Version', '2025-11-25')
    .send(body);
}

/** Before parse(): records, at the body's end, whether the answer was already written one microtask later. */
function probe(seen: boolean[]): Middleware {
  return (req, res, next) => {
    req.on('end', () => queueMicrotask(() => seen.push(res.writableEnded)));
    next();
  };
}

const handlers = {
  tools: {
    list: () => ({ tools: [{ name: 'echo', inputSchema: { type: 'object' } }] }),
    call: (params: Record<string, unknown>) => {
      if (params.name === 'boom') throw new Error('hidden');
      if (params.name === 'later') return Promise.resolve({ content: [{ type: 'text', text: 'async' }] });
      return { content: [{ type: 'text', text: `hi ${String(params.name)}` }] };
    },
  },
};

describe.each(PLATFORMS)('dispatch: synchronous answers on %s', (platform) => {
  function app(extra: Middleware[] = []) {
    const seen: boolean[] = [];
    const server = serve(platform, [
      probe(seen),
      parse({ logger: quiet }),
      ...extra,
      dispatch({ anonymous: true, handlers, serverInfo: INFO, logger: quiet }),
    ]);
    return { server, seen };
  }

  test('a synchronous result is written before the next microtask', async () => {
    const { server, seen } = app();
    const r = await post(server, call('tools/call', { name: 'x' }));
    expect(r.body.result.content[0].text).toBe('hi x');
    const l = await post(server, call('tools/list'));
    expect(l.body.result.tools[0].name).toBe('echo');
    expect(seen).toEqual([true, true]);
  });

  test('with a synchronous outbound transform (redaction) too', async () => {
    const { server, seen } = app([redact({ mode: 'mask' })]);
    const r = await post(server, call('tools/call', { name: 'a@example.com' }));
    expect(r.body.result.content[0].text).not.toContain('a@example.com');
    expect(seen).toEqual([true]);
  });

  test('an asynchronous handler is answered later, with the same shape', async () => {
    const { server, seen } = app();
    const r = await post(server, call('tools/call', { name: 'later' }));
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'async' }] } });
    expect(seen).toEqual([false]);
  });

  test('a synchronous throw is a generic error answer, at once', async () => {
    const { server, seen } = app();
    const r = await post(server, call('tools/call', { name: 'boom' }));
    expect(r.body.error).toEqual(expect.objectContaining({ code: -32603 }));
    expect(JSON.stringify(r.body)).not.toContain('hidden');
    expect(seen).toEqual([true]);
  });
});

describe.each(PLATFORMS)('dispatch + ToolRegistry: synchronous answers on %s', (platform) => {
  const echo: Tool = {
    name: 'echo',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    call: (args) => ({ content: [{ type: 'text', text: String(args.text) }] }),
  };
  function app(registry: ToolRegistry) {
    const seen: boolean[] = [];
    const server = serve(platform, [
      probe(seen),
      parse({ logger: quiet }),
      dispatch({ anonymous: true, handlers: { tools: registry }, serverInfo: INFO, logger: quiet }),
    ]);
    return { server, seen };
  }

  test('a static tool: tools/list, tools/call and invalid arguments are answered in the same turn', async () => {
    const { server, seen } = app(new ToolRegistry({ tools: [echo] }));
    const l = await post(server, call('tools/list'));
    expect(l.body.result.tools.map((t: { name: string }) => t.name)).toEqual(['echo']);
    const c = await post(server, call('tools/call', { name: 'echo', arguments: { text: 'yo' } }));
    expect(c.body.result).toEqual({ content: [{ type: 'text', text: 'yo' }] });
    const bad = await post(server, call('tools/call', { name: 'echo', arguments: { text: 1 } }));
    expect(bad.body.result.isError).toBe(true);
    const missing = await post(server, call('tools/call', { name: 'echo' }));
    expect(missing.body.result.isError).toBe(true);
    expect(seen).toEqual([true, true, true, true]);
  });

  test('unknown tools, dynamic tools and hooks take the general path, with the same answers', async () => {
    const after: string[] = [];
    const dynamic: Tool = { ...echo, name: 'dyn', describe: () => ({ description: 'later' }) };
    const { server, seen } = app(
      new ToolRegistry({ tools: [echo, dynamic], after: (e) => void after.push(`${e.name}:${e.outcome}`) }),
    );
    const c = await post(server, call('tools/call', { name: 'echo', arguments: { text: 'a' } }));
    expect(c.body.result.content[0].text).toBe('a');
    const u = await post(server, call('tools/call', { name: 'nope', arguments: {} }));
    expect(u.body.error).toEqual(expect.objectContaining({ code: -32602 }));
    expect(u.body.error.data.available).toEqual(['echo', 'dyn']);
    const l = await post(server, call('tools/list'));
    expect(l.body.result.tools[1]).toEqual(expect.objectContaining({ name: 'dyn', description: 'later' }));
    expect(after).toEqual(['echo:ok', 'nope:unknown_tool']);
    expect(seen).toEqual([false, false, false]);
  });

  test('a subclass that overrides call() or list() keeps its override on the request path', async () => {
    class Logged extends ToolRegistry {
      override call(params: Record<string, unknown>, ctx: Parameters<ToolRegistry['call']>[1]) {
        return super.call({ ...params, arguments: { text: 'overridden' } }, ctx);
      }
      override async list(params: Record<string, unknown>, ctx: Parameters<ToolRegistry['list']>[1]) {
        const r = await super.list(params, ctx);
        return { tools: r.tools.map((t) => ({ ...t, title: 'listed by the subclass' })) };
      }
    }
    const { server } = app(new Logged({ tools: [echo] }));
    const c = await post(server, call('tools/call', { name: 'echo', arguments: { text: 'x' } }));
    expect(c.body.result.content[0].text).toBe('overridden');
    const l = await post(server, call('tools/list'));
    expect(l.body.result.tools[0].title).toBe('listed by the subclass');
  });

  test('an asynchronous tool and a tool that throws are answered as before', async () => {
    const slow: Tool = {
      ...echo,
      name: 'slow',
      call: async () => ({ content: [{ type: 'text', text: 'late' }] }),
    };
    const boom: Tool = {
      ...echo,
      name: 'boom',
      call: () => {
        throw new Error('secret');
      },
    };
    const { server } = app(new ToolRegistry({ tools: [slow, boom] }));
    const s = await post(server, call('tools/call', { name: 'slow', arguments: { text: '' } }));
    expect(s.body.result.content[0].text).toBe('late');
    const b = await post(server, call('tools/call', { name: 'boom', arguments: { text: '' } }));
    expect(b.body.error).toEqual(expect.objectContaining({ code: -32603 }));
    expect(JSON.stringify(b.body)).not.toContain('secret');
  });
});
