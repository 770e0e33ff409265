/**
 * Server 4: the official SDK v2 (`@modelcontextprotocol/server` 2.x + `@modelcontextprotocol/express`), wired as
 * its docs recommend: `createMcpExpressApp()` (express.json + localhost Host/Origin validation) and
 * `createMcpHandler(factory)`, which builds a fresh `McpServer` per request and serves the 2026-07-28
 * revision, falling back to stateless serving for 2025-era requests (its default `legacy: 'stateless'`).
 *
 * The docs mount the handler with `toNodeHandler(handler)` from `@modelcontextprotocol/node`, which is not a
 * dependency of this project; `nodeHandler` below does what that adapter does (Node request → web `Request`
 * with the parsed body re-serialized, `handler.fetch`, `Response` → Node response).
 */
import { createMcpExpressApp } from '@modelcontextprotocol/express';
import { type McpHttpHandler, McpServer, createMcpHandler } from '@modelcontextprotocol/server';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import * as z from 'zod/v4';
import { SERVER_INFO, TOOL_DESCRIPTION, TOOL_NAME } from '../workloads.js';
import { listen, serveStats } from './common.js';

const handler = createMcpHandler(() => {
  const server = new McpServer(SERVER_INFO);
  server.registerTool(
    TOOL_NAME,
    { description: TOOL_DESCRIPTION, inputSchema: z.object({ text: z.string() }) },
    ({ text }) => ({ content: [{ type: 'text', text }] }),
  );
  return server;
});

/** The `toNodeHandler(handler)` adapter of `@modelcontextprotocol/node`, for a body express.json() parsed. */
function nodeHandler(h: McpHttpHandler) {
  return async (req: IncomingMessage, res: ServerResponse, parsedBody: unknown): Promise<void> => {
    const abort = new AbortController();
    let finished = false;
    res.on('close', () => {
      if (!finished) abort.abort();
    });
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (value === undefined || name.startsWith(':')) continue;
      if (Array.isArray(value)) for (const v of value) headers.append(name, v);
      else headers.set(name, value);
    }
    const body = JSON.stringify(parsedBody);
    headers.delete('content-encoding');
    headers.delete('transfer-encoding');
    headers.set('content-length', String(Buffer.byteLength(body)));
    const request = new Request(`http://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`, {
      method: req.method ?? 'POST',
      headers,
      body,
      signal: abort.signal,
    });
    let response: Response;
    try {
      response = await h.fetch(request, { parsedBody });
    } catch {
      response = Response.json(
        { jsonrpc: '2.0', error: { code: -32603, message: 'Internal server error' }, id: null },
        { status: 500 },
      );
    }
    const out: Record<string, string> = {};
    for (const [name, value] of response.headers) out[name] = value;
    res.writeHead(response.status, out);
    if (response.body === null) {
      finished = true;
      res.end();
      return;
    }
    for await (const chunk of response.body) {
      if (abort.signal.aborted) break;
      res.write(chunk);
    }
    finished = true;
    res.end();
  };
}

const node = nodeHandler(handler);
const app = createMcpExpressApp();
app.get('/__bench/stats', (req, res) => void serveStats(req, res));
app.post('/mcp', (req, res) => void node(req, res, req.body));

listen(http.createServer(app), 'sdk-v2');
