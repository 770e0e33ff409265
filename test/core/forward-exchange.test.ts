import http from 'node:http';
import type { ForwardRequest } from '../../core/forward';
import { UpstreamError } from '../../core/upstream-error';
import { type Harness, callTool, event, messagesOf, result, sse, startHarness } from './forward-harness';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** A send that never answers; it records the signal it got and when that signal aborted. */
function hanging(): {
  send: (r: ForwardRequest) => Promise<Response>;
  signals: AbortSignal[];
  aborted: Promise<unknown>;
} {
  const signals: AbortSignal[] = [];
  let seen!: (reason: unknown) => void;
  const aborted = new Promise<unknown>((r) => (seen = r));
  return {
    signals,
    aborted,
    send: (r) => {
      signals.push(r.signal);
      r.signal.addEventListener('abort', () => seen(r.signal.reason));
      return new Promise<Response>(() => undefined);
    },
  };
}

/** A raw POST over node:http whose request the test can destroy. */
function rawPost(url: string, body: unknown): { req: http.ClientRequest; done: Promise<void> } {
  const req = http.request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
  });
  const done = new Promise<void>((resolve) => {
    req.on('error', () => resolve());
    req.on('close', () => resolve());
  });
  req.end(JSON.stringify(body));
  return { req, done };
}

