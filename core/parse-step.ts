/**
 * The shared per-request parse step. Whichever mcpware middleware runs first reads the body (under the size
 * limit, before any parsing), parses it once and attaches `req.locals.mcp`; every later one reuses it. So each
 * middleware works alone, and they compose in any order.
 */
import { isThenable } from './maybe-promise.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type Refusal, refusal } from '../lib/errors.js';
import {
  type JsonObject,
  type ParseResult,
  isBatchBytes,
  parseMessageWithMemory,
  parseValue,
} from '../lib/jsonrpc.js';
import { META } from '../lib/meta.js';
import { type ClassifyOptions, type ClassifyResult, classifyEnvelope } from '../lib/classify.js';
import { type McpRequest, toMcpRequest } from '../lib/request.js';
import { ACCEPTED_CODINGS } from './body-coding.js';
import {
  type BodyState,
  DEFAULT_BODY_LIMIT,
  bodyStarted,
  parseByteSize,
  stateIfAny as bodyStateIfAny,
  stateOf as bodyStateOf,
  readBody,
  releaseBody,
} from './body.js';
import { badOption } from './options.js';
import { localsOf, sendInternalError, sendRefusal } from './respond.js';
import { traceOf } from './trace.js';
import type { Logger } from './types.js';

// DEFAULT_BODY_LIMIT and parseByteSize are body.ts's and exported from there alone (index.ts re-exports them):
// see docs/performance.md#fast-exports

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

/** An exception the parse step hit, handed on for the caller to answer (-32603) or reject with. */
type Failure = { error: unknown };

/** What the shared parse step hands to those waiting for it: the result, or the exception it hit. */
type ParseWaiter = (result: McpRequest | Refusal | undefined, failure?: Failure) => void;

/** What the batch check hands on: whether the body is a batch (or the refusal reading it met), or an exception. */
type BatchWaiter = (batch: boolean | Refusal | undefined, failure?: Failure) => void;

/** The per-request state: the body reader's part (see body.ts, which keeps it) and the parse step's. */
interface State extends BodyState {
  /** The options the parse step runs with (read once the body is in). */
  parseOpts?: ResolvedBodyOptions;
  /** Those waiting while the parse step runs. */
  parseWaiters?: ParseWaiter[];
  /** What the parse step came to, once it has: lets later middlewares go on synchronously (see parsed). */
  done?: McpRequest | Refusal;
  /** The exception the parse step hit, if it did. */
  failed?: Failure;
  classified?: ClassifyResult;
}
const stateOf = bodyStateOf as (req: IncomingMessage) => State;
const stateIfAny = bodyStateIfAny as (req: IncomingMessage) => State | undefined;
type WithState = IncomingMessage & { body?: unknown; _body?: boolean };

/** True once the parse step has started (or finished). */
function parseStarted(st: State): boolean {
  return st.done !== undefined || st.parseWaiters !== undefined || st.failed !== undefined;
}

export function resolveBodyOptions(factory: string, opts: BodyOptions): ResolvedBodyOptions {
  let limit = DEFAULT_BODY_LIMIT;
  if (opts.limit !== undefined) {
    const n =
      typeof opts.limit === 'number' || typeof opts.limit === 'string'
        ? parseByteSize(opts.limit)
        : undefined;
    if (n === undefined) {
      throw badOption(factory, 'limit', opts.limit, 'a positive byte count or a size like "4mb"');
    }
    limit = n;
  }
  let maxDepth = 64;
  if (opts.maxDepth !== undefined) {
    if (!Number.isSafeInteger(opts.maxDepth) || opts.maxDepth < 2) {
      throw badOption(factory, 'maxDepth', opts.maxDepth, 'an integer of at least 2');
    }
    maxDepth = opts.maxDepth;
  }
  return { limit, maxDepth };
}

const DEFAULTS: ResolvedBodyOptions = { limit: DEFAULT_BODY_LIMIT, maxDepth: 64 };

/**
 * True for `application/json` with any parameters (charset must be UTF-8 when given).
 * @example
 * ```ts
 * import { isJsonContentType } from 'mcpware';
 *
 * console.log(isJsonContentType('application/json; charset=utf-8'), isJsonContentType('text/plain')); // true false
 * ```
 */
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

