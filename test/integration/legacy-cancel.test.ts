/**
 * Legacy cancellation with the official SDK v1 client as the peer: aborting `callTool` sends
 * `notifications/cancelled`, and the demo's `slow` call stops (its handler returns: the demo drains at once), its
 * stream ends without a result, audit records it aborted and the per-user slot is free again. On one demo, and on
 * two demos sharing a redis-server with the cancellation posted to the other one. A cancellation from another
 * API key, or naming an unknown id, changes nothing.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type RunningDemo, startDemo } from '../support/demo';
import { type RedisServer, redisDescribe, startRedis } from '../support/redis';

jest.setTimeout(30_000);

const sha = (s: string): string => createHash('sha256').update(s).digest('hex');
const KEYS = `demo:sha256:${sha('demo-token')}:users,other:sha256:${sha('other-token')}:users`;
/** The longest `slow` wait: a call that is not stopped outlives every wait of this file. */
const SLOW_MS = 10_000;
/** How long a wait for something that takes milliseconds may last before the test says it did not happen. */
const PATIENCE_MS = 8_000;
const STATE_KEY = 'ab'.repeat(32);

const running: RunningDemo[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((d) => d.stop()));
});

async function demo(env: Record<string, string> = {}): Promise<RunningDemo> {
  const d = await startDemo({
    MCP_API_KEYS: KEYS,
    MCP_USER_CONCURRENCY: '1',
    MCP_SHUTDOWN_GRACE_MS: '600000',
    MCP_REQUEST_STATE_KEYS: STATE_KEY,
    ...env,
  });
  running.push(d);
  return d;
}

