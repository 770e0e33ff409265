/**
 * sdk() in front of an SDK v1 `McpServer` over `WebStandardStreamableHTTPServerTransport`, in the same process,
 * behind the real stack: stateless (a function that connects a new server to a new transport per request) and
 * with sessions (a function routing by `Mcp-Session-Id` to the session's transport). The peers are the official
 * 1.x client and the v2 client in its default (legacy) mode.
 */
import { randomUUID } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as TransportV2,
} from '@modelcontextprotocol/client';
import { z } from 'zod';
import type { SdkHandlerFunction } from '../../../middleware/sdk/index';
import { AUTH, CARD, MASKED, Seen, type Stack, startStack, tools, until } from './stack';
import { serverSessionOf } from '../../support/forward-session';

function v1Server(seen: Seen): McpServer {
  const server = new McpServer({ name: 'v1-shop', version: '1.0.0' }, { capabilities: { logging: {} } });
  for (const [name, body] of Object.entries(tools(seen))) {
    server.registerTool(name, { description: name, inputSchema: z.object({}) }, async (_args, extra) =>
      body({
        signal: extra.signal,
        authInfo: extra.authInfo,
        log: (data) =>
          extra.sendNotification({ method: 'notifications/message', params: { level: 'info', data } }),
      }),
    );
  }
  return server;
}

/** SDK v1 stateless: a new server and transport per request, both closed when the client goes away. */
function stateless(seen: Seen): SdkHandlerFunction {
  return async (request, extra) => {
    const server = v1Server(seen);
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    await server.connect(transport);
    request.signal.addEventListener('abort', () => void server.close(), { once: true });
    return transport.handleRequest(request, extra);
  };
}

/** SDK v1 with sessions: a transport per session, found by `Mcp-Session-Id`; a new one for an initialize. */
function sessions(
  seen: Seen,
  open: Map<string, WebStandardStreamableHTTPServerTransport>,
): SdkHandlerFunction {
  return async (request, extra) => {
    const id = request.headers.get('mcp-session-id');
    const known = id === null ? undefined : open.get(id);
    if (known !== undefined) return known.handleRequest(request, extra);
    if (id !== null) {
      return Response.json(
        { jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null },
        { status: 404 },
      );
    }
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sid) => void open.set(sid, transport),
      onsessionclosed: (sid) => void open.delete(sid),
    });
    await v1Server(seen).connect(transport);
    return transport.handleRequest(request, extra);
  };
}

interface Common {
  callTool(p: { name: string; arguments?: Record<string, unknown> }): Promise<unknown>;
  listTools(): Promise<{ tools: Array<{ name: string }> }>;
  close(): Promise<void>;
}

type Peer = 'sdk 1.x client' | 'v2 client (legacy)';
const PEERS: Peer[] = ['sdk 1.x client', 'v2 client (legacy)'];

async function connect(stack: Stack, peer: Peer): Promise<Common> {
  const url = new URL(stack.url);
  if (peer === 'sdk 1.x client') {
    const client = new ClientV1({ name: 'v1', version: '1.0.0' });
    await client.connect(new TransportV1(url, { requestInit: { headers: AUTH } }));
    return client as unknown as Common;
  }
  const client = new ClientV2({ name: 'v2-legacy', version: '1.0.0' });
  await client.connect(new TransportV2(url, { requestInit: { headers: AUTH } }));
  return client as unknown as Common;
}

interface CallResult {
  content: Array<{ type: string; text: string }>;
  isError?: boolean;
}

type Mode = 'stateless' | 'sessions';
const cases: Array<[Mode, Peer]> = (['stateless', 'sessions'] as Mode[]).flatMap((m) =>
  PEERS.map((p): [Mode, Peer] => [m, p]),
);

let seen: Seen;
let stack: Stack;
let open: Map<string, WebStandardStreamableHTTPServerTransport>;

async function start(mode: Mode): Promise<void> {
  seen = new Seen();
  open = new Map();
  stack = await startStack(mode === 'stateless' ? stateless(seen) : sessions(seen, open));
}

afterEach(async () => {
  await stack.close();
  for (const t of open.values()) await t.close();
});

