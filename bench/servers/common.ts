/**
 * What every benchmark server shares: listening on 127.0.0.1 (a free port, told to the runner on stdout), the
 * `/__bench/stats` endpoint the runner polls, and the fixed answers of the baseline servers.
 */
import http, { type IncomingMessage, type RequestListener, type ServerResponse } from 'node:http';
import v8 from 'node:v8';
import type { AddressInfo } from 'node:net';
import {
  ECHO_INPUT_SCHEMA,
  ECHO_TEXT,
  type Era,
  MODERN_VERSION,
  SERVER_INFO,
  TOOL_DESCRIPTION,
  TOOL_NAME,
} from '../workloads.js';

export const STATS_PATH = '/__bench/stats';

/** Extra numbers a server reports on `/__bench/stats` (limiter slots, metric series, audit buffers). */
export type StatsProvider = () => Promise<Record<string, unknown>> | Record<string, unknown>;

/** Answer `/__bench/stats`; true when it did. */
export function serveStats(req: IncomingMessage, res: ServerResponse, extra?: StatsProvider): boolean {
  if (req.method !== 'GET' || req.url !== STATS_PATH) return false;
  Promise.resolve(extra ? extra() : {}).then(
    (more) => {
      // V8's heap by space: `new_space` is the young generation (V8 sizes it), the old space holds what lives on.
      const heapSpaces: Record<string, { size: number; used: number }> = {};
      for (const sp of v8.getHeapSpaceStatistics())
        heapSpaces[sp.space_name] = { size: sp.space_size, used: sp.space_used_size };
      const body = JSON.stringify({ memory: process.memoryUsage(), heapSpaces, ...more });
      res.statusCode = 200;
      res.setHeader('content-type', 'application/json');
      res.end(body);
    },
    (err: unknown) => {
      res.statusCode = 500;
      res.end(String(err));
    },
  );
  return true;
}

/** Listen on 127.0.0.1 and tell the runner the port (one JSON line on stdout). */
export function listen(handler: RequestListener | http.Server, name: string): http.Server {
  const server = handler instanceof http.Server ? handler : http.createServer(handler);
  // The SDK and Express defaults differ; keep-alive behaviour must be the same for every server under test.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  server.listen(0, '127.0.0.1', () => {
    const { port } = server.address() as AddressInfo;
    process.stdout.write(JSON.stringify({ ready: true, name, port, pid: process.pid }) + '\n');
  });
  const stop = (): void => {
    server.close();
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  return server;
}

/**
 * The results mcpware answers for each workload, so the baselines answer the same JSON (the runner's probe
 * prints every server's answer size; the thorough check holds every server to the same content).
 */
export function fixedResult(era: Era, method: string, text: string = ECHO_TEXT): Record<string, unknown> {
  const base: Record<string, unknown> =
    method === 'tools/list'
      ? { tools: [{ name: TOOL_NAME, inputSchema: ECHO_INPUT_SCHEMA, description: TOOL_DESCRIPTION }] }
      : { content: [{ type: 'text', text }] };
  if (era === 'legacy') return base;
  const out: Record<string, unknown> = { resultType: 'complete', ...base };
  if (method === 'tools/list') {
    out.ttlMs = 0;
    out.cacheScope = 'private';
  }
  out._meta = { 'io.modelcontextprotocol/serverInfo': SERVER_INFO };
  return out;
}

/** The era of a parsed request body, read the cheap way (the baselines do no protocol checks). */
export function eraOf(body: { params?: { _meta?: Record<string, unknown> } }): Era {
  const meta = body.params?._meta;
  return meta && typeof meta['io.modelcontextprotocol/protocolVersion'] === 'string' ? 'modern' : 'legacy';
}

export { MODERN_VERSION };
