/**
 * A 2025-11-25 session's GET stream keeps redaction (issue 35): an SDK v1 `McpServer` with sessions, behind
 * `sdk()` in the same process or behind `proxy()` (the same sessions served by `sdk()` alone on another
 * server), with the route the docs give a session's GET and DELETE (audit, metrics, authentication, limits,
 * redact) in front.
 * The server sends a logging notification on the session's GET stream, not tied to any request, carrying a card
 * number and an e-mail address: the client reading that stream sees them masked, and the audit record and the
 * metrics of the GET say what fired. The full `mcpEndpoint()` stack still answers GET with its JSON 405.
 */
import http from 'node:http';
import { Registry } from 'prom-client';
import { randomUUID } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { apiKeyAuth, hashKey } from '../../../middleware/api-key-auth/index';
import { audit } from '../../../middleware/audit/index';
import { compose } from '../../../middleware/compose/index';
import { mcpEndpoint } from '../../../middleware/endpoint/index';
import { metrics } from '../../../middleware/metrics/index';
import { limits } from '../../../middleware/limits/index';
import { parse } from '../../../middleware/parse/index';
import { proxy } from '../../../middleware/proxy/index';
import { redact } from '../../../middleware/redact/index';
import { rejectBatch } from '../../../middleware/reject-batch/index';
import { type SdkHandlerFunction, sdk } from '../../../middleware/sdk/index';
import type { Middleware } from '../../../core/types';
import { listenLoopback, sampleKey, samples } from '../../support/observe-harness';
import { AUTH, CARD, KEY, MASKED, type AuditRecord, until } from './stack';
import { serverSessionOf } from '../../support/forward-session';

const EMAIL = 'ada.lovelace@example.com';
const PROTOCOL = '2025-06-18';
const quiet = { error() {}, warn() {} };

/** SDK v1 with sessions, as docs/middleware/sdk.md mounts it; the sessions' servers kept for the test. */
function sessions(servers: Map<string, McpServer>): SdkHandlerFunction {
  const open = new Map<string, WebStandardStreamableHTTPServerTransport>();
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
    const server = new McpServer({ name: 'v1-shop', version: '1.0.0' }, { capabilities: { logging: {} } });
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sid) => {
        open.set(sid, transport);
        servers.set(sid, server);
      },
      onsessionclosed: (sid) => {
        open.delete(sid);
        servers.delete(sid);
      },
    });
    await server.connect(transport);
    return transport.handleRequest(request, extra);
  };
}

async function serve(handler: (req: http.IncomingMessage, res: http.ServerResponse) => void) {
  const server = http.createServer(handler);
  const port = await listenLoopback(server);
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

type Terminal = Middleware & { close(): Promise<void> };

interface Fixture {
  url: string;
  servers: Map<string, McpServer>;
  audit: AuditRecord[];
  /** The value of one sample of the metrics. */
  metric(name: string, labels?: Record<string, string>): Promise<number | undefined>;
  close(): Promise<void>;
}

/**
 * The POST route (the body-reading middlewares) and the GET/DELETE route of docs/middleware/sdk.md (audit,
 * authentication, limits, redact) in front of the same terminal.
 */
async function start(through: 'sdk()' | 'proxy()'): Promise<Fixture> {
  const servers = new Map<string, McpServer>();
  const handler = sessions(servers);
  let upstream: { url: string; close(): Promise<void> } | undefined;
  let terminal: Terminal;
  if (through === 'sdk()') {
    terminal = sdk({ handler });
  } else {
    const behind = sdk({ handler });
    upstream = await serve((req, res) => behind(req, res, () => {}));
    const front = proxy({ url: upstream.url, logger: quiet });
    const closeFront = front.close;
    terminal = Object.assign(front, {
      close: async () => {
        await closeFront();
        await behind.close();
      },
    });
  }
  const records: AuditRecord[] = [];
  const registry = new Registry();
  const observe = metrics({ registry });
  const auditor = audit({
    logger: { log: (_level: string, _message: string, meta: AuditRecord) => records.push(meta) },
  });
  const auth = apiKeyAuth({
    keys: [{ userId: 'alice', hash: hashKey(KEY), groups: ['staff'] }],
    logger: quiet,
  });
  const limiter = limits({ perUserRpm: 100, perUserConcurrency: 2, logger: quiet });
  const posts = compose(
    [auditor, observe, auth, limiter.gate, rejectBatch(), parse(), limiter, redact(), terminal],
    {
      logger: quiet,
    },
  );
  const others = compose([auditor, observe, auth, limiter, redact(), terminal], { logger: quiet });
  const front = await serve((req, res) => (req.method === 'POST' ? posts : others)(req, res));
  return {
    url: front.url,
    servers,
    audit: records,
    async metric(name, labels) {
      return samples(await registry.metrics()).get(sampleKey(`mcp_${name}`, labels));
    },
    async close() {
      await front.close();
      await terminal.close();
      await upstream?.close();
    },
  };
}

const JSON_HEADERS = {
  'Content-Type': 'application/json',
  Accept: 'application/json, text/event-stream',
  ...AUTH,
};

/** initialize and notifications/initialized over POST: the session's id. */
async function initialize(url: string): Promise<string> {
  const res = await fetch(url, {
    method: 'POST',
    headers: JSON_HEADERS,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    }),
  });
  expect(res.status).toBe(200);
  const sid = res.headers.get('mcp-session-id');
  // The server's session id reaches the client wrapped: signed and bound to the caller.
  expect(sid).toMatch(/^f1\.[\w-]+\.[\w-]+$/);
  await res.text();
  const ack = await fetch(url, {
    method: 'POST',
    headers: { ...JSON_HEADERS, 'Mcp-Session-Id': sid!, 'MCP-Protocol-Version': PROTOCOL },
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  });
  expect(ack.status).toBe(202);
  return sid!;
}

