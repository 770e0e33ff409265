import type { ForwardRequest } from '../../core/forward';
import {
  CARD,
  type Harness,
  callTool,
  event,
  json,
  messagesOf,
  result,
  sse,
  startHarness,
} from './forward-harness';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('the forwarding engine: the straight path', () => {
  test('a JSON result is masked, recorded, and the message reaches send() with the MCP headers only', async () => {
    const seen: ForwardRequest[] = [];
    h = await startHarness(async (r) => {
      seen.push(r);
      return result(
        1,
        { content: [{ type: 'text', text: `card ${CARD}` }] },
        {
          'set-cookie': 'a=b',
          server: 'upstream/1.0',
          'x-powered-by': 'x',
          'mcp-session-id': 'abc',
        },
      );
    });
    const res = await h.post(callTool(1, 'card'), { authorization: 'Bearer secret', cookie: 'c=d' });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).not.toContain(CARD);
    expect(res.headers.get('set-cookie')).toBeNull();
    expect(res.headers.get('server')).toBeNull();
    expect(res.headers.get('x-powered-by')).toBeNull();
    expect(res.headers.get('mcp-session-id')).toMatch(/^f1\./);
    expect(seen).toHaveLength(1);
    expect(seen[0]!.headers.get('authorization')).toBeNull();
    expect(seen[0]!.headers.get('cookie')).toBeNull();
    expect(JSON.parse(Buffer.from(seen[0]!.body!).toString())).toEqual(callTool(1, 'card'));
    expect(seen[0]!.parsedBody).toEqual(callTool(1, 'card'));
    expect(h.audits[0]).toMatchObject({ method: 'tools/call', target: 'card', outcome: 'ok' });
  });

  test('isError: true is audited as tool_error', async () => {
    h = await startHarness(async () => result(2, { content: [], isError: true }));
    const res = await h.post(callTool(2, 'fail'));
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ id: 2, result: { isError: true } });
    expect(h.audits[0]).toMatchObject({ outcome: 'tool_error' });
  });

  test('an SSE answer: the notification event and the response event are masked', async () => {
    const s = sse();
    h = await startHarness(async () => s.response);
    const pending = h.post(callTool(3, 'notify'));
    s.push(': keep-alive\n\n');
    s.push(event({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: CARD } }));
    s.push(event({ jsonrpc: '2.0', id: 3, result: { content: [{ type: 'text', text: CARD }] } }));
    s.end();
    const res = await pending;
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const text = await res.text();
    expect(text).not.toContain(CARD);
    expect(text).toContain(': keep-alive');
    const messages = messagesOf(text);
    expect(messages).toHaveLength(2);
    expect(messages[1]).toMatchObject({ id: 3, result: {} });
  });

  test('the server’s JSON-RPC error is masked too: its message and data, the code kept', async () => {
    h = await startHarness(async () =>
      json({
        jsonrpc: '2.0',
        id: 9,
        error: { code: -32602, message: `no order for card ${CARD}`, data: { card: CARD, order: 42 } },
      }),
    );
    const res = await h.post(callTool(9, 'refund'));
    const text = await res.text();
    expect(text).not.toContain(CARD);
    expect(JSON.parse(text)).toMatchObject({
      id: 9,
      error: { code: -32602, message: expect.stringContaining('no order for card'), data: { order: 42 } },
    });
    expect(h.audits[0]).toMatchObject({ error_code: -32602, redacted: ['card'] });
  });

  test('202 for a notification', async () => {
    h = await startHarness(async () => new Response(null, { status: 202 }));
    const res = await h.post({ jsonrpc: '2.0', method: 'notifications/initialized' });
    expect(res.status).toBe(202);
    expect(await res.text()).toBe('');
  });

  test('upstream 500 → 502 upstream_error; HTML → 502 upstream_invalid', async () => {
    let answer: Response = json({ oops: true }, 500);
    h = await startHarness(async () => answer);
    let res = await h.post(callTool(4, 'x'));
    expect(res.status).toBe(502);
    expect(await res.json()).toEqual({
      jsonrpc: '2.0',
      id: 4,
      error: { code: -32603, message: 'Upstream server error' },
    });
    expect(h.audits[0]).toMatchObject({ reason: 'upstream_error' });
    answer = new Response('<html>hi</html>', { status: 200, headers: { 'content-type': 'text/html' } });
    res = await h.post(callTool(5, 'x'));
    expect(res.status).toBe(502);
    expect(await res.json()).toMatchObject({ id: 5, error: { code: -32603 } });
    expect(h.audits[1]).toMatchObject({ reason: 'upstream_invalid' });
  });
});
