/**
 * The shared per-request parse step. Whichever mcpware middleware runs first reads the body (under the size
 * limit, before any parsing), parses it once and attaches `req.locals.mcp`; every later one reuses it. So each
 * middleware works alone, and they compose in any order.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type Refusal, refusal } from '../lib/errors.js';
import { type ParseResult, isBatchBytes, parseMessage, parseValue } from '../lib/jsonrpc.js';
import { type ClassifyOptions, type ClassifyResult, classifyRevision } from '../lib/classify.js';
import { type McpRequest, toMcpRequest } from '../lib/request.js';
import { localsOf, sendInternalError, sendRefusal } from './respond.js';
import type { Logger } from './types.js';

export const DEFAULT_BODY_LIMIT = 4 * 1024 * 1024;

export interface BodyOptions {
  /** Largest body accepted, in bytes (or a string such as `'4mb'`, `'512kb'`). Default 4 MiB. */
  limit?: number | string;
  /** Deepest JSON nesting accepted. Default 64. */
  maxDepth?: number;
}

interface ResolvedBodyOptions {
  limit: number;
  maxDepth: number;
}

/** Internal per-request state, under a registered symbol so two copies of the package still share it. */
interface State {
  raw?: Promise<Buffer | Refusal>;
  parsed?: Promise<McpRequest | Refusal>;
  /** What `parsed` resolved to, once it has: lets later middlewares go on synchronously (see parsedNow). */
  done?: McpRequest | Refusal;
  classified?: ClassifyResult;
}
const STATE = Symbol.for('mcpware.state');
type WithState = IncomingMessage & { [STATE]?: State; body?: unknown; _body?: boolean };

function stateOf(req: IncomingMessage): State {
  const r = req as WithState;
  return (r[STATE] ??= {});
}

const UNITS: Record<string, number> = { b: 1, kb: 1024, mb: 1024 * 1024, gb: 1024 * 1024 * 1024 };

/** Parse a byte size option: a non-negative integer, or `'<n><unit>'` with b/kb/mb/gb. */
export function parseByteSize(v: number | string): number | undefined {
  if (typeof v === 'number') return Number.isSafeInteger(v) && v > 0 ? v : undefined;
  const m = /^(\d{1,12}(?:\.\d{1,6})?)\s?(b|kb|mb|gb)$/i.exec(v.trim());
  if (!m) return undefined;
  const n = Math.floor(Number(m[1]) * UNITS[m[2]!.toLowerCase()]!);
  return n > 0 ? n : undefined;
}

export function resolveBodyOptions(factory: string, opts: BodyOptions): ResolvedBodyOptions {
  let limit = DEFAULT_BODY_LIMIT;
  if (opts.limit !== undefined) {
    const n =
      typeof opts.limit === 'number' || typeof opts.limit === 'string'
        ? parseByteSize(opts.limit)
        : undefined;
    if (n === undefined) {
      throw new TypeError(
        `${factory}: option "limit" must be a positive byte count or a size like "4mb", got ${JSON.stringify(opts.limit)}`,
      );
    }
    limit = n;
  }
  let maxDepth = 64;
  if (opts.maxDepth !== undefined) {
    if (!Number.isSafeInteger(opts.maxDepth) || opts.maxDepth < 2) {
      throw new TypeError(
        `${factory}: option "maxDepth" must be an integer of at least 2, got ${JSON.stringify(opts.maxDepth)}`,
      );
    }
    maxDepth = opts.maxDepth;
  }
  return { limit, maxDepth };
}

const DEFAULTS: ResolvedBodyOptions = { limit: DEFAULT_BODY_LIMIT, maxDepth: 64 };

/** True for `application/json` with any parameters (charset must be UTF-8 when given). */
export function isJsonContentType(ct: string | undefined): boolean {
  if (!ct) return false;
  const semi = ct.indexOf(';');
  const type = (semi < 0 ? ct : ct.slice(0, semi)).trim().toLowerCase();
  if (type !== 'application/json') return false;
  if (semi < 0) return true;
  const m = /(?:^|;)\s*charset\s*=\s*"?([^";\s]{1,40})"?/i.exec(ct.slice(semi));
  return !m || /^utf-?8$/i.test(m[1]!);
}

