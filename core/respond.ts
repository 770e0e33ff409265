/**
 * Writing answers with node:http only (statusCode, setHeader, end), so every middleware works under Connect,
 * bare `http.createServer` and Express alike.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type JsonRpcError, type Refusal, errorResponse } from '../lib/errors.js';
import type { Logger, RequestLocals } from './types.js';
import { errorMeta, log } from './log.js';

/** The request's locals, created on first use. */
export function localsOf(req: IncomingMessage): RequestLocals {
  return (req.locals ??= {});
}

/** Write a JSON body. Does nothing when the headers were already sent (the response is then just ended). */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers?: Readonly<Record<string, string>>,
): void {
  if (res.headersSent) {
    if (!res.writableEnded) res.end();
    return;
  }
  const text = JSON.stringify(body);
  res.statusCode = status;
  if (headers) for (const k of Object.keys(headers)) res.setHeader(k, headers[k]!);
  res.setHeader('Content-Type', 'application/json');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}

/** Write a JSON-RPC error, echoing `id` only when readable. */
export function sendError(
  res: ServerResponse,
  status: number,
  id: unknown,
  error: JsonRpcError,
  headers?: Readonly<Record<string, string>>,
): void {
  sendJson(res, status, errorResponse(id, error), headers);
}

/**
 * Under this symbol on `req.locals`, a middleware that must learn of a refusal written for the request before the
 * request reaches it (the limiter's gate: such a refusal counts against the caller's minute). {@link sendRefusal}
 * calls it once, after writing the answer, and clears it; the middleware clears it when the request reaches it.
 */
export const ON_EARLY_REFUSAL = Symbol.for('mcpware.onEarlyRefusal');
export type EarlyRefusalLocals = RequestLocals & { [ON_EARLY_REFUSAL]?: (req: IncomingMessage) => void };

/**
 * Refuse a request: record the refusal on `req.locals.refusal` (audit and metrics read it) and write the
 * JSON-RPC error with the refusal's HTTP status. `id` defaults to the parsed request's id; `detail` is a finer,
 * stable sub-reason for audit and metrics (e.g. which limit).
 */
export function sendRefusal(
  req: IncomingMessage,
  res: ServerResponse,
  r: Refusal,
  by: string,
  opts: { id?: unknown; headers?: Readonly<Record<string, string>>; detail?: string } = {},
): void {
  const locals = localsOf(req);
  locals.refusal = { reason: r.reason, code: r.code, status: r.status, by };
  if (opts.detail !== undefined) locals.refusal.detail = opts.detail;
  const id = 'id' in opts ? opts.id : locals.mcp?.id;
  sendError(res, r.status, id, { code: r.code, message: r.message, data: r.data }, opts.headers);
  const early = (locals as EarlyRefusalLocals)[ON_EARLY_REFUSAL];
  if (early === undefined) return;
  (locals as EarlyRefusalLocals)[ON_EARLY_REFUSAL] = undefined;
  early(req);
}

/** The default logger: stderr, one line, stack included (never sent to the client). */
export const stderrLogger: Logger = {
  error(message, meta) {
    process.stderr.write(`[mcpware] ${message}${meta ? ' ' + safeStringify(meta) : ''}\n`);
  },
  warn(message, meta) {
    process.stderr.write(`[mcpware] ${message}${meta ? ' ' + safeStringify(meta) : ''}\n`);
  },
};

function safeStringify(v: unknown): string {
  try {
    return JSON.stringify(v, (_k, x: unknown) =>
      x instanceof Error ? { message: x.message, stack: x.stack } : x,
    );
  } catch {
    return '[unserializable]';
  }
}

/**
 * Answer an unexpected exception: -32603 with a generic message and status 500; the error and its stack go to
 * the log only.
 */
export function sendInternalError(
  req: IncomingMessage,
  res: ServerResponse,
  err: unknown,
  by: string,
  logger: Logger,
): void {
  log(logger, 'error', `${by}: unexpected error`, { error: errorMeta(err) });
  const locals = localsOf(req);
  locals.refusal = { reason: 'internal_error', code: -32603, status: 500, by };
  if (res.headersSent) {
    if (!res.writableEnded) res.end();
    return;
  }
  sendError(res, 500, locals.mcp?.id, { code: -32603, message: 'Internal error' });
}
