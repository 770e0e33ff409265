/**
 * Issue 36's legacy promises with the official SDK v2 client (`@modelcontextprotocol/client`) in its default
 * (legacy) mode against the demo, as the v1 client shows them in legacy-session, legacy-cancel and legacy-notify:
 * the signed `Mcp-Session-Id` minted at `initialize` is sent back on every later request (POSTs and the GET
 * stream, as the server saw them); `introduce` sends `elicitation/create` only to a client that declared
 * elicitation; aborting `callTool` POSTs `notifications/cancelled` and the demo's `slow` call stops; and a
 * subscribed session's GET stream, which the client opens after `notifications/initialized`, carries
 * `notifications/resources/updated` for `notes://today` after a `note` call.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { startDemo, type RunningDemo } from '../support/demo';

jest.setTimeout(30_000);

const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const KEYS = `demo:sha256:${sha('demo-token')}:users`;
const AUTH = { Authorization: 'Bearer demo-token' };
/** The longest `slow` wait: a call that is not stopped outlives every wait of this file. */
const SLOW_MS = 10_000;
/** How long a wait for something that takes milliseconds may last before the test says it did not happen. */
const PATIENCE_MS = 8_000;

/** A demo for this file: one slot per user, and a shutdown grace that outlives a `slow` call nobody stopped. */
const start = (): Promise<RunningDemo> =>
  startDemo({
    MCP_API_KEYS: KEYS,
    MCP_USER_CONCURRENCY: '1',
    MCP_SHUTDOWN_GRACE_MS: '600000',
    MCP_REQUEST_STATE_KEYS: 'ab'.repeat(32),
  });

let demo: RunningDemo;
/** Demos of single tests, stopped at the end whatever the tests' outcome. */
const others: RunningDemo[] = [];
/** What the demo's HTTP server received: method and `Mcp-Session-Id` of every request to /mcp, in order. */
const seen: Array<{ method: string; session: string | undefined }> = [];
/** The GET streams the demo holds open: the demo stops once the server saw every closed client's stream end. */
let openStreams = 0;
beforeAll(async () => {
  demo = await start();
  demo.server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
    if (req.url?.startsWith('/mcp') !== true) return;
    if (req.method === 'GET') {
      openStreams++;
      res.once('close', () => openStreams--);
    }
    const session = req.headers['mcp-session-id'];
    seen.push({ method: req.method ?? '', session: typeof session === 'string' ? session : undefined });
  });
});
afterAll(async () => {
  // A stream the server still holds when the demo stops would be audited after the audit log closed.
  try {
    await until(() => openStreams === 0, "the closed clients' GET streams ended on the server");
  } finally {
    await Promise.all([demo?.stop(), ...others.map((d) => d.stop())]);
  }
});

/** A resolvable promise. */
function deferred<T = void>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** Wait until `check` holds, polling; fails naming `what` after {@link PATIENCE_MS}. */
async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + PATIENCE_MS;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${PATIENCE_MS} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * A connected v2 client in its default (legacy) mode. `received` lists the methods of the server-to-client
 * requests it was sent; `posted` the methods of the JSON-RPC messages it POSTed; `stream` resolves with the
 * status of its GET once the answer's headers arrived.
 */
async function v2(opts: { elicitation?: boolean; url?: string } = {}) {
  const received: string[] = [];
  const posted: string[] = [];
  const stream = deferred<number>();
  const tracked: typeof fetch = async (input, init) => {
    if (typeof init?.body === 'string') {
      const m = JSON.parse(init.body) as { method?: string };
      if (m.method !== undefined) posted.push(m.method);
    }
    const res = await fetch(input, init);
    if ((init?.method ?? 'GET') === 'GET') stream.resolve(res.status);
    return res;
  };
  const client = new Client(
    { name: 'legacy-v2-client-test', version: '2.0.0' },
    { capabilities: opts.elicitation ? { elicitation: {} } : {} },
  );
  if (opts.elicitation) {
    client.setRequestHandler('elicitation/create', () => {
      received.push('elicitation/create');
      return { action: 'accept', content: { name: 'Ada' } };
    });
  }
  // Whatever else the server sends is counted (and refused, as a client without the capability would).
  client.fallbackRequestHandler = (request) => {
    received.push(request.method);
    return Promise.reject(new Error(`unexpected ${request.method}`));
  };
  const updates: string[] = [];
  const nextUpdate = deferred<string>();
  client.setNotificationHandler('notifications/resources/updated', (n) => {
    updates.push(n.params.uri);
    nextUpdate.resolve(n.params.uri);
  });
  const transport = new StreamableHTTPClientTransport(new URL(opts.url ?? demo.url), {
    requestInit: { headers: AUTH },
    fetch: tracked,
  });
  await client.connect(transport);
  return { client, transport, received, posted, stream: stream.promise, updates, nextUpdate };
}

function textOf(r: unknown): string {
  return ((r as { content: Array<{ text: string }> }).content[0] ?? { text: '' }).text;
}

interface AuditLine {
  method: string;
  target: string;
  outcome: string;
  status: number;
  duration_ms: number;
}