/**
 * True when something other than mcpware read the body before the parse step began: a body parser that says
 * so (`req._body`, as body-parser and express.json() set it) or a consumer that drained the stream. False once
 * mcpware itself has started reading or parsing it.
 */
export function bodyReadElsewhere(req: IncomingMessage): boolean {
  const st = stateIfAny(req);
  if (st !== undefined && (bodyStarted(st) || parseStarted(st))) return false;
  return (req as WithState)._body === true || req.readableEnded;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });
/**
 * The member scan's working memory, shared by every parse: a parse runs to its end without yielding, and the
 * memory holds positions only and stays bounded (lib/jsonrpc-scan.ts). See docs/performance.md#scan-memory.
 */
const scanMemory: number[] = [];

/**
 * Is the body a batch? Hands `cb` the answer, or the refusal reading the body met: from the raw bytes, from
 * `req.body` when a body parser already ran, or from the parse step's verdict when it has started. Callbacks
 * must not throw.
 */
function withBatch(req: IncomingMessage, opts: ResolvedBodyOptions, cb: BatchWaiter): void {
  const st = stateOf(req);
  if (parseStarted(st)) {
    // The parse step ran or runs: its verdict says whether this was a batch.
    return withParsed(req, opts, (p, failure) =>
      failure ? cb(undefined, failure) : cb(!('kind' in p!) && p!.reason === 'batch'),
    );
  }
  const r = req as WithState;
  if (preParsed(r)) {
    if (Array.isArray(r.body)) return cb(true);
    if (Buffer.isBuffer(r.body)) return cb(batchOf(r.body));
    if (typeof r.body === 'string') return cb(batchOf(Buffer.from(r.body)));
    return cb(false);
  }
  // Batches are refused whatever the Content-Type (defence in depth); the body is read only when one is sent.
  if (!isJsonContentType(req.headers['content-type']) && req.headers['content-length'] === '0')
    return cb(false);
  readBody(req, opts.limit, (raw) => cb(Buffer.isBuffer(raw) ? batchOf(raw) : raw));
}

/**
 * Whether bytes are a batch: only a body that parses as a JSON array is one. A body that begins with `[` but is
 * not JSON (or not UTF-8) is a parse error (-32700), returned as that refusal for the parse step to write.
 */
function batchOf(raw: Buffer): boolean | Refusal {
  if (!isBatchBytes(raw)) return false;
  try {
    return Array.isArray(JSON.parse(utf8.decode(raw)));
  } catch {
    return refusal('parse_error');
  }
}

/** Parse raw bytes into the shared request (or a refusal), recording it on `req.locals.mcp`. */
function fromBytes(req: IncomingMessage, opts: ResolvedBodyOptions, raw: Buffer): McpRequest | Refusal {
  if (raw.length > opts.limit)
    return refusal('body_too_large', { message: `Request body exceeds ${opts.limit} bytes` });
  let text: string;
  try {
    text = utf8.decode(raw);
  } catch {
    return refusal('parse_error', { message: 'Parse error: the body is not valid UTF-8' });
  }
  return admit(req, parseMessageWithMemory(text, opts.maxDepth, scanMemory), raw.length);
}

function admit(req: IncomingMessage, result: ParseResult, bytes: number): McpRequest | Refusal {
  if (!result.ok) return result;
  const mcp = toMcpRequest(result, req.headers, bytes);
  localsOf(req).mcp = mcp;
  traceOf(req.locals)?.parsed(mcp);
  return mcp;
}

/**
 * Run the shared parse step once and hand its outcome to `cb`: at once when it is known, else when the body
 * has been read (synchronously from the stream's `end` event, or once it is decoded). Callbacks must not throw.
 * Order: Content-Type (415) → Content-Encoding (415) → body limit (413) → decoding (400 -32700, 413 past the
 * limit) → UTF-8 and JSON (400 -32700) → batch (400 -32600) → JSON-RPC shape, ids, duplicate members, depth
 * (400 -32600).
 */
