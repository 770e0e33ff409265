/**
 * The proxy's Send adapter against a real upstream in another process: the headers that go upstream, redirects,
 * refused connections and aborts, as the engine sees them.
 */
import type { IncomingMessage } from 'node:http';
import type { ForwardRequest } from '../../../core/forward';
import { UpstreamError } from '../../../core/upstream-error';
import { checkProxyOptions } from '../../../middleware/proxy/options';
import { type ProxyTransport, proxyTransport } from '../../../middleware/proxy/send';
import { freePort } from '../../support/ports';
import { type UpstreamProcess, startUpstream } from '../../support/upstream-server';

let upstream: UpstreamProcess;
beforeAll(async () => {
  upstream = await startUpstream();
});
afterAll(() => upstream.stop());

const transports: ProxyTransport[] = [];
afterEach(() => transports.splice(0).forEach((t) => t.close()));

/** The Send of `options`: the default node:http transport, or the global fetch given as the `fetch` option. */
function sendFor(kind: 'node:http' | 'fetch', options: Record<string, unknown>): ProxyTransport['send'] {
  const t = proxyTransport(
    checkProxyOptions(kind === 'fetch' ? { ...options, fetch: globalThis.fetch } : options),
  );
  transports.push(t);
  return t.send;
}

function request(
  body: unknown,
  headers: Record<string, string> = {},
  signal: AbortSignal = new AbortController().signal,
): ForwardRequest {
  return {
    method: 'POST',
    headers: new Headers({
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    }),
    body: new TextEncoder().encode(JSON.stringify(body)),
    signal,
    req: {} as IncomingMessage,
  };
}

const call = (name: string) => ({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: { name, arguments: {} },
});

describe.each(['node:http', 'fetch'] as const)('over %s', (kind) => {
  test('the configured headers go upstream; the client Authorization and Cookie never do', async () => {
    const send = sendFor(kind, {
      url: upstream.url,
      headers: { Authorization: 'Bearer upstream-secret', 'X-Tenant': 't1' },
    });
    const res = await send(
      request(call('echo_headers'), { authorization: 'Bearer client', cookie: 'sid=1' }),
    );
    const text = await res.text();
    const data = /^data: (.*)$/m.exec(text)![1]!;
    const received = JSON.parse(
      (JSON.parse(data) as { result: { content: Array<{ text: string }> } }).result.content[0]!.text,
    ) as Record<string, string>;
    expect(received.authorization).toBe('Bearer upstream-secret');
    expect(received['x-tenant']).toBe('t1');
    expect(received.cookie).toBeUndefined();
  });

  test('a redirect is upstream_invalid and is not followed', async () => {
    const before = (await upstream.stats()).calls.card ?? 0;
    const send = sendFor(kind, { url: `${upstream.base}/redirect/mcp` });
    await expect(send(request(call('card')))).rejects.toMatchObject({ reason: 'upstream_invalid' });
    expect((await upstream.stats()).calls.card ?? 0).toBe(before + 1); // the redirecting path only
  });

  test('a refused connection is upstream_unreachable', async () => {
    const port = await freePort();
    const send = sendFor(kind, { url: `http://127.0.0.1:${port}/mcp` });
    const error = await send(request(call('card'))).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({ reason: 'upstream_unreachable' });
    expect((error as Error).message).toContain('ECONNREFUSED');
  });

  test('an abort rejects with the signal reason, for the engine to tell a timeout from a client gone', async () => {
    const send = sendFor(kind, { url: upstream.url });
    const ctrl = new AbortController();
    const reason = new Error('the engine timed out');
    const pending = send(request(call('hang'), {}, ctrl.signal));
    setTimeout(() => ctrl.abort(reason), 50);
    await expect(pending).rejects.toBe(reason);
  });
});