describe('the forwarding engine: exchanges', () => {
  test('a hung server: 504 upstream_timeout with the id echoed, and the signal send() got is aborted', async () => {
    const hang = hanging();
    h = await startHarness(hang.send, { timeoutMs: 200 });
    const res = await h.post(callTool(7, 'hang'));
    expect(res.status).toBe(504);
    expect(await res.json()).toEqual({
      jsonrpc: '2.0',
      id: 7,
      error: { code: -32603, message: 'Upstream server timed out' },
    });
    expect(hang.signals[0]!.aborted).toBe(true);
    expect(h.audits[0]).toMatchObject({ reason: 'upstream_timeout' });
  });

  test('a client that goes away aborts the exchange', async () => {
    const hang = hanging();
    h = await startHarness(hang.send, { timeoutMs: 0 });
    const { req, done } = rawPost(h.url, callTool(8, 'hang'));
    while (hang.signals.length === 0) await new Promise((r) => setTimeout(r, 5));
    expect(hang.signals[0]!.aborted).toBe(false);
    req.destroy();
    await done;
    await hang.aborted;
    expect(hang.signals[0]!.aborted).toBe(true);
  });

  test('a legacy notifications/cancelled aborts the exchange it names, and is forwarded', async () => {
    const seen: unknown[] = [];
    const hang = hanging();
    h = await startHarness(
      async (r) => {
        seen.push(r.parsedBody);
        if ((r.parsedBody as { method: string }).method === 'tools/call') return hang.send(r);
        return new Response(null, { status: 202 });
      },
      { timeoutMs: 0 },
    );
    const call = h.post(callTool(9, 'hang'));
    while (hang.signals.length === 0) await new Promise((r) => setTimeout(r, 5));
    const cancel = await h.post({
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: 9 },
    });
    expect(cancel.status).toBe(202);
    expect(hang.signals[0]!.aborted).toBe(true);
    await (await call).text();
    expect(seen).toHaveLength(2);
  });

  test('a thrown UpstreamError is its refusal; any other exception is 500 -32603 generic', async () => {
    let fail: unknown = new UpstreamError('upstream_unreachable', 'connect ECONNREFUSED');
    h = await startHarness(() => Promise.reject(fail));
    let res = await h.post(callTool(1, 'x'));
    expect(res.status).toBe(502);
    expect(await res.json()).toEqual({
      jsonrpc: '2.0',
      id: 1,
      error: { code: -32603, message: 'Upstream server unreachable' },
    });
    fail = new Error('secret detail');
    res = await h.post(callTool(2, 'x'));
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({
      jsonrpc: '2.0',
      id: 2,
      error: { code: -32603, message: 'Internal error' },
    });
  });

  test('backpressure: while the client does not read, the engine stops pulling the server stream', async () => {
    const s = sse();
    h = await startHarness(async () => s.response);
    const big = 'x'.repeat(64 * 1024);
    let produced = 0;
    const { req, done } = rawPost(h.url, callTool(3, 'stream'));
    const response = await new Promise<http.IncomingMessage>((r) => req.on('response', r));
    response.pause();
    // Produce on each pull only: a pull the engine does not make is a chunk never produced.
    for (let i = 0; i < 400; i++) {
      const before = s.pulls();
      s.push(
        event({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: big } }),
      );
      produced++;
      await new Promise((r) => setTimeout(r, 2));
      if (s.pulls() === before && i > 10) {
        // No pull for this chunk: wait a little longer to be sure the engine is waiting for drain.
        await new Promise((r) => setTimeout(r, 100));
        if (s.pulls() === before) break;
      }
    }
    const pullsWhilePaused = s.pulls();
    expect(produced).toBeLessThan(400);
    response.resume();
    const chunks: Buffer[] = [];
    response.on('data', (c: Buffer) => chunks.push(c));
    while (s.pulls() === pullsWhilePaused) await new Promise((r) => setTimeout(r, 5));
    s.push(event({ jsonrpc: '2.0', id: 3, result: { content: [] } }));
    s.end();
    await done;
    const messages = messagesOf(Buffer.concat(chunks).toString());
    expect(messages).toHaveLength(produced + 1);
  });

  test('GET streams events as notifications; DELETE passes its status; PUT is 405', async () => {
    const s = sse({ 'mcp-session-id': 's1' });
    const methods: string[] = [];
    h = await startHarness(
      async (r) => {
        methods.push(r.method);
        expect(r.body).toBeUndefined();
        return r.method === 'GET' ? s.response : new Response(null, { status: 204 });
      },
      {},
      { postOnly: false },
    );
    const get = fetch(h.url, { headers: { accept: 'text/event-stream' } });
    s.push(event({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' }));
    s.end();
    const res = await get;
    // The server's session id reaches the client wrapped (signed, bound to the caller).
    const token = res.headers.get('mcp-session-id');
    expect(token).toMatch(/^f1\./);
    expect(messagesOf(await res.text())).toEqual([
      { jsonrpc: '2.0', method: 'notifications/tools/list_changed' },
    ]);
    const del = await fetch(h.url, { method: 'DELETE', headers: { 'mcp-session-id': token! } });
    expect(del.status).toBe(204);
    const put = await fetch(h.url, { method: 'PUT' });
    expect(put.status).toBe(405);
    expect(put.headers.get('allow')).toBe('GET, POST, DELETE');
    expect(methods).toEqual(['GET', 'DELETE']);
  });

  test('the tool label: set only for a tool the server listed', async () => {
    h = await startHarness(async (r) => {
      const m = r.parsedBody as { id: number; method: string };
      if (m.method === 'tools/list')
        return result(m.id, { tools: [{ name: 'known', inputSchema: { type: 'object' } }] });
      return result(m.id, { content: [] });
    });
    await (await h.post(callTool(1, 'random-name'))).text();
    await (await h.post({ jsonrpc: '2.0', id: 2, method: 'tools/list' })).text();
    await (await h.post(callTool(3, 'known'))).text();
    const text = await h.registry.metrics();
    expect(text).toContain('tool="known"');
    expect(text).not.toContain('random-name');
  });

  test('close() aborts the exchanges in flight and resolves', async () => {
    const hang = hanging();
    h = await startHarness(hang.send, { timeoutMs: 0 });
    const pending = h.post(callTool(1, 'hang'));
    while (hang.signals.length === 0) await new Promise((r) => setTimeout(r, 5));
    await h.forwarder.close();
    expect(hang.signals[0]!.aborted).toBe(true);
    expect((await pending).status).toBe(503);
  });
});
