/**
 * dispatch() writes an answer's headers with one `writeHead(status, headers)` call
 * (docs/performance.md#one-writehead-per-answer). On the wire the answer is what core's `sendJson` would write:
 * the status, `MCP-Protocol-Version` when spoken, `Content-Type` and `Content-Length`; headers set earlier by other
 * middlewares are kept, and an earlier `Content-Type` or `Content-Length` is replaced, never sent twice.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import request from 'supertest';
import { dispatch } from '../../../middleware/dispatch/index';
import { parse } from '../../../middleware/parse/index';
import { sendJson } from '../../../core/respond';
import type { Middleware } from '../../../core/types';
import { PLATFORMS, serve } from '../../support/dispatch-harness';

const INFO = { name: 's', version: '1' };
const quiet = { error() {} };

const handlers = {
  tools: {
    list: () => ({ tools: [{ name: 'echo', inputSchema: { type: 'object' } }] }),
    call: () => ({ content: [{ type: 'text', text: 'hi' }] }),
  },
};

/** Before the stack: sets headers of its own (and a Content-Type the answer must replace) when asked. */
function early(headers: Record<string, string>): Middleware {
  return (_req: IncomingMessage, res: ServerResponse, next) => {
    for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
    next();
  };
}

const LIST = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} };

describe.each(PLATFORMS)('dispatch: the answer headers on %s', (platform) => {
  function app(headers: Record<string, string> = {}, mw?: Middleware) {
    return serve(platform, [
      early(headers),
      parse({ logger: quiet }),
      mw ?? dispatch({ anonymous: true, handlers, serverInfo: INFO, logger: quiet }),
    ]);
  }

  function post(server: ReturnType<typeof serve>, body: unknown) {
    return request(server)
      .post('/mcp')
      .set('Content-Type', 'application/json')
      .set('Accept', 'application/json, text/event-stream')
      .set('MCP-Protocol-Version', '2025-11-25')
      .send(JSON.stringify(body));
  }

  it('a result: the same headers and body as core sendJson writes', async () => {
    const res = await post(app(), LIST);
    const same: Middleware = (_req, r) => {
      sendJson(r, 200, JSON.parse(res.text), { 'MCP-Protocol-Version': '2025-11-25' });
    };
    const ref = await post(app({}, same), LIST);
    expect(res.status).toBe(200);
    expect(res.text).toBe(ref.text);
    for (const h of ['content-type', 'content-length', 'mcp-protocol-version'])
      expect([h, res.headers[h]]).toEqual([h, ref.headers[h]]);
    expect(res.headers['content-type']).toBe('application/json');
    expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(res.text));
  });

  it('a notification: 202, empty body, Content-Length 0, no Content-Type', async () => {
    const res = await post(app(), { jsonrpc: '2.0', method: 'notifications/initialized' });
    expect(res.status).toBe(202);
    expect(res.text).toBe('');
    expect(res.headers['content-length']).toBe('0');
    expect(res.headers['content-type']).toBeUndefined();
    expect(res.headers['mcp-protocol-version']).toBe('2025-11-25');
  });

  it('headers set earlier are kept; an earlier Content-Type and Content-Length are replaced once', async () => {
    const res = await post(
      app({ 'X-Request-Id': 'r1', 'content-type': 'text/plain', 'Content-Length': '1' }),
      LIST,
    );
    expect(res.status).toBe(200);
    expect(res.headers['x-request-id']).toBe('r1');
    expect(res.headers['content-type']).toBe('application/json');
    expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(res.text));
    const rawHeaders = (res as unknown as { res: { rawHeaders: string[] } }).res.rawHeaders;
    const raw = rawHeaders.filter((_h, i) => i % 2 === 0).map((h) => h.toLowerCase());
    expect(raw.filter((h) => h === 'content-type')).toHaveLength(1);
    expect(raw.filter((h) => h === 'content-length')).toHaveLength(1);
  });
});
