/**
 * Issue 36, legacy notifications delivered: the official SDK 1.x client opens its session's GET stream after
 * `initialize`, and the demo delivers there `notifications/resources/updated` for the URIs the session
 * subscribed to (`notes://today`, announced by the `note` tool) and the list_changed notifications of its feeds.
 * A session that did not subscribe gets no update; a GET with a foreign or tampered session is refused 404, one
 * without a session 405, and a GET stream counts against the listen streams' per-caller cap.
 */
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { dispatch } from '../../middleware/dispatch';
import { ToolRegistry, ok } from '../../handlers/tools';
import { chain } from '../support/dispatch-harness';
import { startDemo, type RunningDemo } from '../support/demo';

const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const KEYS = `demo:sha256:${sha('demo-token')}:users,eve:sha256:${sha('eve-token')}:users`;
const AUTH = { Authorization: 'Bearer demo-token' };
const EVE = { Authorization: 'Bearer eve-token' };

let demo: RunningDemo;
beforeAll(async () => {
  demo = await startDemo({ MCP_API_KEYS: KEYS });
});
afterAll(async () => {
  await demo?.stop();
});

/** A resolvable promise. */
function deferred<T = void>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/**
 * A connected v1 client whose GET stream is open (`streamOpen` resolves once its answer's headers arrived,
 * with the status): the server subscribes the stream to the feeds before it answers them.
 */
async function v1(url: string, headers: Record<string, string> = AUTH) {
  const stream = deferred<number>();
  const tracked: typeof fetch = async (input, init) => {
    const res = await fetch(input, init);
    if ((init?.method ?? 'GET') === 'GET') stream.resolve(res.status);
    return res;
  };
  const client = new Client({ name: 'legacy-notify-test', version: '1.0.0' }, { capabilities: {} });
  const updated: string[] = [];
  const toolsChanged: number[] = [];
  const nextUpdate = deferred<string>();
  const nextToolsChange = deferred();
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
    updated.push(n.params.uri);
    nextUpdate.resolve(n.params.uri);
  });
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    toolsChanged.push(1);
    nextToolsChange.resolve();
  });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers },
    fetch: tracked,
  });
  await client.connect(transport);
  const status = await stream.promise;
  return { client, transport, updated, toolsChanged, status, nextUpdate, nextToolsChange };
}

describe('the legacy GET stream on the demo', () => {
  test('a subscribed session receives notifications/resources/updated for notes://today after note', async () => {
    const sub = await v1(demo.url);
    expect(sub.status).toBe(200);
    await sub.client.subscribeResource({ uri: 'notes://today' });
    const r = await sub.client.callTool({ name: 'note', arguments: { text: 'legacy stream' } });
    expect(r.isError).toBeFalsy();
    // Resolves when the update arrived; the test's own timeout is the bound.
    await expect(sub.nextUpdate.promise).resolves.toBe('notes://today');
    expect(sub.updated).toEqual(['notes://today']);
    await sub.client.close();
  });

  test('a session that did not subscribe (or unsubscribed) receives no update', async () => {
    const sub = await v1(demo.url);
    const other = await v1(demo.url);
    const gone = await v1(demo.url);
    await sub.client.subscribeResource({ uri: 'notes://today' });
    await gone.client.subscribeResource({ uri: 'notes://today' });
    await gone.client.unsubscribeResource({ uri: 'notes://today' });
    await other.client.callTool({ name: 'note', arguments: { text: 'only for the subscriber' } });
    await sub.nextUpdate.promise;
    // The same announcement was written to every stream in the same turn; a round trip lets any stray one land.
    await other.client.ping();
    await gone.client.ping();
    expect(other.updated).toEqual([]);
    expect(gone.updated).toEqual([]);
    await Promise.all([sub.client.close(), other.client.close(), gone.client.close()]);
  });

  test('a GET with a foreign or tampered session is refused 404; without a session 405', async () => {
    const { client, transport } = await v1(demo.url);
    const sessionId = transport.sessionId!;
    const get = (headers: Record<string, string>) =>
      fetch(demo.url, { headers: { Accept: 'text/event-stream', ...headers } });
    const foreign = await get({ ...EVE, 'Mcp-Session-Id': sessionId });
    expect(foreign.status).toBe(404);
    expect(((await foreign.json()) as { error: { code: number } }).error.code).toBe(-32001);
    const tampered = await get({ ...AUTH, 'Mcp-Session-Id': sessionId.slice(0, -2) + 'AA' });
    expect(tampered.status).toBe(404);
    const none = await get(AUTH);
    expect(none.status).toBe(405);
    expect(none.headers.get('allow')).toBe('POST');
    const unauthenticated = await get({ 'Mcp-Session-Id': sessionId });
    expect(unauthenticated.status).toBe(401);
    await client.close();
  });
});

describe('the legacy GET stream on a dispatch stack', () => {
  const tools = new ToolRegistry({
    tools: [{ name: 'ping_tool', inputSchema: { type: 'object' }, call: () => ok({}) }],
  });
  const mw = dispatch({
    anonymous: true,
    handlers: { tools },
    serverInfo: { name: 'legacy-notify', version: '1.0.0' },
    streams: { maxListenStreamsPerPrincipal: 1 },
  });
  let server: http.Server;
  let url: string;
  beforeAll(async () => {
    server = http.createServer(chain([mw]));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  });
  afterAll(async () => {
    await mw.close();
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });

  test('tools/list_changed arrives on the stream; a second stream of the caller is over its cap (429)', async () => {
    const c = await v1(url, {});
    expect(c.status).toBe(200);
    expect(mw.stats().listenStreams).toBe(1);
    tools.register({ name: 'added', inputSchema: { type: 'object' }, call: () => ok({}) });
    await c.nextToolsChange.promise;
    expect(c.toolsChanged.length).toBe(1);
    const second = await fetch(url, {
      headers: { Accept: 'text/event-stream', 'Mcp-Session-Id': c.transport.sessionId! },
    });
    expect(second.status).toBe(429);
    await c.client.close();
  });

  test("the client's close releases its stream; the dispatcher's close() ends the open ones", async () => {
    const c = await v1(url, {});
    expect(mw.stats().listenStreams).toBe(1);
    await c.client.close();
    // The client's close aborts its GET; the server's count follows the connection's close (the test's own
    // timeout bounds the wait).
    while (mw.stats().listenStreams > 0) await new Promise((r) => setTimeout(r, 5));
    const d = await v1(url, {});
    expect(mw.stats().listenStreams).toBe(1);
    await mw.close();
    expect(mw.stats().listenStreams).toBe(0);
    await d.client.close();
  });
});