function withParsed(req: IncomingMessage, opts: ResolvedBodyOptions, cb: ParseWaiter): void {
  const st = stateOf(req);
  if (st.done !== undefined) return cb(st.done);
  if (st.failed !== undefined) return cb(undefined, st.failed);
  if (st.parseWaiters) {
    st.parseWaiters.push(cb);
    return;
  }
  st.parseWaiters = [cb];
  // First, whoever read the body: a form or text body another parser turned into a value is not JSON-RPC.
  if (!isJsonContentType(req.headers['content-type']))
    return settleParse(st, refusal('unsupported_media_type'));
  const r = req as WithState;
  if (preParsed(r) && !Buffer.isBuffer(r.body) && typeof r.body !== 'string') {
    // A body parser ran before us: validate its value (duplicate members can no longer be seen).
    let v: McpRequest | Refusal;
    try {
      v =
        r.body === undefined
          ? refusal('body_unreadable')
          : admit(
              req,
              parseValue(r.body, { maxDepth: opts.maxDepth }),
              Number(req.headers['content-length']) || 0,
            );
    } catch (error) {
      return settleParse(st, undefined, { error });
    }
    return settleParse(st, v);
  }
  if (preParsed(r))
    return parseBytes(req, st, opts, Buffer.isBuffer(r.body) ? r.body : Buffer.from(r.body as string));
  st.parseOpts = opts;
  readBody(req, opts.limit, parseWhenRead);
}

/** The raw body is in (or refused): parse it with the options the parse step was started with. */
function parseWhenRead(raw: Buffer | Refusal, req: IncomingMessage): void {
  const st = stateOf(req);
  if (Buffer.isBuffer(raw)) parseBytes(req, st, st.parseOpts!, raw);
  else settleParse(st, raw);
}

function parseBytes(req: IncomingMessage, st: State, opts: ResolvedBodyOptions, raw: Buffer): void {
  let v: McpRequest | Refusal;
  try {
    v = fromBytes(req, opts, raw);
  } catch (error) {
    return settleParse(st, undefined, { error });
  }
  settleParse(st, v);
}

/** The parse step's outcome: recorded on the state and handed to every waiter. */
function settleParse(st: State, v: McpRequest | Refusal | undefined, failure?: Failure): void {
  if (failure) st.failed = failure;
  else st.done = v;
  const waiters = st.parseWaiters!;
  st.parseWaiters = undefined;
  for (const w of waiters) w(v, failure);
}

/**
 * Parse the request once. Resolves with the shared {@link McpRequest}, or a refusal (not yet written), in the
 * order {@link withParsed} gives; rejects with the exception the parse step hit. The promise form of the parse
 * step, for code outside the middlewares' path (the limiter's id peek, applications).
 * @example
 * ```ts
 * import { parseRequest } from 'mcpware';
 *
 * app.post('/hook', async (req, res) => {
 *   const parsed = await parseRequest(req); // the same parse parse() shares
 *   if ('reason' in parsed) res.status(400).json({ refused: parsed.reason });
 *   else res.json({ method: parsed.method });
 * });
 * ```
 */
export function parseRequest(
  req: IncomingMessage,
  opts: ResolvedBodyOptions = DEFAULTS,
): Promise<McpRequest | Refusal> {
  return new Promise<McpRequest | Refusal>((resolve, reject) =>
    withParsed(req, opts, (v, failure) => (failure ? reject(failure.error) : resolve(v!))),
  );
}

/** Is the body a batch? The promise form of {@link withBatch}, for `rejectBatch()`. */
export function isBatch(
  req: IncomingMessage,
  opts: ResolvedBodyOptions = DEFAULTS,
): Promise<boolean | Refusal> {
  return new Promise<boolean | Refusal>((resolve, reject) =>
    withBatch(req, opts, (v, failure) => (failure ? reject(failure.error) : resolve(v!))),
  );
}

/** The raw body (or the refusal reading it met), read once and shared: the promise form of the body reader. */
export function readRawBody(
  req: IncomingMessage,
  opts: ResolvedBodyOptions = DEFAULTS,
): Promise<Buffer | Refusal> {
  return new Promise<Buffer | Refusal>((resolve) => readBody(req, opts.limit, resolve));
}

/**
 * Parse (once, shared) and go on with the parsed request: `go` runs synchronously when the parse is already
 * done, else from the body's `end` event (or once a body in a content coding is decoded). A refusal is
 * written (and recorded as by `by`); an exception, in the parse or in `go`, becomes a generic -32603 with the stack in the log. A promise `go` returns is watched the
 * same way. `go` gets the request and response too, so a middleware can pass one function made once.
 */
