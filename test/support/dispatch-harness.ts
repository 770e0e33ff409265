/**
 * Test harness: the same middleware stack served on bare node:http and in Express 5, bound to 127.0.0.1,
 * talked to with mcpware's own test client.
 */
import express from 'express';
import http, { type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger, Middleware } from '../../core/types';
import { type McpTestClientOptions, McpTestClient } from '../../testing/client';

export type Platform = 'node:http' | 'express';
export const PLATFORMS: Platform[] = ['node:http', 'express'];
export const ERAS = ['modern', 'legacy'] as const;

/** What falling off the end of a chain answers: 404 `{"fell":"through"}`. */
export function fellThrough(res: ServerResponse): void {
  res.statusCode = 404;
  res.setHeader('Content-Type', 'application/json');
  res.end(JSON.stringify({ fell: 'through' }));
}

/**
 * Run middlewares in order on bare node:http, as Connect does; `next(err)` answers 500 with the error, and
 * falling off the end answers what `end` writes ({@link fellThrough} by default).
 */
export function chain(
  mws: readonly Middleware[],
  end: (res: ServerResponse) => void = fellThrough,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    let i = 0;
    const next = (err?: unknown): void => {
      if (err) {
        res.statusCode = 500;
        res.end(JSON.stringify({ nextError: String(err) }));
        return;
      }
      const mw = mws[i++];
      if (!mw) return end(res);
      mw(req, res, next);
    };
    next();
  };
}

/** A server for the middlewares on the given platform (not yet listening). */
export function serve(platform: Platform, mws: readonly Middleware[], opts: { json?: boolean } = {}): Server {
  if (platform === 'node:http') return http.createServer(chain(mws));
  const app = express();
  if (opts.json) app.use(express.json());
  app.use('/mcp', ...mws);
  app.use((_req, res) => {
    res.status(404).json({ fell: 'through' });
  });
  return http.createServer(app);
}

/** Bare node:http mounts the stack on every path; keep the client on /mcp for both. */
export async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const a = server.address() as AddressInfo;
  return `http://127.0.0.1:${a.port}`;
}

export async function close(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** A running stack plus a client factory. */
export interface Stack {
  server: Server;
  base: string;
  client(opts?: McpTestClientOptions): McpTestClient;
  close(): Promise<void>;
}

export async function stack(
  platform: Platform,
  mws: readonly Middleware[],
  opts: { json?: boolean } = {},
): Promise<Stack> {
  const server = serve(platform, mws, opts);
  const base = await listen(server);
  return {
    server,
    base,
    // These servers' tests call x-mcp-header tools without listing them first: the client fetches tools/list.
    client: (o = {}) => new McpTestClient(base, { autoParamHeaders: true, ...o }),
    close: () => close(server),
  };
}

/** A logger that keeps what it was told (real object, no mocking library). */
export function memoryLogger(): Logger & {
  lines: { level: string; message: string; meta?: Record<string, unknown> }[];
} {
  const lines: { level: string; message: string; meta?: Record<string, unknown> }[] = [];
  return {
    lines,
    error: (message, meta) => void lines.push({ level: 'error', message, meta }),
    warn: (message, meta) => void lines.push({ level: 'warn', message, meta }),
  };
}

/** A middleware that sets `req.locals.principal` from an `x-user` header (roles from `x-roles`). */
export function fakeAuth(): Middleware {
  return (req, _res, next) => {
    const u = req.headers['x-user'];
    if (typeof u === 'string') {
      const roles = typeof req.headers['x-roles'] === 'string' ? req.headers['x-roles'].split(',') : [];
      (req.locals ??= {}).principal = { userId: u, groups: [], roles, method: 'test' };
    }
    next();
  };
}

/** A deferred promise. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}