/** Reads the stream until `done(text)` holds; the text read so far. */
async function readUntil(body: ReadableStream<Uint8Array>, done: (text: string) => boolean) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  while (!done(text)) {
    const { value, done: ended } = await reader.read();
    if (ended) break;
    text += decoder.decode(value, { stream: true });
  }
  reader.releaseLock();
  return text;
}

describe.each(['sdk()', 'proxy()'] as const)("a v1 session's GET stream through %s", (through) => {
  let f: Fixture;
  beforeEach(async () => {
    f = await start(through);
  });
  afterEach(() => f.close());

  test('a notification on the GET stream leaves masked; audit and metrics record what fired', async () => {
    const sid = await initialize(f.url);
    const session = { 'Mcp-Session-Id': sid, 'MCP-Protocol-Version': PROTOCOL, ...AUTH };
    const controller = new AbortController();
    const stream = await fetch(f.url, {
      method: 'GET',
      headers: { Accept: 'text/event-stream', ...session },
      signal: controller.signal,
    });
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);

    // The stream is open on the server's side once its answer's headers are sent: the message goes to it.
    await f.servers.get(serverSessionOf(sid))!.sendLoggingMessage({
      level: 'info',
      data: { note: `card ${CARD} on file for ${EMAIL}` },
    });
    const text = await readUntil(
      stream.body!,
      (t) => t.includes('notifications/message') && t.includes('\n\n'),
    );
    const event = text.split('\n').find((l) => l.startsWith('data:') && l.includes('notifications/message'));
    expect(event).toBeDefined();
    const message = JSON.parse(event!.slice('data:'.length)) as { params: { data: { note: string } } };
    expect(message.params.data.note).toContain(MASKED);
    expect(text).not.toContain(CARD);
    expect(text).not.toContain(EMAIL);
    expect(message.params.data.note).toMatch(/@example\.com/);
    controller.abort();

    await until(() => f.audit.some((r) => r.http_method === 'GET'));
    const get = f.audit.find((r) => r.http_method === 'GET')!;
    expect(get.redacted).toEqual(expect.arrayContaining(['card', 'email']));
    expect(await f.metric('redactions_total', { rule: 'card' })).toBe(1);
    expect(await f.metric('redactions_total', { rule: 'email' })).toBe(1);
  });

  test('DELETE goes through the same route and ends the session', async () => {
    const sid = await initialize(f.url);
    const end = await fetch(f.url, {
      method: 'DELETE',
      headers: { 'Mcp-Session-Id': sid, 'MCP-Protocol-Version': PROTOCOL, ...AUTH },
    });
    expect(end.status).toBe(200);
    await until(() => !f.servers.has(serverSessionOf(sid)));
  });
});

describe('the full mcpEndpoint() stack', () => {
  const keys = [{ userId: 'alice', hash: hashKey(KEY), groups: ['staff'] }];

  test.each(['dispatch()', 'sdk()'] as const)(
    'with %s still answers GET with the JSON 405',
    async (backend) => {
      const terminal = backend === 'sdk()' ? sdk({ handler: sessions(new Map()) }) : undefined;
      const endpoint = mcpEndpoint({
        auth: { apiKeys: keys },
        logger: quiet,
        ...(terminal !== undefined
          ? { backend: terminal }
          : { handlers: {}, dispatch: { serverInfo: { name: 'endpoint', version: '1.0.0' } } }),
      });
      const server = await serve((req, res) => endpoint(req, res, () => {}));
      try {
        const res = await fetch(server.url, {
          method: 'GET',
          headers: { Accept: 'text/event-stream', ...AUTH },
        });
        expect(res.status).toBe(405);
        expect(res.headers.get('allow')).toBe('POST');
        expect(res.headers.get('content-type')).toMatch(/^application\/json/);
        expect(await res.json()).toEqual({
          jsonrpc: '2.0',
          error: { code: -32600, message: 'Method not allowed: use POST' },
        });
      } finally {
        await server.close();
        await endpoint.close({ deadlineMs: 0 });
      }
    },
  );
});
