/**
 * Say so instead of failing silently. `redact()`, `audit()` and `metrics()` in front of a final handler that is
 * not mcpware's (a real SDK v1 `McpServer` on a stateless `StreamableHTTPServerTransport`, handed
 * `getMcp(req).message.raw`) cannot keep their promise: that handler applies no `req.locals.outbound` and
 * records no outcome. Each instance logs one warning naming the cause and the fix at the end of its first
 * answered request, none on the second, and none at all in front of `dispatch()`. Over HTTP, in Express 5.
 */
import http, { type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import express from 'express';
import * as z from 'zod/v4';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { audit } from '../../../middleware/audit/index';
import { dispatch } from '../../../middleware/dispatch/index';
import { metrics } from '../../../middleware/metrics/index';
import { getMcp, parse } from '../../../middleware/parse/index';
import { redact } from '../../../middleware/redact/index';
import { ToolRegistry, ok } from '../../../handlers/tools/index';
import type { Middleware } from '../../../core/types';
import { close, listen } from '../../support/dispatch-harness';

const quiet = { error() {}, warn() {} };
const SI = { name: 'final-handler', version: '1.0.0' };
const SECRET = 'write to alice@example.com';

/** The official SDK v1, stateless: a fresh server and transport per request, handed the parsed body. */
async function sdkFinal(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const server = new McpServer(SI);
  server.registerTool('leak', { inputSchema: { n: z.number().optional() } }, () => ({
    content: [{ type: 'text', text: SECRET }],
    isError: true,
  }));
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  res.on('close', () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, getMcp(req)!.message.raw);
}

const dispatchFinal = (): Middleware =>
  dispatch({
    anonymous: true,
    handlers: {
      tools: new ToolRegistry({
        tools: [{ name: 'leak', inputSchema: { type: 'object' }, call: () => ok({ text: SECRET }) }],
      }),
    },
    serverInfo: SI,
    logger: quiet,
  });

/** The stderr lines of mcpware's default logger written while the test runs. */
const lines: string[] = [];
const write = process.stderr.write.bind(process.stderr);
beforeAll(() => {
  process.stderr.write = ((chunk: string | Uint8Array, ...rest: never[]) => {
    const text = String(chunk);
    if (text.startsWith('[mcpware] ')) lines.push(text);
    return write(chunk, ...rest);
  }) as typeof process.stderr.write;
});
afterAll(() => {
  process.stderr.write = write;
});

async function serve(
  mws: Middleware[],
  final: Middleware | typeof sdkFinal,
): Promise<{
  server: Server;
  call(): Promise<{ status: number; text: string }>;
}> {
  const app = express();
  app.use('/mcp', ...mws, (req: IncomingMessage, res: ServerResponse, next: (e?: unknown) => void) => {
    void (final as Middleware)(req, res, next);
  });
  const server = http.createServer(app);
  const base = await listen(server);
  let id = 0;
  return {
    server,
    async call() {
      const r = await fetch(`${base}/mcp`, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
          'MCP-Protocol-Version': '2025-06-18',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: ++id,
          method: 'tools/call',
          params: { name: 'leak', arguments: {} },
        }),
      });
      return { status: r.status, text: await r.text() };
    },
  };
}

/** Each middleware alone in front of the final handler, the warning it owes, and the page it points to. */
const CASES: [string, () => Middleware, RegExp][] = [
  [
    'redact',
    () => redact(),
    /^\[mcpware\] redact\(\): the answer to tools\/call was written by a handler that does not apply req\.locals\.outbound, so nothing was masked: serve it through dispatch\(\), sdk\(\) or proxy\(\) \(docs\/middleware\/redact\.md#in-front-of-another-final-handler\)/,
  ],
  [
    'audit',
    () => audit({ logger: { log() {} } }),
    /^\[mcpware\] audit\(\): the answer to tools\/call was written by a handler that records neither req\.locals\.response nor req\.locals\.refusal, so its outcome is unknown and is recorded as ok: serve it through dispatch\(\), sdk\(\) or proxy\(\) \(docs\/middleware\/audit\.md#in-front-of-another-final-handler\)/,
  ],
  [
    'metrics',
    () => metrics(),
    /^\[mcpware\] metrics\(\): the answer to tools\/call was written by a handler that records neither req\.locals\.response nor req\.locals\.refusal, so its outcome is unknown and is recorded as ok: serve it through dispatch\(\), sdk\(\) or proxy\(\) \(docs\/middleware\/metrics\.md#in-front-of-another-final-handler\)/,
  ],
];

describe.each(CASES)('%s() in front of the official SDK v1 transport', (name, make, warning) => {
  test('warns once, at the end of its first answered request, not on the second', async () => {
    const s = await serve([make(), parse({ logger: quiet })], sdkFinal);
    try {
      lines.length = 0;
      const first = await s.call();
      expect(first.status).toBe(200);
      // The SDK wrote the answer: nothing masked, the tool's error not seen by anyone in front.
      expect(first.text).toContain('alice@example.com');
      expect(first.text).toContain('"isError":true');
      const told = lines.filter((l) => l.startsWith(`[mcpware] ${name}(): `));
      expect(told).toHaveLength(1);
      expect(told[0]).toMatch(warning);
      expect((await s.call()).status).toBe(200);
      expect(lines.filter((l) => l.startsWith(`[mcpware] ${name}(): `))).toHaveLength(1);
    } finally {
      await close(s.server);
    }
  });

  test('two instances: each says so once', async () => {
    const s = await serve([make(), make(), parse({ logger: quiet })], sdkFinal);
    try {
      lines.length = 0;
      for (let i = 0; i < 3; i++) expect((await s.call()).status).toBe(200);
      expect(lines.filter((l) => l.startsWith(`[mcpware] ${name}(): `))).toHaveLength(2);
    } finally {
      await close(s.server);
    }
  });
});

test('in front of dispatch(), none of them says anything', async () => {
  const s = await serve(
    [audit({ logger: { log() {} } }), metrics(), parse({ logger: quiet }), redact()],
    dispatchFinal(),
  );
  try {
    lines.length = 0;
    for (let i = 0; i < 3; i++) {
      const r = await s.call();
      expect(r.status).toBe(200);
      expect(r.text).not.toContain('alice@example.com');
    }
    expect(lines).toEqual([]);
  } finally {
    await close(s.server);
  }
});

test("redact() listens to the first requests' finish only: once the check concluded, it adds no listener", async () => {
  const counts: number[] = [];
  const probe: Middleware = (_req, res, next) => {
    counts.push(res.listenerCount('finish'));
    next();
  };
  const s = await serve([redact(), parse({ logger: quiet }), probe], sdkFinal);
  try {
    for (let i = 0; i < 3; i++) expect((await s.call()).status).toBe(200);
    expect(counts[1]).toBe(counts[0]! - 1);
    expect(counts[2]).toBe(counts[1]);
  } finally {
    await close(s.server);
  }
});
