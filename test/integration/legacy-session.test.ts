/**
 * Issue 36, legacy sessions with the official SDK 1.x client against the demo: the signed `Mcp-Session-Id`
 * minted at `initialize` carries the client's capabilities, so `introduce` sends `elicitation/create` only to a
 * client that declared elicitation (one without it gets a tool error naming what it lacks); a tampered, foreign
 * or unsigned session is refused 404; DELETE answers 405; a request without a session is served as before; a
 * session minted by one replica verifies on another sharing MCP_REQUEST_STATE_KEYS.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { startDemo, type RunningDemo } from '../support/demo';

const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const KEYS = `demo:sha256:${sha('demo-token')}:users,eve:sha256:${sha('eve-token')}:users`;
const STATE_KEYS = 'ab'.repeat(32);
const AUTH = { Authorization: 'Bearer demo-token' };
const EVE = { Authorization: 'Bearer eve-token' };

let a: RunningDemo;
let b: RunningDemo;
beforeAll(async () => {
  const env = { MCP_API_KEYS: KEYS, MCP_REQUEST_STATE_KEYS: STATE_KEYS };
  [a, b] = await Promise.all([startDemo(env), startDemo(env)]);
});
afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
});

/** A connected v1 client; `received` lists the methods of the server-to-client requests it was sent. */
async function v1(
  url: string,
  opts: { elicitation?: boolean; headers?: Record<string, string>; sessionId?: string } = {},
) {
  const received: string[] = [];
  const client = new Client(
    { name: 'legacy-session-test', version: '1.0.0' },
    { capabilities: opts.elicitation ? { elicitation: {} } : {} },
  );
  if (opts.elicitation) {
    client.setRequestHandler(ElicitRequestSchema, () => {
      received.push('elicitation/create');
      return { action: 'accept', content: { name: 'Ada' } };
    });
  }
  // Whatever else the server sends is counted (and answered as a client without the capability would).
  client.fallbackRequestHandler = (request) => {
    received.push(request.method);
    return Promise.reject(new Error(`unexpected ${request.method}`));
  };
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: opts.headers ?? AUTH },
    ...(opts.sessionId === undefined ? {} : { sessionId: opts.sessionId }),
  });
  await client.connect(transport);
  return { client, transport, received };
}

function textOf(r: unknown): string {
  return ((r as { content: Array<{ text: string }> }).content[0] ?? { text: '' }).text;
}

/** The refusal reasons the demo's audit log recorded. */
function auditedReasons(d: RunningDemo): string[] {
  return readFileSync(d.auditFile, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as { reason?: string; refusal?: { reason?: string } })
    .map((r) => r.refusal?.reason ?? r.reason ?? '')
    .filter((r) => r.startsWith('session_'));
}

describe('legacy sessions with the official v1 client', () => {
  test('initialize mints a signed session id of visible ASCII, which the client sends back', async () => {
    const { client, transport } = await v1(a.url);
    expect(transport.sessionId).toMatch(/^s1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('introduce');
    await client.close();
  });

  test('without the elicitation capability: no elicitation/create is sent; introduce answers a tool error', async () => {
    const { client, received } = await v1(a.url);
    const r = await client.callTool({ name: 'introduce', arguments: {} });
    expect(received).toEqual([]);
    expect(r.isError).toBe(true);
    expect(textOf(r)).toBe('The client did not declare the elicitation capability');
    await client.close();
  });

  test('with the elicitation capability: the elicitation round is sent, answered, and the call completes', async () => {
    const { client, received } = await v1(a.url, { elicitation: true });
    const r = await client.callTool({ name: 'introduce', arguments: { greeting: 'Hi' } });
    expect(received).toEqual(['elicitation/create']);
    expect(r.isError).toBeFalsy();
    expect(r.structuredContent).toEqual({ greeting: 'Hi, Ada!' });
    await client.close();
  });

  test('two replicas sharing MCP_REQUEST_STATE_KEYS: a session minted on one is honoured on the other', async () => {
    const first = await v1(a.url, { elicitation: true });
    const sessionId = first.transport.sessionId!;
    expect(sessionId).toMatch(/^s1\./);
    await first.client.close();
    // The v1 client resumes a session it was given: no initialize on b, which learns the client's capabilities
    // from the id alone.
    const other = await v1(b.url, { elicitation: true, sessionId });
    const r = await other.client.callTool({ name: 'introduce', arguments: {} });
    expect(other.received).toEqual(['elicitation/create']);
    expect(r.structuredContent).toEqual({ greeting: 'Hello, Ada!' });
    await other.client.close();
  });

  test.each([
    [
      'a tampered session',
      (id: string) => id.slice(0, -2) + (id.endsWith('AA') ? 'BB' : 'AA'),
      AUTH,
      'session_invalid',
    ],
    ['a session minted for another API key', (id: string) => id, EVE, 'session_foreign'],
    ['a session this server did not sign', () => 'some-session-of-another-server', AUTH, 'session_invalid'],
  ])('%s → 404; the client starts a new session', async (_what, alter, headers, reason) => {
    const minted = await v1(a.url);
    const sessionId = alter(minted.transport.sessionId!);
    await minted.client.close();
    const resumed = await v1(a.url, { sessionId, headers });
    const err = await resumed.client.listTools().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StreamableHTTPError);
    expect((err as StreamableHTTPError).code).toBe(404);
    expect(String((err as Error).message)).toContain('-32001');
    await resumed.client.close();
    // What the transport's 404 asks for: a new session, which works.
    const fresh = await v1(a.url, { headers });
    expect((await fresh.client.listTools()).tools.length).toBeGreaterThan(0);
    await fresh.client.close();
    expect(auditedReasons(a)).toContain(reason);
  });

  test('DELETE with a session → 405 (nothing to end: the session is stateless); the v1 client accepts it', async () => {
    const { client, transport } = await v1(a.url);
    const sessionId = transport.sessionId!;
    const res = await fetch(a.url, {
      method: 'DELETE',
      headers: { ...AUTH, 'Mcp-Session-Id': sessionId, 'MCP-Protocol-Version': '2025-11-25' },
    });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
    await expect(transport.terminateSession()).resolves.toBeUndefined();
    expect(transport.sessionId).toBeUndefined();
    await client.close();
  });

  test('no session: a legacy request is served as before; introduce answers the tool error', async () => {
    const post = (body: unknown) =>
      fetch(a.url, {
        method: 'POST',
        headers: {
          ...AUTH,
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
          'MCP-Protocol-Version': '2025-11-25',
        },
        body: JSON.stringify(body),
      });
    const hello = await post({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'hello', arguments: { who: 'Ada' } },
    });
    expect(hello.status).toBe(200);
    expect(hello.headers.get('mcp-session-id')).toBeNull();
    expect(
      ((await hello.json()) as { result: { structuredContent: unknown } }).result.structuredContent,
    ).toEqual({
      greeting: 'Hello, Ada!',
    });
    const intro = await post({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'introduce' } });
    expect(intro.status).toBe(200);
    expect(intro.headers.get('content-type')).toMatch(/^application\/json/);
    const body = (await intro.json()) as { result: { isError: boolean; content: Array<{ text: string }> } };
    expect(body.result.isError).toBe(true);
    expect(body.result.content[0]!.text).toBe('The client did not declare the elicitation capability');
  });
});
