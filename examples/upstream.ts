/**
 * `npm run example:upstream`: the demo's tools, resources and prompts (examples/sdk-demo-tools.ts) served by a
 * plain official-SDK server on `http://127.0.0.1:$PORT/mcp`, with no mcpware middleware in it: the SDK v2's
 * `createMcpHandler()` (both eras, stateless) on bare node:http. It is the upstream the demo proxies to with
 * `MCP_UPSTREAM_URL=http://127.0.0.1:$PORT/mcp`; mcpware in front of it adds the visibility of `admin_report`,
 * redaction, limits, audit and metrics. It has no authentication: bind it to loopback only.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { McpHttpHandler } from '@modelcontextprotocol/server';
import { sdkDemoHandler } from './sdk-demo-tools.js';

/** Largest request body read, in bytes (the SDK's own default bound). */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

/** The request's body, up to `MAX_BODY_BYTES` (undefined past it). */
async function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** The node:http face of a web-standard handler: a `Request` in, its `Response` streamed out. */
export function nodeListener(handler: McpHttpHandler): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    void serve(handler, req, res).catch((err: unknown) => {
      process.stderr.write(`upstream: ${err instanceof Error ? err.stack : String(err)}\n`);
      if (!res.headersSent) {
        res.writeHead(500, { 'Content-Type': 'application/json' });
        res.end('{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal error"}}');
      } else res.destroy();
    });
  };
}

async function serve(handler: McpHttpHandler, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (new URL(req.url ?? '/', 'http://localhost').pathname !== '/mcp') {
    res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found');
    return;
  }
  const abort = new AbortController();
  res.on('close', () => abort.abort());
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
  }
  let body: Buffer | undefined;
  if (req.method === 'POST') {
    body = await readBody(req);
    if (body === undefined) {
      res.writeHead(413, { 'Content-Type': 'text/plain', Connection: 'close' }).end('body too large');
      return;
    }
  }
  const response = await handler.fetch(
    new Request(`http://${req.headers.host ?? 'localhost'}${req.url ?? '/mcp'}`, {
      method: req.method ?? 'GET',
      headers,
      ...(body === undefined ? {} : { body }),
      signal: abort.signal,
    }),
  );
  res.writeHead(response.status, Object.fromEntries(response.headers));
  if (response.body === null) {
    res.end();
    return;
  }
  for await (const chunk of response.body) {
    if (abort.signal.aborted) break;
    // Backpressure: wait for the socket to drain before reading more of the answer.
    if (!res.write(chunk)) await new Promise((resolve) => res.once('drain', resolve).once('close', resolve));
  }
  res.end();
}

async function main(): Promise<void> {
  const host = process.env.HOST || '127.0.0.1';
  const port = Number(process.env.PORT ?? 8076);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new TypeError('PORT must be a port number');
  const handler = await sdkDemoHandler();
  const server = http.createServer(nodeListener(handler));
  server.listen(port, host, () => {
    const { port: bound } = server.address() as { port: number };
    process.stdout.write(
      `upstream MCP server (official SDK, no mcpware) listening on http://${host}:${bound}/mcp\n`,
    );
  });
  const stop = (): void => {
    server.close(() => void handler.close().then(() => process.exit(0)));
    server.closeAllConnections();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`upstream: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