describe.each(cases)('SDK v1 %s behind the stack, %s', (mode, peer) => {
  beforeEach(() => start(mode));

  test('a card number is masked in the JSON result and in the SSE answer', async () => {
    const client = await connect(stack, peer);
    const plain = (await client.callTool({ name: 'customer', arguments: {} })) as CallResult;
    expect(plain.content[0]!.text).toBe(`card ${MASKED}`);
    const streamed = (await client.callTool({ name: 'customer_stream', arguments: {} })) as CallResult;
    expect(streamed.content[0]!.text).toBe(`card ${MASKED}`);
    await client.close();
  });

  test('isError is recorded as tool_error by audit and metrics', async () => {
    const client = await connect(stack, peer);
    // Listed first: a tool the server listed is a metrics label of its own (else `other`).
    await client.listTools();
    const result = (await client.callTool({ name: 'broken', arguments: {} })) as CallResult;
    expect(result.isError).toBe(true);
    await client.close();
    await until(() => stack.audit.some((r) => r.target === 'broken'));
    expect(stack.audit.find((r) => r.target === 'broken')).toMatchObject({ outcome: 'tool_error' });
    expect(await stack.metric('tool_calls_total', { tool: 'broken', outcome: 'tool_error' })).toBe(1);
  });

  test('a renamed tool: listed and called by its new name, refused by its old one', async () => {
    const client = await connect(stack, peer);
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toContain('report');
    expect(names).not.toContain('internal_report');
    const ok = (await client.callTool({ name: 'report', arguments: {} })) as CallResult;
    expect(ok.content[0]!.text).toBe('report ready');
    const refused = await client.callTool({ name: 'internal_report', arguments: {} }).then(
      (r) => JSON.stringify(r),
      (e: unknown) => String(e),
    );
    expect(refused).toMatch(/Unknown tool/);
    expect(seen.count('internal_report')).toBe(1);
    await client.close();
  });
});

describe('SDK v1 stateless: cancellation', () => {
  beforeEach(() => start('stateless'));

  test('the client going away aborts the tool', async () => {
    const controller = new AbortController();
    const pending = fetch(stack.url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...AUTH },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'wait', arguments: {} },
      }),
      signal: controller.signal,
    }).then(
      (r) => r.text(),
      (e: unknown) => e,
    );
    await seen.waiting;
    controller.abort();
    await pending;
    await seen.abortSeen;
    expect(seen.aborted).toBe(1);
  });
});

describe('SDK v1 with sessions: the session over HTTP', () => {
  beforeEach(() => start('sessions'));

  const headers = {
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
    ...AUTH,
  };

  async function initialize(): Promise<string> {
    const res = await fetch(stack.url, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: {
          protocolVersion: '2025-06-18',
          capabilities: {},
          clientInfo: { name: 'raw', version: '1' },
        },
      }),
    });
    expect(res.status).toBe(200);
    const sid = res.headers.get('mcp-session-id');
    // The server's session id reaches the client wrapped: signed and bound to the caller.
    expect(sid).toMatch(/^f1\.[\w-]+\.[\w-]+$/);
    await res.text();
    const ack = await fetch(stack.url, {
      method: 'POST',
      headers: { ...headers, 'Mcp-Session-Id': sid!, 'MCP-Protocol-Version': '2025-06-18' },
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    });
    expect(ack.status).toBe(202);
    return sid!;
  }

  test('initialize, a call on the session, the GET stream', async () => {
    const sid = await initialize();
    const session = { ...headers, 'Mcp-Session-Id': sid, 'MCP-Protocol-Version': '2025-06-18' };
    const call = await fetch(stack.url, {
      method: 'POST',
      headers: session,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'customer', arguments: {} },
      }),
    });
    expect(call.status).toBe(200);
    const text = await call.text();
    expect(text).toContain(MASKED);
    expect(text).not.toContain(CARD);
    expect(open.has(serverSessionOf(sid))).toBe(true);

    const controller = new AbortController();
    const stream = await fetch(stack.url, {
      method: 'GET',
      headers: {
        Accept: 'text/event-stream',
        'Mcp-Session-Id': sid,
        'MCP-Protocol-Version': '2025-06-18',
        ...AUTH,
      },
      signal: controller.signal,
    });
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
    controller.abort();
  });

  test('DELETE ends the session', async () => {
    const sid = await initialize();
    const session = { ...headers, 'Mcp-Session-Id': sid, 'MCP-Protocol-Version': '2025-06-18' };
    const end = await fetch(stack.url, { method: 'DELETE', headers: session });
    expect(end.status).toBe(200);
    await until(() => !open.has(serverSessionOf(sid)));
    const after = await fetch(stack.url, {
      method: 'POST',
      headers: session,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'customer', arguments: {} },
      }),
    });
    expect(after.status).toBe(404);
  });

  test("the client's notifications/cancelled reaches the tool", async () => {
    const sid = await initialize();
    const session = { ...headers, 'Mcp-Session-Id': sid, 'MCP-Protocol-Version': '2025-06-18' };
    const pending = fetch(stack.url, {
      method: 'POST',
      headers: session,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 5,
        method: 'tools/call',
        params: { name: 'wait', arguments: {} },
      }),
    }).then(
      (r) => r.text(),
      (e: unknown) => e,
    );
    await seen.waiting;
    const cancel = await fetch(stack.url, {
      method: 'POST',
      headers: session,
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 5 } }),
    });
    expect(cancel.status).toBe(202);
    await seen.abortSeen;
    expect(seen.aborted).toBe(1);
    await pending;
  });
});
