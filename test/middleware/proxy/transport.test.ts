/**
 * proxy()'s default transport (node:http with a keep-alive agent of its own) over HTTP, behind the real stack: the
 * connections it keeps to the upstream, its `maxSockets` bound, a hung upstream's socket released at the timeout,
 * and close() ending the connections. The upstream is a real node:http server on loopback that counts them.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import type { Socket } from 'node:net';
import { listenLoopback } from '../../support/observe-harness';
import { envelope, modernHeaders, openStream } from '../../support/streaming';
import { type UpstreamProcess, startUpstream } from '../../support/upstream-server';
import { AUTH, type Stack, rawModernCall, startStack, until } from './stack';

/**
 * A JSON-RPC upstream: `tools/call` of `hang` never answers, `fail` answers JSON that is not UTF-8, anything else
 * answers a text result.
 */
interface CountingUpstream {
  url: string;
  /** Connections ever opened, and those open now. */
  opened: number;
  open: Set<Socket>;
  close(): Promise<void>;
}

async function countingUpstream(): Promise<CountingUpstream> {
  const open = new Set<Socket>();
  const up = { opened: 0, open } as CountingUpstream;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const message = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        id: number | string;
        params?: { name?: string };
      };
      if (message.params?.name === 'hang') return;
      const text = Buffer.from(
        JSON.stringify({
          jsonrpc: '2.0',
          id: message.id,
          result: { content: [{ type: 'text', text: 'ok' }] },
        }),
      );
      // `fail` answers bytes that are not UTF-8 inside the JSON text.
      if (message.params?.name === 'fail') text[text.indexOf('ok')] = 0xff;
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': text.byteLength });
      res.end(text);
    });
  });
  server.on('connection', (socket: Socket) => {
    up.opened++;
    open.add(socket);
    socket.on('close', () => open.delete(socket));
  });
  up.url = `http://127.0.0.1:${await listenLoopback(server)}/mcp`;
  up.close = async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  };
  return up;
}

let upstream: CountingUpstream;
const stacks: Stack[] = [];
beforeEach(async () => {
  upstream = await countingUpstream();
});
afterEach(async () => {
  await Promise.all(stacks.splice(0).map((s) => s.close()));
  await upstream.close();
});

async function stackFor(opts: Parameters<typeof startStack>[1] = {}): Promise<Stack> {
  const s = await startStack(upstream.url, opts);
  stacks.push(s);
  return s;
}

test('requests one after another share one kept-alive connection to the upstream', async () => {
  const stack = await stackFor();
  for (let i = 0; i < 5; i++)
    expect((await rawModernCall(stack.url, 'card', undefined, `k-${i}`)).status).toBe(200);
  expect(upstream.opened).toBe(1);
});

test('maxSockets bounds the connections: concurrent requests wait for the one socket and all are answered', async () => {
  const stack = await stackFor({ proxy: { maxSockets: 1 } });
  const answers = await Promise.all(
    Array.from({ length: 6 }, (_, i) => rawModernCall(stack.url, 'card', undefined, `m-${i}`)),
  );
  expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
  expect(upstream.opened).toBe(1);
});

test('a hung upstream is answered 504 at timeoutMs and its socket released: with maxSockets 1 the next call passes', async () => {
  const stack = await stackFor({ proxy: { maxSockets: 1, timeoutMs: 200 } });
  const hung = await rawModernCall(stack.url, 'hang', undefined, 'h-1');
  expect(hung.status).toBe(504);
  expect(await hung.json()).toMatchObject({ id: 'h-1', error: { code: -32603 } });
  expect((await rawModernCall(stack.url, 'card', undefined, 'h-2')).status).toBe(200);
  expect(upstream.opened).toBe(2); // the hung request's socket was destroyed, not reused
});

test('an answer that is not UTF-8 is upstream_invalid; the next answer is read as usual', async () => {
  const stack = await stackFor();
  expect((await rawModernCall(stack.url, 'fail', undefined, 'f-1')).status).toBe(502);
  const ok = await rawModernCall(stack.url, 'card', undefined, 'f-2');
  expect(await ok.json()).toMatchObject({ id: 'f-2', result: { content: [{ text: 'ok' }] } });
  await until(() => stack.audit.some((r) => r.target === 'fail'));
  expect(stack.audit.find((r) => r.target === 'fail')).toMatchObject({ reason: 'upstream_invalid' });
});

test('close() ends the connections to the upstream', async () => {
  const stack = await stackFor();
  expect((await rawModernCall(stack.url, 'card')).status).toBe(200);
  expect(upstream.open.size).toBe(1);
  await stack.proxy.close();
  await until(() => upstream.open.size === 0);
});

test('an https upstream with a certificate nobody issued is refused: upstream_unreachable, never called', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proxy-tls-'));
  const key = path.join(dir, 'key.pem');
  const cert = path.join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ],
    { stdio: 'ignore' },
  );
  let called = 0;
  const server = https.createServer(
    { key: fs.readFileSync(key), cert: fs.readFileSync(cert) },
    (_req, res) => {
      called++;
      res.writeHead(500).end();
    },
  );
  const port = await listenLoopback(server as unknown as http.Server);
  try {
    const s = await startStack(`https://127.0.0.1:${port}/mcp`);
    stacks.push(s);
    expect((await rawModernCall(s.url, 'card', undefined, 't-1')).status).toBe(502);
    await until(() => s.audit.some((r) => r.target === 'card'));
    expect(s.audit.find((r) => r.target === 'card')).toMatchObject({ reason: 'upstream_unreachable' });
    expect(called).toBe(0);
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

describe('against the SDK upstream in another process', () => {
  let sdk: UpstreamProcess;
  beforeAll(async () => {
    sdk = await startUpstream();
  });
  afterAll(() => sdk.stop());

  test("an https URL's unreachable port is upstream_unreachable", async () => {
    const s = await startStack('https://127.0.0.1:9/mcp');
    stacks.push(s);
    const res = await rawModernCall(s.url, 'card', undefined, 'u-1');
    expect(res.status).toBe(502);
    await until(() => s.audit.some((r) => r.target === 'card'));
    expect(s.audit.find((r) => r.target === 'card')).toMatchObject({ reason: 'upstream_unreachable' });
  });

  test('an open subscriptions/listen stream holds no socket of maxSockets: with 1, a call still passes', async () => {
    const s = await startStack(sdk.url, { proxy: { maxSockets: 1, timeoutMs: 2000 } });
    stacks.push(s);
    const message = {
      jsonrpc: '2.0',
      id: 'sub-1',
      method: 'subscriptions/listen',
      params: { notifications: { toolsListChanged: true }, _meta: envelope() },
    };
    const st = await openStream(s.url, message, { ...modernHeaders('subscriptions/listen'), ...AUTH });
    expect(await st.next()).toMatchObject({ method: 'notifications/subscriptions/acknowledged' });
    expect((await rawModernCall(s.url, 'card', undefined, 's-2')).status).toBe(200);
    st.close();
  });

  test('the SDK upstream answers through the node:http transport, SSE and JSON alike', async () => {
    const s = await startStack(sdk.url, { proxy: { maxSockets: 2 } });
    stacks.push(s);
    for (const tool of ['card', 'notify', 'fail'])
      expect((await rawModernCall(s.url, tool)).status).toBe(200);
  });
});
