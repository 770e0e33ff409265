/**
 * A synchronous handler is answered in the turn that parsed its request: no promise and no microtask between
 * the body's `end` and the response (the hot path of every tools/list and plain tools/call). Asynchronous
 * handlers, thrown errors, streamed notifications before the answer and cancelled calls keep their behaviour.
 */
import request from 'supertest';
import { dispatch } from '../../middleware/dispatch';
import { parse } from '../../middleware/parse';
import { redact } from '../../middleware/redact';
import type { Middleware } from '../../middleware/types';
import { PLATFORMS, serve } from './harness';

const INFO = { name: 's', version: '1' };
const quiet = { error() {} };

function call(method: string, params: Record<string, unknown> = {}): string {
  return JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });
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
      dispatch({ handlers, serverInfo: INFO, logger: quiet }),
    ]);
    return { server, seen };
  }
  const post = (server: ReturnType<typeof serve>, body: string) =>
    request(server)
      .post('/mcp')
      .set('Content-Type', 'application/json')
      .set('Accept', 'application/json, text/event-stream')
      .set('MCP-Protocol-Version', '2025-11-25')
      .send(body);

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
