/**
 * An upstream MCP server for the proxy's tests: a plain official SDK v2 server (`createMcpHandler`, both eras, no
 * mcpware in it) served on `node:http`, run in a process of its own (`node --import tsx`, port 0; its first stdout
 * line is `{"url":"http://127.0.0.1:PORT/mcp"}`).
 *
 * Tools: `card` (a card number and an e-mail address), `fail` (`isError: true`), `notify` (a log message carrying a
 * card number before its result, so the answer is SSE), `hang` (never answers; the abort is counted), `echo_headers`
 * (the request headers the upstream received).
 *
 * The path picks how it answers: `/mcp` as the SDK does; `/status500/mcp` 500; `/html/mcp` 200 text/html;
 * `/cookie/mcp` the SDK's answer with `Set-Cookie`, `Server`, `X-Powered-By` and `Via` added; `/redirect/mcp` 307
 * to `/mcp`. `GET /__stats` answers what it has seen: `{ posts, calls: { tool: count }, aborted }`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import readline from 'node:readline';
import type { McpHttpHandler } from '@modelcontextprotocol/server';

/** A card number (Luhn-valid test number) and an e-mail address the upstream's tools return. */
export const UPSTREAM_CARD = '4111 1111 1111 1111';
export const UPSTREAM_EMAIL = 'jane.doe@example.com';

export interface UpstreamStats {
  posts: number;
  calls: Record<string, number>;
  aborted: number;
}

export interface UpstreamProcess {
  /** `http://127.0.0.1:PORT` */
  base: string;
  /** `http://127.0.0.1:PORT/mcp` */
  url: string;
  stats(): Promise<UpstreamStats>;
  /** Ends the process (SIGTERM, SIGKILL after a second). */
  stop(): Promise<void>;
  proc: ChildProcess;
}

/** Starts the upstream in another process; resolves once it has printed its URL. */
export async function startUpstream(): Promise<UpstreamProcess> {
  const proc = spawn(process.execPath, ['--import', 'tsx', __filename], {
    cwd: path.resolve(__dirname, '../..'),
    env: { ...process.env, MCPWARE_UPSTREAM_FIXTURE: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  proc.stderr!.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the upstream did not start: ${err}`)), 30_000);
    readline.createInterface({ input: proc.stdout! }).once('line', (line) => {
      clearTimeout(timer);
      resolve((JSON.parse(line) as { url: string }).url);
    });
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the upstream exited (${code}): ${err}`));
    });
  });
  const base = url.replace(/\/mcp$/, '');
  return {
    base,
    url,
    proc,
    async stats() {
      const res = await fetch(`${base}/__stats`);
      return (await res.json()) as UpstreamStats;
    },
    stop() {
      return new Promise((resolve) => {
        if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
        const kill = setTimeout(() => proc.kill('SIGKILL'), 1000);
        proc.once('exit', () => {
          clearTimeout(kill);
          resolve();
        });
        proc.kill('SIGTERM');
      });
    },
  };
}

const stats: UpstreamStats = { posts: 0, calls: {}, aborted: 0 };

async function sdkHandler(): Promise<McpHttpHandler> {
  const { McpServer, createMcpHandler } = await import('@modelcontextprotocol/server');
  return createMcpHandler(() => {
    const server = new McpServer(
      { name: 'upstream-fixture', version: '1.0.0' },
      { capabilities: { logging: {} } },
    );
    server.registerTool('card', { description: 'A customer record' }, () => ({
      content: [{ type: 'text', text: `card ${UPSTREAM_CARD}, mail ${UPSTREAM_EMAIL}` }],
    }));
    server.registerTool('fail', { description: 'Always fails' }, () => ({
      content: [{ type: 'text', text: 'the tool failed' }],
      isError: true,
    }));
    server.registerTool('notify', { description: 'Logs, then answers' }, async (ctx) => {
      await ctx.mcpReq.notify({
        method: 'notifications/message',
        params: { level: 'info', data: `charging card ${UPSTREAM_CARD}` },
      });
      return { content: [{ type: 'text', text: 'notified' }] };
    });
    server.registerTool('hang', { description: 'Never answers' }, (ctx) => {
      return new Promise(() => {
        ctx.mcpReq.signal.addEventListener('abort', () => undefined);
      });
    });
    server.registerTool('echo_headers', { description: 'The request headers received' }, (ctx) => {
      const headers: Record<string, string> = {};
      for (const [k, v] of ctx.http?.req?.headers ?? []) headers[k] = v;
      return { content: [{ type: 'text', text: JSON.stringify(headers) }] };
    });
    return server;
  });
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function count(body: Buffer): void {
  stats.posts++;
  try {
    const msg = JSON.parse(body.toString('utf8')) as { method?: unknown; params?: { name?: unknown } };
    if (msg.method === 'tools/call' && typeof msg.params?.name === 'string') {
      stats.calls[msg.params.name] = (stats.calls[msg.params.name] ?? 0) + 1;
    }
  } catch {
    // Not JSON: the SDK answers it.
  }
}

/** Node request → web Request → the SDK's handler → node response, streamed; the client's close aborts it. */
async function serve(handler: McpHttpHandler, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  if (req.method === 'GET' && url.pathname === '/__stats') {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(stats));
    return;
  }
  const mode = url.pathname === '/mcp' ? 'sdk' : url.pathname.slice(1).replace(/\/mcp$/, '');
  const body = req.method === 'POST' ? await readBody(req) : undefined;
  if (body) count(body);
  if (mode === 'status500') {
    res.writeHead(500, { 'content-type': 'text/plain' }).end('internal failure: stack trace here');
    return;
  }
  if (mode === 'html') {
    res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body>Login</body></html>');
    return;
  }
  if (mode === 'redirect') {
    res.writeHead(307, { location: '/mcp' }).end();
    return;
  }
  const abort = new AbortController();
  let finished = false;
  res.on('close', () => {
    if (finished) return;
    stats.aborted++;
    abort.abort();
  });
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else headers.set(name, value);
  }
  const request = new Request(`http://127.0.0.1${url.pathname}${url.search}`, {
    method: req.method ?? 'POST',
    headers,
    body: body && body.length > 0 ? body : undefined,
    signal: abort.signal,
  });
  const response = await handler.fetch(request);
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of response.headers) out[name] = value;
  if (mode === 'cookie') {
    out['set-cookie'] = ['session=upstream-secret; HttpOnly', 'tracking=1'];
    out.server = 'upstream-banner/1.0';
    out['x-powered-by'] = 'upstream-framework';
    out.via = '1.1 upstream-gateway';
  }
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
}

async function main(): Promise<void> {
  const handler = await sdkHandler();
  const server = http.createServer((req, res) => {
    serve(handler, req, res).catch((err: unknown) => {
      process.stderr.write(`upstream fixture: ${String(err)}\n`);
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  server.listen(0, '127.0.0.1', () => {
    const { port } = server.address() as AddressInfo;
    process.stdout.write(JSON.stringify({ url: `http://127.0.0.1:${port}/mcp` }) + '\n');
  });
  const stop = (): void => {
    server.closeAllConnections();
    server.close();
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

if (process.env.MCPWARE_UPSTREAM_FIXTURE === '1' && require.main === module) void main();