/** Wait until `check` holds, polling; fails naming `what` after {@link PATIENCE_MS}. */
async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + PATIENCE_MS;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${PATIENCE_MS} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Requests holding a limits slot on the demo now (`mcp_ratelimit_inflight`, summed). */
async function inFlight(d: RunningDemo): Promise<number> {
  const text = await (await fetch(d.url.replace(/\/mcp$/, '/metrics'))).text();
  return text
    .split('\n')
    .filter((l) => l.startsWith('mcp_ratelimit_inflight'))
    .reduce((n, l) => n + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
}

interface AuditLine {
  method: string;
  target: string;
  outcome: string;
  status: number;
  duration_ms: number;
}

function audit(d: RunningDemo): AuditLine[] {
  let text = '';
  try {
    text = readFileSync(d.auditFile, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as AuditLine);
}

const slowLines = (d: RunningDemo): AuditLine[] =>
  audit(d).filter((l) => l.method === 'tools/call' && l.target === 'slow');

interface Peer {
  client: ClientV1;
  /** The ids of the tools/call requests sent, in order. */
  callIds: (string | number)[];
}

/** An SDK v1 client on `url`; its `notifications/cancelled` POSTs go to `cancelUrl` when given. */
async function v1(url: string, token: string, cancelUrl?: string): Promise<Peer> {
  const callIds: (string | number)[] = [];
  const routed = (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const body = typeof init?.body === 'string' ? init.body : undefined;
    if (body !== undefined) {
      const m = JSON.parse(body) as { method?: string; id?: string | number };
      if (m.method === 'tools/call' && m.id !== undefined) callIds.push(m.id);
      if (m.method === 'notifications/cancelled' && cancelUrl !== undefined) return fetch(cancelUrl, init);
    }
    return fetch(input, init);
  };
  const transport = new TransportV1(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
    fetch: routed,
  });
  const client = new ClientV1({ name: 'legacy-cancel-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, callIds };
}

/** Start `slow` and resolve once the demo holds it in flight; `settled` is the call's outcome. */
async function startSlow(
  peer: Peer,
  d: RunningDemo,
  signal: AbortSignal,
): Promise<{ settled: Promise<unknown>; held: number }> {
  const call = peer.client.callTool({ name: 'slow', arguments: { ms: SLOW_MS } }, undefined, {
    signal,
    timeout: 60_000,
  });
  const settled = call.then(
    (v) => ({ result: v }),
    (e: unknown) => ({ error: e }),
  );
  await until(async () => (await inFlight(d)) >= 1, 'the slow call is in flight');
  // In an object: an async function's returned promise would be awaited.
  return { settled, held: await inFlight(d) };
}

/** Drain the demo: resolves once no call is in flight (the slow handler returned); the ms it took. */
async function drained(d: RunningDemo): Promise<number> {
  const t0 = performance.now();
  await d.demo.drain();
  return Math.round(performance.now() - t0);
}

/** POST a legacy `notifications/cancelled` as `token`; the HTTP status. */
async function postCancel(url: string, token: string, requestId: string | number): Promise<number> {
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${token}`,
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': '2025-11-25',
    },
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId } }),
  });
  await res.text();
  return res.status;
}

/** What every cancelled call shows: aborted in the audit, the slot free for a second call, the handler done. */
async function expectStopped(peer: Peer, d: RunningDemo, settled: Promise<unknown>, label: string) {
  expect(await settled).toMatchObject({ error: expect.anything() });
  await until(() => slowLines(d).length === 1, 'audit records the slow call');
  expect(slowLines(d)[0]).toMatchObject({ outcome: 'aborted', status: 200 });
  // MCP_USER_CONCURRENCY=1: the cancelled call no longer holds the user's slot.
  const second = await peer.client.callTool({ name: 'hello', arguments: { who: 'again' } });
  expect(second.structuredContent).toEqual({ greeting: 'Hello, again!' });
  // The handler returned: the demo has no call in flight left to wait for.
  const ms = await drained(d);
  // The measured times, printed on request only (npm test stays quiet): MCP_TEST_LOGS=1.
  if (process.env.MCP_TEST_LOGS === '1')
    console.log(
      `${label}: slow ${SLOW_MS} ms cancelled; audit ${slowLines(d)[0]!.duration_ms} ms, drain ${ms} ms`,
    );
}

describe('legacy notifications/cancelled (SDK v1 client)', () => {
  test('aborting callTool stops slow: no result, audit aborted, the slot free, the handler done', async () => {
    const d = await demo();
    const peer = await v1(d.url, 'demo-token');
    const ac = new AbortController();
    const { settled } = await startSlow(peer, d, ac.signal);
    ac.abort();
    await expectStopped(peer, d, settled, 'one replica');
    await peer.client.close();
  });

  test('a cancel from another API key, or naming an unknown id, changes nothing; then the owner cancels', async () => {
    const d = await demo();
    const peer = await v1(d.url, 'demo-token');
    const ac = new AbortController();
    const { settled, held } = await startSlow(peer, d, ac.signal);
    const id = peer.callIds.at(-1)!;
    // Each cancel is acted on before its 202 is written.
    expect(await postCancel(d.url, 'other-token', id)).toBe(202);
    expect(await postCancel(d.url, 'demo-token', typeof id === 'number' ? id + 1000 : `${id}-unknown`)).toBe(
      202,
    );
    // The same id as the other JSON type ("1" for 1) is another id.
    expect(await postCancel(d.url, 'demo-token', typeof id === 'number' ? String(id) : id.length)).toBe(202);
    expect(await inFlight(d)).toBe(held);
    expect(slowLines(d)).toEqual([]);
    ac.abort();
    await expectStopped(peer, d, settled, 'after foreign cancels');
    await peer.client.close();
  });
});

redisDescribe({ ownServer: true })('legacy cancellation across two demos sharing a redis-server', () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedis({ ownServer: true });
  });
  afterAll(async () => {
    await redis?.stop();
  });

  test('the cancel posted to replica B stops the call running on replica A', async () => {
    const env = { REDIS_URL: redis.url };
    const [a, b] = await Promise.all([demo(env), demo(env)]);
    const peer = await v1(a!.url, 'demo-token', b!.url);
    const ac = new AbortController();
    const { settled } = await startSlow(peer, a!, ac.signal);
    ac.abort();
    await expectStopped(peer, a!, settled, 'across replicas');
    // B ran nothing: the call was A's.
    expect(slowLines(b!)).toEqual([]);
    await peer.client.close();
  });
});
