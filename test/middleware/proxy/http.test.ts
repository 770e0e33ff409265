/**
 * proxy() over HTTP, behind the real stack, in front of an SDK v2 server in another process: what the client sees
 * (SSE events masked one by one, the upstream's headers dropped), what the upstream sees (no client credentials,
 * no call the stack refused), and each upstream failure as a JSON-RPC error with its stable reason.
 */
import { freePort } from '../../support/ports';
import { envelope, modernHeaders, openStream } from '../../support/streaming';
import { UPSTREAM_CARD, type UpstreamProcess, startUpstream } from '../../support/upstream-server';
import { AUTH, MASKED_CARD, type Stack, rawModernCall, sseMessages, startStack, until } from './stack';

let upstream: UpstreamProcess;
const stacks: Stack[] = [];
beforeAll(async () => {
  upstream = await startUpstream();
});
afterAll(() => upstream.stop());
afterEach(async () => {
  await Promise.all(stacks.splice(0).map((s) => s.close()));
});

async function stackFor(url: string, opts: Parameters<typeof startStack>[1] = {}): Promise<Stack> {
  const s = await startStack(url, opts);
  stacks.push(s);
  return s;
}

async function calls(name: string): Promise<number> {
  return (await upstream.stats()).calls[name] ?? 0;
}

test('a card number in an SSE notification from the upstream is masked, event by event', async () => {
  const stack = await stackFor(upstream.url, { proxy: { headers: { 'X-Test': '1' } } });
  const res = await rawModernCall(stack.url, 'notify');
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const body = await res.text();
  expect(body).not.toContain(UPSTREAM_CARD);
  const [note, answer] = sseMessages(body);
  expect(note).toMatchObject({ method: 'notifications/message' });
  expect(JSON.stringify(note)).toContain(MASKED_CARD);
  expect(answer).toMatchObject({ id: 7, result: { content: [{ text: 'notified' }] } });
});

test("the caller's Authorization and Cookie never reach the upstream; the configured headers do", async () => {
  const stack = await stackFor(upstream.url, { proxy: { headers: { 'X-Upstream-Key': 'upstream-own' } } });
  const res = await rawModernCall(stack.url, 'headers', { ...AUTH, Cookie: 'session=caller-secret' });
  expect(res.status).toBe(200);
  const text = await res.text();
  const answer = (text.startsWith('{') ? JSON.parse(text) : sseMessages(text).at(-1)) as {
    result: { content: Array<{ text: string }> };
  };
  const received = JSON.parse(answer.result.content[0]!.text) as Record<string, string>;
  expect(received['x-upstream-key']).toBe('upstream-own');
  expect(received.authorization).toBeUndefined();
  expect(received.cookie).toBeUndefined();
  expect(JSON.stringify(received)).not.toContain('proxy-test-key');
  expect(JSON.stringify(received)).not.toContain('caller-secret');
  expect(received['mcp-name']).toBe('echo_headers'); // the actual name, renamed back by the tool filter
});

test("the upstream's Set-Cookie, Server, X-Powered-By and Via do not reach the client", async () => {
  const stack = await stackFor(`${upstream.base}/cookie/mcp`);
  const res = await rawModernCall(stack.url, 'card');
  expect(res.status).toBe(200);
  await res.text();
  for (const name of ['set-cookie', 'server', 'x-powered-by', 'via'])
    expect(res.headers.get(name)).toBeNull();
});

test('429 before the upstream is called', async () => {
  const stack = await stackFor(upstream.url, { limits: { perUserRpm: 1 } });
  const before = await calls('card');
  expect((await rawModernCall(stack.url, 'card')).status).toBe(200);
  const refused = await rawModernCall(stack.url, 'card');
  expect(refused.status).toBe(429);
  expect(await calls('card')).toBe(before + 1);
});

test('an upstream that hangs is answered 504 upstream_timeout, its slot free and the upstream told', async () => {
  const stack = await stackFor(upstream.url, {
    limits: { perUserConcurrency: 1 },
    proxy: { timeoutMs: 300 },
  });
  const aborted = (await upstream.stats()).aborted;
  const res = await rawModernCall(stack.url, 'hang', AUTH, 'h-1');
  expect(res.status).toBe(504);
  expect(await res.json()).toMatchObject({ jsonrpc: '2.0', id: 'h-1', error: { code: -32603 } });
  await until(() => stack.audit.some((r) => r.target === 'hang'));
  expect(stack.audit.find((r) => r.target === 'hang')).toMatchObject({ reason: 'upstream_timeout' });
  // perUserConcurrency 1: the next call finds the slot given back.
  expect((await rawModernCall(stack.url, 'card')).status).toBe(200);
  await until(async () => (await upstream.stats()).aborted > aborted);
});

test.each([
  { label: 'a refused connection', where: 'closed', status: 502, reason: 'upstream_unreachable' },
  { label: 'a 500', where: '/status500/mcp', status: 502, reason: 'upstream_error' },
  { label: 'an HTML page', where: '/html/mcp', status: 502, reason: 'upstream_invalid' },
  { label: 'a redirect', where: '/redirect/mcp', status: 502, reason: 'upstream_invalid' },
])('$label is answered $status $reason', async ({ where, status, reason }) => {
  const url = where === 'closed' ? `http://127.0.0.1:${await freePort()}/mcp` : `${upstream.base}${where}`;
  const stack = await stackFor(url);
  const res = await rawModernCall(stack.url, 'card', AUTH, 'x-9');
  expect(res.status).toBe(status);
  const body = (await res.json()) as Record<string, unknown>;
  expect(body).toMatchObject({ jsonrpc: '2.0', id: 'x-9', error: { code: -32603 } });
  expect(JSON.stringify(body)).not.toMatch(/Login|stack trace|ECONNREFUSED/);
  await until(() => stack.audit.some((r) => r.target === 'card'));
  expect(stack.audit.find((r) => r.target === 'card')).toMatchObject({ reason });
});

test('a subscriptions/listen stream is proxied: the upstream acknowledges, the client closing reaches it', async () => {
  const stack = await stackFor(upstream.url);
  const aborted = (await upstream.stats()).aborted;
  const message = {
    jsonrpc: '2.0',
    id: 'sub-1',
    method: 'subscriptions/listen',
    params: { notifications: { toolsListChanged: true }, _meta: envelope() },
  };
  const st = await openStream(stack.url, message, { ...modernHeaders('subscriptions/listen'), ...AUTH });
  expect(st.status).toBe(200);
  expect(String(st.headers['content-type'])).toMatch(/^text\/event-stream/);
  expect(await st.next()).toMatchObject({ method: 'notifications/subscriptions/acknowledged' });
  st.close();
  await until(async () => (await upstream.stats()).aborted > aborted);
});
