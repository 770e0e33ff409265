/**
 * Shared pieces of the limits tests: a server (bare node:http or Express 5) with a stand-in authenticator
 * (`x-user` header → principal), the limits middleware, and a final handler that can hold requests open until
 * the test releases them; a small HTTP client; and a polling wait.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { charge } from '../../middleware/limits/index';
import { localsOf } from '../../core/respond';
import type { Middleware } from '../../core/types';

export type Kind = 'bare' | 'express';
export const KINDS: Kind[] = ['bare', 'express'];

export interface TestApp {
  port: number;
  /** Requests that reached the final handler. */
  admitted: number;
  /** Requests the final handler is holding open. */
  readonly holding: number;
  /** Answer every held request. */
  release(): void;
  close(): Promise<void>;
}

/** The limits' key of the stand-in's principal `id` (see principalKey): method and source `test`, then the id. */
export function userKey(id: string): string {
  return JSON.stringify(['test', 'test', id]);
}

/** The stand-in for an authentication middleware: `x-user: alice` → principal alice; no header → anonymous. */
function authStandIn(req: IncomingMessage): void {
  const user = req.headers['x-user'];
  if (typeof user === 'string')
    localsOf(req).principal = { userId: user, groups: [], roles: [], method: 'test' };
}

export async function startApp(
  mw: Middleware,
  kind: Kind,
  opts: { jsonParser?: boolean } = {},
): Promise<TestApp> {
  let waiting: (() => void)[] = [];
  const state = {
    admitted: 0,
    get holding() {
      return waiting.length;
    },
  };
  const final = (req: IncomingMessage, res: ServerResponse): void => {
    state.admitted++;
    const c = req.headers['x-charge'];
    if (typeof c === 'string') for (const part of c.split(',')) charge(req, Number(part));
    const answer = (): void => {
      if (res.writableEnded || res.destroyed) return;
      res.statusCode = 200;
      res.setHeader('Content-Type', 'application/json');
      res.end('{"jsonrpc":"2.0","id":1,"result":{}}');
    };
    const hold = req.headers['x-hold'];
    if (hold === 'gate') waiting.push(answer);
    else if (typeof hold === 'string' && /^\d{1,5}$/.test(hold)) setTimeout(answer, Number(hold));
    else answer();
    req.resume();
  };
  let server: http.Server;
  if (kind === 'bare') {
    server = http.createServer((req, res) => {
      authStandIn(req);
      mw(req, res, (err?: unknown) => {
        if (err) {
          res.statusCode = 500;
          res.end();
          return;
        }
        final(req, res);
      });
    });
  } else {
    const app = express();
    if (opts.jsonParser) app.use(express.json());
    app.use((req, _res, next) => {
      authStandIn(req);
      next();
    });
    app.use(mw);
    app.use((req: IncomingMessage, res: ServerResponse) => final(req, res));
    server = http.createServer(app);
  }
  server.keepAliveTimeout = 1000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    get admitted() {
      return state.admitted;
    },
    set admitted(v: number) {
      state.admitted = v;
    },
    get holding() {
      return state.holding;
    },
    release() {
      const w = waiting;
      waiting = [];
      for (const f of w) f();
    },
    close() {
      const w = waiting;
      waiting = [];
      for (const f of w) f();
      server.closeAllConnections();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}

export interface Resp {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  json: () => {
    jsonrpc?: string;
    id?: unknown;
    result?: unknown;
    error?: { code: number; message: string; data?: unknown };
  };
}

export interface PostOptions {
  user?: string;
  /** `gate`: held until release(); a number: answered after that many ms. */
  hold?: 'gate' | number;
  /** Comma-separated charges the handler records, e.g. `'60'` or `'10,10'`. */
  charge?: string;
  id?: unknown;
  method?: string;
  body?: string;
  agent?: http.Agent;
  path?: string;
}

export const keepAlive = (): http.Agent => new http.Agent({ keepAlive: true, maxSockets: 256 });

/** One request. The body is a JSON-RPC request with `id` (default 1) unless `body` is given. */
export function post(port: number, o: PostOptions = {}): Promise<Resp> {
  const method = o.method ?? 'POST';
  const body =
    method === 'POST'
      ? (o.body ??
        JSON.stringify({ jsonrpc: '2.0', id: o.id === undefined ? 1 : o.id, method: 'tools/list' }))
      : undefined;
  const headers: Record<string, string> = {};
  if (body !== undefined) {
    headers['content-type'] = 'application/json';
    headers['content-length'] = String(Buffer.byteLength(body));
  }
  if (o.user !== undefined) headers['x-user'] = o.user;
  if (o.hold !== undefined) headers['x-hold'] = String(o.hold);
  if (o.charge !== undefined) headers['x-charge'] = o.charge;
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, method, path: o.path ?? '/mcp', headers, agent: o.agent ?? false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: () => JSON.parse(text) });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * A request to abort: resolves `sent` once written; `abort()` destroys the connection (the client gives up).
 */
export function abortable(port: number, o: PostOptions = {}): { abort(): void; done: Promise<void> } {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'slow' } });
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(body)),
  };
  if (o.user !== undefined) headers['x-user'] = o.user;
  headers['x-hold'] = String(o.hold ?? 'gate');
  const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/mcp', headers, agent: false });
  const done = new Promise<void>((resolve) => {
    req.on('error', () => resolve());
    req.on('close', () => resolve());
  });
  req.end(body);
  return { abort: () => req.destroy(), done };
}

/** Poll `cond` every 5 ms until it holds (the jest timeout bounds the wait). */
export async function until(
  cond: () => boolean | Promise<boolean>,
  what: string,
  limitMs = 15_000,
): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Count answers by status. */
export function tally(rs: Resp[]): Record<number, number> {
  const out: Record<number, number> = {};
  for (const r of rs) out[r.status] = (out[r.status] ?? 0) + 1;
  return out;
}

/** Run `total` calls of `f`, at most `width` at a time. */
export async function inBatches<T>(total: number, width: number, f: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < total; i += width) {
    const n = Math.min(width, total - i);
    out.push(...(await Promise.all(Array.from({ length: n }, (_, j) => f(i + j)))));
  }
  return out;
}