const slowLines = (d: RunningDemo): AuditLine[] =>
  readFileSync(d.auditFile, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as AuditLine)
    .filter((l) => l.method === 'tools/call' && l.target === 'slow');

/** Requests holding a limits slot on the demo now (`mcp_ratelimit_inflight`, summed). */
async function inFlight(d: RunningDemo): Promise<number> {
  const text = await (await fetch(d.url.replace(/\/mcp$/, '/metrics'))).text();
  return text
    .split('\n')
    .filter((l) => l.startsWith('mcp_ratelimit_inflight'))
    .reduce((n, l) => n + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
}

describe('legacy sessions with the official v2 client (default, legacy mode)', () => {
  test('initialize mints a signed session id, which the client sends on every later POST and its GET', async () => {
    const from = seen.length;
    const fromEras = demo.eras.length;
    const { client, transport, stream } = await v2();
    expect(client.getNegotiatedProtocolVersion()).not.toBe('2026-07-28');
    const id = transport.sessionId!;
    expect(id).toMatch(/^s1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(await stream).toBe(200);
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('introduce');
    await client.close();
    expect(demo.eras.slice(fromEras).every((e) => e === 'legacy')).toBe(true);
    const requests = seen.slice(from);
    // The initialize POST carries none; every request after it carries the minted id.
    expect(requests[0]).toEqual({ method: 'POST', session: undefined });
    const later = requests.slice(1);
    expect(later.map((r) => r.method)).toEqual(expect.arrayContaining(['POST', 'GET']));
    expect(later.every((r) => r.session === id)).toBe(true);
  });

  test('without the elicitation capability: no elicitation/create is sent; introduce answers a tool error', async () => {
    const { client, received } = await v2();
    const r = await client.callTool({ name: 'introduce', arguments: {} });
    expect(received).toEqual([]);
    expect(r.isError).toBe(true);
    expect(textOf(r)).toBe('The client did not declare the elicitation capability');
    await client.close();
  });

  test('with the elicitation capability and a handler: the round is sent, answered, and the call completes', async () => {
    const { client, received } = await v2({ elicitation: true });
    const r = await client.callTool({ name: 'introduce', arguments: { greeting: 'Hi' } });
    expect(received).toEqual(['elicitation/create']);
    expect(r.isError).toBeFalsy();
    expect(r.structuredContent).toEqual({ greeting: 'Hi, Ada!' });
    await client.close();
  });
});

describe('legacy cancellation with the official v2 client', () => {
  test('aborting callTool POSTs notifications/cancelled; slow stops: audit aborted, the slot free', async () => {
    // Its own demo: the drain at the end shuts it down. In the legacy era the v2 client POSTs
    // notifications/cancelled, as v1 does (in the 2026 era it aborts the call's own stream instead).
    const d = await start();
    others.push(d);
    const { client, posted } = await v2({ url: d.url });
    const ac = new AbortController();
    const settled = client
      .callTool({ name: 'slow', arguments: { ms: SLOW_MS } }, { signal: ac.signal, timeout: 60_000 })
      .then(
        (v) => ({ result: v }),
        (e: unknown) => ({ error: e }),
      );
    await until(async () => (await inFlight(d)) >= 1, 'the slow call is in flight');
    const t0 = performance.now();
    ac.abort();
    expect(await settled).toMatchObject({ error: expect.anything() });
    await until(() => slowLines(d).length === 1, 'audit records the slow call');
    const stoppedMs = Math.round(performance.now() - t0);
    expect(posted).toContain('notifications/cancelled');
    expect(slowLines(d)[0]).toMatchObject({ outcome: 'aborted', status: 200 });
    // MCP_USER_CONCURRENCY=1: the cancelled call no longer holds the user's slot.
    const second = await client.callTool({ name: 'hello', arguments: { who: 'again' } });
    expect(second.structuredContent).toEqual({ greeting: 'Hello, again!' });
    // The handler returned: the demo has no call in flight left to wait for.
    const t1 = performance.now();
    await d.demo.drain();
    const drainMs = Math.round(performance.now() - t1);
    // The measured times, printed on request only (npm test stays quiet): MCP_TEST_LOGS=1.
    if (process.env.MCP_TEST_LOGS === '1')
      console.log(
        `v2 client: slow ${SLOW_MS} ms cancelled; abort to audit ${stoppedMs} ms, ` +
          `audit ${slowLines(d)[0]!.duration_ms} ms, drain ${drainMs} ms`,
      );
    await client.close();
  });
});

describe('the legacy GET stream with the official v2 client', () => {
  test('a subscribed session receives notifications/resources/updated for notes://today after note', async () => {
    const sub = await v2();
    expect(await sub.stream).toBe(200);
    await sub.client.subscribeResource({ uri: 'notes://today' });
    const r = await sub.client.callTool({ name: 'note', arguments: { text: 'v2 legacy stream' } });
    expect(r.isError).toBeFalsy();
    // Resolves when the update arrived; the test's own timeout is the bound.
    await expect(sub.nextUpdate.promise).resolves.toBe('notes://today');
    expect(sub.updates).toEqual(['notes://today']);
    await sub.client.close();
  });
});