/** True when a body parser (express.json, body-parser) already consumed and parsed the body. */
function preParsed(req: WithState): boolean {
  return req._body === true || (req.body !== undefined && (req.readableEnded || req.complete));
}

/** Read the raw body under the limit. Shared: the first caller reads, the rest await the same promise. */
export function readRawBody(
  req: IncomingMessage,
  opts: ResolvedBodyOptions = DEFAULTS,
): Promise<Buffer | Refusal> {
  const st = stateOf(req);
  if (st.raw) return st.raw;
  st.raw = new Promise<Buffer | Refusal>((resolve) => {
    const declared = req.headers['content-length'];
    if (declared !== undefined) {
      const n = Number(declared);
      if (Number.isFinite(n) && n > opts.limit) {
        resolve(refusal('body_too_large', { message: `Request body exceeds ${opts.limit} bytes` }));
        return;
      }
    }
    if (req.readableEnded) {
      resolve(refusal('body_unreadable', { message: 'Request body was already consumed' }));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (v: Buffer | Refusal): void => {
      if (done) return;
      done = true;
      req.removeListener('data', onData);
      req.removeListener('end', onEnd);
      req.removeListener('error', onError);
      req.removeListener('aborted', onAborted);
      resolve(v);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > opts.limit) {
        req.pause();
        finish(refusal('body_too_large', { message: `Request body exceeds ${opts.limit} bytes` }));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => finish(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    const onError = (): void => finish(refusal('body_unreadable'));
    const onAborted = (): void => finish(refusal('body_unreadable', { message: 'Request aborted' }));
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('aborted', onAborted);
  });
  return st.raw;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Is the body a batch? Works on the raw bytes, or on `req.body` when a body parser already ran. */
export async function isBatch(
  req: IncomingMessage,
  opts: ResolvedBodyOptions = DEFAULTS,
): Promise<boolean | Refusal> {
  const r = req as WithState;
  const st = stateOf(req);
  if (st.parsed) {
    const p = await st.parsed;
    return !('kind' in p) && p.reason === 'batch';
  }
  if (preParsed(r)) {
    if (Array.isArray(r.body)) return true;
    if (Buffer.isBuffer(r.body)) return isBatchBytes(r.body);
    if (typeof r.body === 'string') return isBatchBytes(Buffer.from(r.body));
    return false;
  }
  if (!isJsonContentType(req.headers['content-type'])) {
    // Batches are refused whatever the Content-Type (defence in depth); read the body only when one is sent.
    if (req.headers['content-length'] === '0') return false;
  }
  const raw = await readRawBody(req, opts);
  if (!Buffer.isBuffer(raw)) return raw;
  return isBatchBytes(raw);
}

/**
 * Parse the request once. Returns the shared {@link McpRequest}, or a refusal (not yet written).
 * Order: Content-Type (415) → body limit (413) → UTF-8 and JSON (400 -32700) → batch (400 -32600) → JSON-RPC
 * shape, ids, duplicate members, depth (400 -32600).
 */
export function parseRequest(
  req: IncomingMessage,
  opts: ResolvedBodyOptions = DEFAULTS,
): Promise<McpRequest | Refusal> {
  const st = stateOf(req);
  if (st.parsed) return st.parsed;
  const settle = (v: McpRequest | Refusal): McpRequest | Refusal => (st.done = v);
  st.parsed = (async (): Promise<McpRequest | Refusal> => {
    const r = req as WithState;
    let result: ParseResult;
    let bytes: number;
    if (preParsed(r) && !Buffer.isBuffer(r.body) && typeof r.body !== 'string') {
      if (r.body === undefined) return settle(refusal('body_unreadable'));
      result = parseValue(r.body, { maxDepth: opts.maxDepth });
      bytes = Number(req.headers['content-length']) || 0;
    } else {
      if (!isJsonContentType(req.headers['content-type'])) return settle(refusal('unsupported_media_type'));
      let raw: Buffer | Refusal;
      if (preParsed(r)) raw = Buffer.isBuffer(r.body) ? r.body : Buffer.from(r.body as string);
      else raw = await readRawBody(req, opts);
      if (!Buffer.isBuffer(raw)) return settle(raw);
      bytes = raw.length;
      if (raw.length > opts.limit)
        return settle(refusal('body_too_large', { message: `Request body exceeds ${opts.limit} bytes` }));
      let text: string;
      try {
        text = utf8.decode(raw);
      } catch {
        return settle(refusal('parse_error', { message: 'Parse error: the body is not valid UTF-8' }));
      }
      result = parseMessage(text, { maxDepth: opts.maxDepth });
    }
    if (!result.ok) return settle(result);
    const mcp = toMcpRequest(result, req.headers, bytes);
    localsOf(req).mcp = mcp;
    return settle(mcp);
  })();
  return st.parsed;
}

/**
 * The parse result when the shared parse step has already finished, else `undefined`. Middlewares mounted after
 * `parse()` use it to go on synchronously, without a promise and a microtask per middleware per request.
 */
export function parsedNow(req: IncomingMessage): McpRequest | Refusal | undefined {
  return (req as WithState)[STATE]?.done;
}

/**
 * Run a middleware's synchronous `check` on the parsed request, then call `next` when it returns true (it
 * writes its own refusal otherwise). When `parse()` already ran this happens at once, with no promise per
 * request; otherwise after the shared lazy parse. Unexpected exceptions become a generic -32603.
 */
export function afterParse(
  req: IncomingMessage,
  res: ServerResponse,
  next: (err?: unknown) => void,
  by: string,
  logger: Logger,
  check: (mcp: McpRequest) => boolean,
): void {
  const now = parsedNow(req);
  if (now !== undefined && 'kind' in now) {
    let go: boolean;
    try {
      go = check(now);
    } catch (err) {
      return sendInternalError(req, res, err, by, logger);
    }
    if (go) next();
    return;
  }
  ensureParsed(req, res, by).then(
    (mcp) => {
      if (mcp && check(mcp)) next();
    },
    (err: unknown) => sendInternalError(req, res, err, by, logger),
  );
}

/**
 * The parsed request for a middleware: parses lazily, and on failure writes the refusal (recording which
 * middleware refused) and returns `undefined`.
 */
export function ensureParsed(
  req: IncomingMessage,
  res: ServerResponse,
  by: string,
  opts: ResolvedBodyOptions = DEFAULTS,
): Promise<McpRequest | undefined> {
  // A plain `.then` rather than an async function: one promise fewer per call on the hot path.
  return parseRequest(req, opts).then((p) => admitParsed(req, res, p, by));
}

/** The parse result for a middleware: the request, or `undefined` once the refusal has been written. */
export function admitParsed(
  req: IncomingMessage,
  res: ServerResponse,
  p: McpRequest | Refusal,
  by: string,
): McpRequest | undefined {
  if ('kind' in p) return p;
  sendRefusal(req, res, p, by, {
    id: (p as Refusal & { id?: unknown }).id,
    ...(p.reason === 'body_too_large' ? { headers: { Connection: 'close' } } : {}),
  });
  return undefined;
}

/** Classify the parsed request's revision once; the result is cached and the era written onto the request. */
export function classifyOnce(req: IncomingMessage, mcp: McpRequest, opts?: ClassifyOptions): ClassifyResult {
  const st = stateOf(req);
  if (st.classified) return st.classified;
  const result = classifyRevision(
    {
      method: mcp.method ?? '',
      meta: mcp.meta,
      header: mcp.headers.protocolVersion,
      notification: mcp.kind !== 'request',
    },
    opts,
  );
  mcp.era = result.era;
  if (result.ok) mcp.version = result.version;
  st.classified = result;
  return result;
}
