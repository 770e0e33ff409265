/**
 * Test harness for the observe middlewares: the same chain on bare node:http and in Express 5, and a tiny
 * test-only final handler standing in for the dispatcher: it answers tools/call, resources/read and prompts/get
 * from fixtures, applies `req.locals.outbound` exactly as the dispatcher does
 * (`for (const t of locals.outbound ?? []) value = t(value, info)`), and records `locals.response`.
 */
import express from 'express';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { parseRequest } from '../../core/parse-step';
import { chain } from './dispatch-harness';
import { localsOf, sendJson, sendRefusal } from '../../core/respond';
import type { Middleware } from '../../core/types';

export type Platform = 'node:http' | 'express';
export const PLATFORMS: Platform[] = ['node:http', 'express'];

/** Run middlewares in order on bare node:http; falling off the end → an empty 404. */
export function run(mws: readonly Middleware[]): (req: IncomingMessage, res: ServerResponse) => void {
  return chain(mws, (res) => {
    res.statusCode = 404;
    res.end();
  });
}

/** A server (not listening; supertest binds it to 127.0.0.1). Express mounts the chain on /mcp. */
export function serve(
  platform: Platform,
  mws: readonly Middleware[],
  extra?: (app: express.Express) => void,
): http.Server {
  if (platform === 'node:http') return http.createServer(run(mws));
  const app = express();
  extra?.(app);
  app.use('/mcp', ...mws);
  return http.createServer(app);
}

export const PV = 'io.modelcontextprotocol/protocolVersion';
export const CI = 'io.modelcontextprotocol/clientInfo';
export const CC = 'io.modelcontextprotocol/clientCapabilities';

/** A modern (2026-07-28) request body. */
export function modern(
  method: string,
  params: Record<string, unknown> = {},
  id: string | number = 1,
): Record<string, unknown> {
  const meta = {
    [PV]: '2026-07-28',
    [CI]: { name: 'test-client', version: '1.0.0' },
    [CC]: {},
    ...(params._meta as object),
  };
  return { jsonrpc: '2.0', id, method, params: { ...params, _meta: meta } };
}

/** Headers a modern request carries. */
export function modernHeaders(method: string, name?: string): Record<string, string> {
  const h: Record<string, string> = {
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
    'MCP-Protocol-Version': '2026-07-28',
    'Mcp-Method': method,
  };
  if (name !== undefined) h['Mcp-Name'] = name;
  return h;
}

export type Fixture = (params: Record<string, unknown>) => unknown;

export interface Fixtures {
  tools?: Record<string, Fixture>;
  resources?: Record<string, Fixture>;
  prompts?: Record<string, Fixture>;
}

/**
 * The stand-in final handler. Unknown tools/prompts/resources → -32602 (200), other methods → `{}`.
 * The response carries `x-redaction` (JSON of `locals.redaction`) so tests can see what redact() recorded.
 */
export function finalHandler(fixtures: Fixtures = {}): Middleware {
  return (req, res) => {
    parseRequest(req)
      .then((mcp) => {
        if (!('kind' in mcp)) {
          sendRefusal(req, res, mcp, 'final', { id: (mcp as { id?: unknown }).id });
          return;
        }
        const locals = localsOf(req);
        if (mcp.kind !== 'request') {
          res.statusCode = 202;
          res.end();
          return;
        }
        const params = (mcp.params ?? {}) as Record<string, unknown>;
        const method = mcp.method ?? '';
        const table =
          method === 'tools/call'
            ? fixtures.tools
            : method === 'resources/read'
              ? fixtures.resources
              : method === 'prompts/get'
                ? fixtures.prompts
                : undefined;
        let value: unknown = {};
        if (table) {
          const f =
            mcp.target !== undefined && Object.hasOwn(table, mcp.target) ? table[mcp.target] : undefined;
          if (!f) {
            locals.response = { code: -32602 };
            sendJson(res, 200, { jsonrpc: '2.0', id: mcp.id, error: { code: -32602, message: 'Unknown' } });
            return;
          }
          // A fixture tool is a registered tool: say so, as a ToolRegistry does.
          if (method === 'tools/call') locals.tool = mcp.target;
          value = f(params);
        }
        for (const t of locals.outbound ?? []) value = t(value, { method, kind: 'result' });
        locals.response = { toolError: (value as { isError?: unknown }).isError === true };
        sendJson(
          res,
          200,
          { jsonrpc: '2.0', id: mcp.id, result: value },
          { 'x-redaction': JSON.stringify(locals.redaction ?? null) },
        );
      })
      .catch((err: unknown) => {
        // What the dispatcher does with a throwing transform: a generic error, nothing of the value.
        res.statusCode = 500;
        res.end(JSON.stringify({ error: err instanceof Error ? err.message : 'error' }));
      });
  };
}

/** Listen on a random loopback port; resolves to the port. */
export async function listenLoopback(server: http.Server): Promise<number> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return (server.address() as { port: number }).port;
}

/** Samples of a Prometheus text exposition, keyed by {@link sampleKey} (`name{sorted labels}`). */
export function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`unparsable line: ${line}`);
    const labels = (m[2] ?? '')
      .split(/,(?=[a-zA-Z_]+=")/)
      .filter((x) => x !== '')
      .sort()
      .join(',');
    out.set(labels ? `${m[1]}{${labels}}` : m[1]!, Number(m[3]));
  }
  return out;
}

/** The key of a sample in {@link samples}. */
export function sampleKey(name: string, labels: Record<string, string> = {}): string {
  const l = Object.keys(labels)
    .map((k) => `${k}="${labels[k]}"`)
    .sort()
    .join(',');
  return l ? `${name}{${l}}` : name;
}
