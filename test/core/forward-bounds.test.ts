import type { Middleware } from '../../core/types';
import { type Harness, callTool, event, json, messagesOf, sse, startHarness } from './forward-harness';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('the forwarding engine: bounds and the server’s own refusals', () => {
  test('a JSON answer over maxAnswerBytes is 502 upstream_invalid', async () => {
    h = await startHarness(async () => json({ jsonrpc: '2.0', id: 1, result: { text: 'x'.repeat(5000) } }), {
      maxAnswerBytes: 1024,
    });
    const res = await h.post(callTool(1, 'big'));
    expect(res.status).toBe(502);
    expect(await res.json()).toMatchObject({ id: 1, error: { code: -32603 } });
    expect(h.audits[0]).toMatchObject({ reason: 'upstream_invalid' });
  });

  test('an SSE event over maxAnswerBytes ends the stream and cancels the server’s', async () => {
    const s = sse();
    h = await startHarness(async () => s.response, { maxAnswerBytes: 1024 });
    const pending = h.post(callTool(2, 'big'));
    s.push(event({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'ok' } }));
    s.push(`data: ${'x'.repeat(2000)}`);
    const res = await pending;
    expect(messagesOf(await res.text())).toHaveLength(1);
    expect(s.cancelled()).toBe(true);
    expect(h.warnings.some((w) => w.includes('cut'))).toBe(true);
  });

  test('the server’s own JSON-RPC refusal passes with its status; 401 from the server is 502 upstream_error', async () => {
    let answer = json({ jsonrpc: '2.0', id: 3, error: { code: -32000, message: 'Session not found' } }, 404);
    h = await startHarness(async () => answer);
    let res = await h.post(callTool(3, 'x'));
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({
      jsonrpc: '2.0',
      id: 3,
      error: { code: -32000, message: 'Session not found' },
    });
    expect(h.audits[0]).toMatchObject({ outcome: 'error', error_code: -32000 });
    answer = json({ jsonrpc: '2.0', id: 4, error: { code: -32001, message: 'bad upstream key' } }, 401);
    res = await h.post(callTool(4, 'x'));
    expect(res.status).toBe(502);
    expect(await res.json()).toEqual({
      jsonrpc: '2.0',
      id: 4,
      error: { code: -32603, message: 'Upstream server error' },
    });
  });

  test('a JSON answer to another id is 502 upstream_invalid', async () => {
    h = await startHarness(async () => json({ jsonrpc: '2.0', id: 99, result: {} }));
    const res = await h.post(callTool(5, 'x'));
    expect(res.status).toBe(502);
  });

  test('subscriptions/listen: no timeout, and charged 0', async () => {
    const s = sse();
    const charged: unknown[] = [];
    const watch: Middleware = (req, res, next) => {
      res.on('close', () => charged.push(req.locals?.chargedMs));
      next();
    };
    h = await startHarness(async () => s.response, { timeoutMs: 50 }, { before: [watch] });
    const res = await h.post({ jsonrpc: '2.0', id: 6, method: 'subscriptions/listen', params: {} });
    expect(res.status).toBe(200);
    await new Promise((r) => setTimeout(r, 200));
    s.push(event({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' }));
    s.end();
    expect(messagesOf(await res.text())).toEqual([
      { jsonrpc: '2.0', method: 'notifications/tools/list_changed' },
    ]);
    while (charged.length === 0) await new Promise((r) => setTimeout(r, 5));
    expect(charged).toEqual([0]);
  });
});
