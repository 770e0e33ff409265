/**
 * A forwarded session is bound to the caller who opened it: the server's `Mcp-Session-Id` reaches the client
 * as a signed token; a request carrying it is forwarded with the server's id only for the same caller, unexpired
 * and untampered, else refused 404 (-32001) without calling the server. Over real HTTP, behind real apiKeyAuth.
 */
import type { ForwardRequest } from '../../core/forward';
import { apiKeyAuth, hashKey } from '../../middleware/api-key-auth/index';
import { type Harness, result, startHarness } from './forward-harness';

const ANN = 'forward-session-ann-0123456789abcdef';
const BOB = 'forward-session-bob-0123456789abcdef';
const auth = () =>
  apiKeyAuth({
    keys: [
      { userId: 'ann', hash: hashKey(ANN), groups: ['staff'] },
      { userId: 'bob', hash: hashKey(BOB), groups: ['staff'] },
    ],
  });
const as = (key: string) => ({ authorization: `Bearer ${key}` });
const call = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo' } });

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** A harness whose server answers every request with `Mcp-Session-Id: upstream-123`, recording what it got. */
async function start(options: { sessionTtlMs?: number } = {}, postOnly = true) {
  const seen: ForwardRequest[] = [];
  h = await startHarness(
    async (r) => {
      seen.push(r);
      if (r.method !== 'POST') return new Response(null, { status: 202 });
      const id = (r.parsedBody as { id?: number }).id;
      return result(id, { content: [] }, { 'mcp-session-id': 'upstream-123' });
    },
    { logger: { error() {}, warn() {} }, ...options },
    { before: [auth()], ...(postOnly ? {} : { postOnly: false as const }) },
  );
  return { h, seen };
}

async function open(harness: Harness): Promise<string> {
  const res = await harness.post(call(1), as(ANN));
  expect(res.status).toBe(200);
  await res.text();
  const token = res.headers.get('mcp-session-id');
  expect(token).not.toBeNull();
  return token!;
}

describe('a forwarded session is bound to its caller', () => {
  test('the client sees a token, not the server id; the server receives its id back', async () => {
    const { h, seen } = await start();
    const token = await open(h);
    expect(token).not.toContain('upstream-123');
    expect(token).toMatch(/^f1\.[\w-]+\.[\w-]+$/);
    const again = await h.post(call(2), { ...as(ANN), 'mcp-session-id': token });
    expect(again.status).toBe(200);
    // The client's own token comes back while the server keeps its session.
    expect(again.headers.get('mcp-session-id')).toBe(token);
    await again.text();
    expect(seen).toHaveLength(2);
    expect(seen[0]!.headers.get('mcp-session-id')).toBeNull();
    expect(seen[1]!.headers.get('mcp-session-id')).toBe('upstream-123');
  });

  test("another caller's request with the token: 404 -32001, the server not called", async () => {
    const { h, seen } = await start();
    const token = await open(h);
    const res = await h.post(call(7), { ...as(BOB), 'mcp-session-id': token });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({
      jsonrpc: '2.0',
      id: 7,
      error: { code: -32001, message: 'Session not found for this caller' },
    });
    expect(seen).toHaveLength(1);
    expect(h.audits.at(-1)).toMatchObject({ reason: 'session_foreign' });
  });

  test('a tampered token, or the server id itself: 404, the server not called', async () => {
    const { h, seen } = await start();
    const token = await open(h);
    const last = token.at(-1) === 'A' ? 'B' : 'A';
    for (const sent of [token.slice(0, -1) + last, 'upstream-123']) {
      const res = await h.post(call(3), { ...as(ANN), 'mcp-session-id': sent });
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({
        id: 3,
        error: { code: -32001, message: 'Session not found' },
      });
    }
    expect(seen).toHaveLength(1);
    expect(h.audits.at(-1)).toMatchObject({ reason: 'session_invalid' });
  });

  test('an expired token (sessionTtlMs 1): 404, the server not called', async () => {
    const { h, seen } = await start({ sessionTtlMs: 1 });
    const token = await open(h);
    await new Promise((r) => setTimeout(r, 5));
    const res = await h.post(call(4), { ...as(ANN), 'mcp-session-id': token });
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ id: 4, error: { code: -32001 } });
    expect(seen).toHaveLength(1);
    expect(h.audits.at(-1)).toMatchObject({ reason: 'session_expired' });
  });

  test("GET and DELETE carry the session too: another caller's is 404 without an id", async () => {
    const { h, seen } = await start({}, false);
    const token = await open(h);
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(h.url, {
        method,
        headers: { accept: 'text/event-stream', ...as(BOB), 'mcp-session-id': token },
      });
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({
        jsonrpc: '2.0',
        error: { code: -32001, message: 'Session not found for this caller' },
      });
    }
    expect(seen).toHaveLength(1);
    const del = await fetch(h.url, { method: 'DELETE', headers: { ...as(ANN), 'mcp-session-id': token } });
    expect(del.status).toBe(202);
    expect(seen[1]!.headers.get('mcp-session-id')).toBe('upstream-123');
  });
});
