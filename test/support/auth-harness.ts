/**
 * Test harness for the auth middlewares: the same middleware on bare node:http and on Express 5, both bound to
 * 127.0.0.1, with a final handler that echoes what authentication attached and a record of `req.locals` for
 * every finished response (refusals included).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import type { Logger, Middleware, RequestLocals } from '../../core/types';

export type Flavour = 'node:http' | 'express';
export const FLAVOURS: Flavour[] = ['node:http', 'express'];

export interface Harness {
  url: string;
  /** `req.locals` of each finished request, in order. */
  seen: RequestLocals[];
  close(): Promise<void>;
}

function finalHandler(req: http.IncomingMessage, res: http.ServerResponse): void {
  const l = req.locals ?? {};
  const body = JSON.stringify({ passed: true, principal: l.principal ?? null, auth: l.auth ?? null });
  res.statusCode = 200;
  res.setHeader('Content-Type', 'application/json');
  res.end(body);
}

/** Serve `mw` in front of the echo handler. Express mounts it at `/mcp`; bare node:http sees every path. */
export async function serve(flavour: Flavour, mw: Middleware): Promise<Harness> {
  const seen: RequestLocals[] = [];
  const record = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    res.on('finish', () => seen.push(req.locals ?? {}));
  };
  let server: http.Server;
  if (flavour === 'node:http') {
    server = http.createServer((req, res) => {
      record(req, res);
      mw(req, res, (err?: unknown) => {
        if (err) {
          res.statusCode = 500;
          res.end('next(err)');
          return;
        }
        finalHandler(req, res);
      });
    });
  } else {
    const app = express();
    app.use((req, res, next) => {
      record(req, res);
      next();
    });
    app.use('/mcp', mw as express.RequestHandler, finalHandler);
    server = http.createServer(app);
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The `Authorization` header carrying a bearer token, for supertest's `set(...)`. */
export function bearer(token: string): [string, string] {
  return ['Authorization', `Bearer ${token}`];
}

/** A JSON-RPC request body. */
export const PING = { jsonrpc: '2.0', id: 1, method: 'ping' };

/** A logger that keeps what it is told. */
export interface MemoryLogger extends Logger {
  entries: { level: string; message: string; meta: Record<string, unknown> }[];
  text(): string;
}

export function memoryLogger(): MemoryLogger {
  const entries: MemoryLogger['entries'] = [];
  const at =
    (level: string) =>
    (message: string, meta: Record<string, unknown> = {}): void => {
      entries.push({ level, message, meta });
    };
  return {
    entries,
    error: at('error'),
    warn: at('warn'),
    info: at('info'),
    debug: at('debug'),
    text: () => entries.map((e) => `${e.level} ${e.message} ${JSON.stringify(e.meta)}`).join('\n'),
  };
}

/** Wait until `cond()` holds, polling (no timing assertion: the test's own timeout bounds it). */
export async function until(cond: () => boolean, stepMs = 10): Promise<void> {
  while (!cond()) await new Promise((r) => setTimeout(r, stepMs));
}
