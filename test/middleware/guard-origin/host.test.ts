/**
 * guardOrigin(): the host a request names is read from what arrived, its Host lines (req.rawHeaders) and its
 * target (req.url), not from the one value node:http keeps; an Origin sent twice is no origin.
 */
import http from 'node:http';
import net from 'node:net';
import { guardOrigin } from '../../../middleware/guard-origin/index';
import { scanHost } from '../../../middleware/guard-origin/host';
import { close, listen } from '../../support/dispatch-harness';

describe('scanHost(): the Host lines, the target authority and the Origin lines', () => {
  test.each([
    [['Host', 'a.example:80'], '/mcp', { hosts: 1, host: 'a.example:80', origins: 0 }],
    [['host', 'A.Example:80'], '/mcp', { hosts: 1, host: 'a.example:80', origins: 0 }],
    [['Host', 'a', 'HOST', 'a'], '/mcp', { hosts: 2, host: 'a', origins: 0 }],
    [['Host', 'a', 'X-Host', 'b', 'Hosts', 'c'], '/mcp', { hosts: 1, host: 'a', origins: 0 }],
    [['Origin', 'http://x', 'origin', 'http://x'], '/', { hosts: 0, host: undefined, origins: 2 }],
    [['Host', 'a'], 'http://B.example/mcp', { hosts: 1, host: 'a', target: 'b.example', origins: 0 }],
    [['Host', 'a'], 'HTTPS://b:8443?x', { hosts: 1, host: 'a', target: 'b:8443', origins: 0 }],
    [['Host', 'a'], 'http://u@a/mcp', { hosts: 1, host: 'a', target: 'u@a', origins: 0 }],
    [['Host', 'a'], 'http://a#f', { hosts: 1, host: 'a', target: 'a', origins: 0 }],
    [['Host', 'a'], '*', { hosts: 1, host: 'a', origins: 0 }],
    [['Host', 'a'], 'a:443', { hosts: 1, host: 'a', origins: 0 }],
    [['Host', 'a'], '/http://b/', { hosts: 1, host: 'a', origins: 0 }],
  ])('%j %s', (raw, url, expected) => {
    expect(scanHost(raw, url)).toEqual({ target: undefined, ...expected });
  });
});

/** Send a request head exactly as written on a raw socket; the status line and the JSON body come back. */
async function raw(server: http.Server, head: string[]): Promise<{ status: number; body: any }> {
  const { port } = new URL(await listen(server));
  const text = [...head, 'Content-Length: 0', 'Connection: close', '', ''].join('\r\n');
  try {
    const answer = await new Promise<string>((resolve, reject) => {
      const c = net.connect(Number(port), '127.0.0.1', () => c.end(text));
      let buf = '';
      c.on('data', (d: Buffer) => (buf += d.toString('utf8')));
      c.on('end', () => resolve(buf));
      c.on('error', reject);
    });
    const split = answer.indexOf('\r\n\r\n');
    const body = answer.slice(split + 4);
    return { status: Number(answer.split(' ')[1]), body: body.startsWith('{') ? JSON.parse(body) : body };
  } finally {
    await close(server);
  }
}

const serve = (opts: Parameters<typeof guardOrigin>[0]) =>
  http.createServer((req, res) => guardOrigin(opts)(req, res, () => res.end('ok')));

describe('guardOrigin() on what arrived', () => {
  test.each([
    ['without a Host allow-list', {}],
    ["with allowedHosts '*'", { allowedHosts: '*' as const }],
    ['with the host allowed', { allowedHosts: ['a.example'] }],
  ])('two Host lines are 400 host_duplicated (no id), %s', async (_what, opts) => {
    const res = await raw(serve(opts), ['GET /mcp HTTP/1.1', 'Host: a.example', 'Host: a.example']);
    expect(res).toEqual({
      status: 400,
      body: { jsonrpc: '2.0', error: { code: -32600, message: 'Host must be sent once' } },
    });
  });

  test('an absolute-form target the Host header contradicts is 400 host_mismatch, without an allow-list', async () => {
    const res = await raw(serve({}), ['POST http://b.example/mcp HTTP/1.1', 'Host: a.example']);
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({ code: -32600, message: 'The request target names another host' });
  });

  test('an absolute-form target is the host the allow-list checks (403), before the Host header', async () => {
    const opts = { allowedHosts: ['a.example'] };
    const res = await raw(serve(opts), ['POST http://b.example/mcp HTTP/1.1', 'Host: a.example']);
    expect(res.status).toBe(403);
    // What was checked is the target's authority, and the refusal says so.
    expect(res.body.error).toEqual({
      code: 403,
      message: 'Host not allowed',
      data: { received: 'b.example', allowed: ['a.example'] },
    });
    const same = await raw(serve(opts), ['POST http://A.example/mcp HTTP/1.1', 'Host: a.example']);
    expect(same).toEqual({ status: 200, body: 'ok' });
  });

  test.each([
    ["allowedOrigins '*'", { allowedOrigins: '*' as const }, ['*']],
    ['the origin allowed', { allowedOrigins: ['http://x.example'] }, ['http://x.example']],
  ])('two Origin lines are 403 origin_not_allowed with %s', async (_what, opts, allowed) => {
    const head = ['GET /mcp HTTP/1.1', 'Host: a', 'Origin: http://x.example', 'Origin: http://x.example'];
    const res = await raw(serve(opts), head);
    expect(res).toEqual({
      status: 403,
      body: {
        jsonrpc: '2.0',
        error: {
          code: 403,
          message: 'Origin must be sent once',
          data: { received: ['http://x.example', 'http://x.example'], allowed },
        },
      },
    });
  });

  test('one Host line and one allowed Origin pass', async () => {
    const opts = { allowedOrigins: ['http://x.example'], allowedHosts: ['a'] };
    const res = await raw(serve(opts), ['GET /mcp HTTP/1.1', 'Host: A', 'Origin: http://x.example']);
    expect(res).toEqual({ status: 200, body: 'ok' });
  });
});