export function onParsed(
  req: IncomingMessage,
  res: ServerResponse,
  by: string,
  logger: Logger,
  go: (mcp: McpRequest, req: IncomingMessage, res: ServerResponse) => void | Promise<void>,
  opts: ResolvedBodyOptions = DEFAULTS,
): void {
  withParsed(req, opts, (p, failure) => {
    if (failure) return sendInternalError(req, res, failure.error, by, logger);
    const mcp = admitParsed(req, res, p!, by);
    if (!mcp) return;
    try {
      const pending = go(mcp, req, res);
      if (isThenable(pending)) {
        pending.then(undefined, (err: unknown) => sendInternalError(req, res, err, by, logger));
      }
    } catch (err) {
      sendInternalError(req, res, err, by, logger);
    }
  });
}

/**
 * The parse result when the shared parse step has already finished, else `undefined`. Middlewares mounted after
 * `parse()` use it to go on synchronously, without a promise and a microtask per middleware per request. See
 * docs/performance.md#parse-once.
 */
export function parsed(req: IncomingMessage): McpRequest | Refusal | undefined {
  return stateIfAny(req)?.done;
}

/** Longest client name or version kept for audit once a request's message is released. */
const MAX_CLIENT_INFO = 256;

/**
 * Let go of the request's body once its answer is a long-lived stream that needs none of it: the raw bytes (and
 * a body parser's `req.body`) are dropped, and `req.locals.mcp` keeps what the stream and the observers read
 * when it closes (kind, id, method, headers, era, version, size, target, the `_meta` client info clipped)
 * while its params, arguments and message are replaced by bounded stand-ins. A subscription then holds its
 * bounded filter, not the request that opened it.
 */
export function releaseParsed(req: IncomingMessage): void {
  const st = stateIfAny(req);
  if (st !== undefined) releaseBody(st);
  const r = req as WithState;
  if (r.body !== undefined) r.body = undefined;
  const mcp = req.locals?.mcp;
  if (mcp === undefined) return;
  const info = mcp.meta?.[META.clientInfo] as { name?: unknown; version?: unknown } | null | undefined;
  const meta: JsonObject = {};
  if (info !== null && typeof info === 'object' && typeof info.name === 'string') {
    const kept: JsonObject = { name: info.name.slice(0, MAX_CLIENT_INFO) };
    if (typeof info.version === 'string') kept.version = info.version.slice(0, MAX_CLIENT_INFO);
    meta[META.clientInfo] = kept;
  }
  mcp.meta = meta;
  mcp.params = undefined;
  mcp.arguments = undefined;
  if (mcp.target !== undefined) mcp.target = mcp.target.slice(0, MAX_CLIENT_INFO);
  const raw: JsonObject = { jsonrpc: '2.0' };
  if (mcp.id !== undefined) raw.id = mcp.id;
  if (mcp.method !== undefined) raw.method = mcp.method;
  mcp.message =
    mcp.kind === 'request' ? { kind: 'request', id: mcp.id!, method: mcp.method!, raw } : mcp.message;
}

const CLOSE = Object.freeze({ Connection: 'close' });
const ACCEPT_ENCODING = Object.freeze({ 'Accept-Encoding': ACCEPTED_CODINGS });

/** The parse result for a middleware: the request, or `undefined` once the refusal has been written. */
function admitParsed(
  req: IncomingMessage,
  res: ServerResponse,
  p: McpRequest | Refusal,
  by: string,
): McpRequest | undefined {
  if ('kind' in p) return p;
  sendRefusal(req, res, p, by, {
    id: (p as Refusal & { id?: unknown }).id,
    ...(p.reason === 'body_too_large' ? { headers: CLOSE } : {}),
    ...(p.reason === 'unsupported_encoding' ? { headers: ACCEPT_ENCODING } : {}),
  });
  return undefined;
}

/** Classify the parsed request's revision once; the result is cached and the era written onto the request. */
export function classifyOnce(req: IncomingMessage, mcp: McpRequest, opts?: ClassifyOptions): ClassifyResult {
  const st = stateOf(req);
  if (st.classified) return st.classified;
  const result = classifyEnvelope(
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
