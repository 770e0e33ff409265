/**
 * `audit()`: one log record per HTTP request to the MCP endpoint, written when the response finishes (or the
 * client goes away), refused requests included: 401/403/429, protocol and transport refusals, and non-POST
 * requests refused by `methodGuard()` or `guardOrigin()`. Mount it first, before every middleware that can
 * refuse.
 *
 * The record has fixed keys (see {@link AUDIT_KEYS}); every key is always present, empty when unknown. It
 * never contains the answer, nor the arguments: only their SHA-256 (over a canonical JSON form) unless you
 * name arguments to record in `arguments`. Every caller-authored string (JSON-RPC method, id, tool name or
 * URI, client name, User-Agent, path, recorded arguments) is sanitized (controls, ANSI/OSC escapes, U+009B,
 * U+2028/2029, bidi controls removed; line breaks collapsed), masked with the redactor (always, whatever
 * `redact()`'s mode) and only then cut to its cap in characters, so a cut cannot leave half an address.
 * Caller data only ever appears as values of these keys, never as keys, so it cannot overwrite server-set
 * fields; the record is at most two levels deep.
 *
 * Records reach a stream logger (a winston Logger) in batches, one per turn of the event loop (see `batches`
 * below); no record waits longer than that turn.
 *
 * It refuses nothing. A failing logger never affects the answer. A logger that falls `maxBacklog` records behind
 * gets no new records until it catches up: they are dropped and counted (`stats().dropped`).
 */
import { hash, randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  type RedactTally,
  type Redactor,
  type RuleName,
  RULE_NAMES,
  compileRedactor,
  newTally,
} from '../lib/redact.js';
import { cleanText, rawBudget } from '../lib/sanitize.js';
import { META } from '../lib/meta.js';
import { badOption, localsOf } from './respond.js';
import type { Middleware, RequestLocals } from './types.js';

/** The keys of every audit record, in order. Log queries can rely on them. */
export const AUDIT_KEYS = Object.freeze([
  'event',
  'time',
  'request_id',
  'rpc_id',
  'http_method',
  'path',
  'remote_addr',
  'user_agent',
  'principal',
  'auth_method',
  'auth',
  'era',
  'protocol_version',
  'client',
  'method',
  'target_type',
  'target',
  'decision',
  'reason',
  'detail',
  'refused_by',
  'status',
  'outcome',
  'error_code',
  'duration_ms',
  'bytes_in',
  'bytes_out',
  'args_sha256',
  'args',
  'redacted',
] as const);

export type AuditKey = (typeof AUDIT_KEYS)[number];

/** One audit record (what is passed to the logger as metadata). */
export interface AuditRecord {
  /** Always `audit`. */
  event: 'audit';
  /** When the request arrived, ISO 8601 UTC. */
  time: string;
  /** A fresh UUID per record, or what the `requestId` option returned. */
  request_id: string;
  /** The JSON-RPC id as a string (`''` when none or unreadable). */
  rpc_id: string;
  http_method: string;
  /** URL path, without the query string. */
  path: string;
  /** The peer address of the socket (not X-Forwarded-For). */
  remote_addr: string;
  user_agent: string;
  /** `principal.userId` (`''` when anonymous). Sanitized, not masked: it is the accountable identity. */
  principal: string;
  /** Which authenticator recognized the caller (`api-key`, `oidc`, …). */
  auth_method: string;
  /** Authentication outcome: `ok`, `missing`, `invalid`, `expired`, `forbidden`, `unavailable`, or `''`. */
  auth: string;
  /** `modern`, `legacy`, or `''` when the request was refused before classification. */
  era: string;
  protocol_version: string;
  /** `name/version` from clientInfo (modern `_meta`, or `initialize` params). */
  client: string;
  /** JSON-RPC method. */
  method: string;
  /** `tool`, `prompt`, `resource`, or `''`. */
  target_type: string;
  /** Tool or prompt name, or resource URI. */
  target: string;
  /** `allowed` or `refused` (a middleware refused on purpose; an internal error is not a refusal). */
  decision: 'allowed' | 'refused';
  /** The stable refusal reason (`unauthorized`, `rate_limited`, `batch`, …, `internal_error`), or `''`. */
  reason: string;
  /** The refusal's sub-reason when the refusing middleware gave one (e.g. the limit), or `''`. */
  detail: string;
  /** Which middleware refused (`apiKeyAuth`, `limits`, `parse`, …), or `''`. */
  refused_by: string;
  /** HTTP status sent. */
  status: number;
  /** `ok`, `tool_error` (a tools/call result with isError), `error` (JSON-RPC error), or `aborted` (client gone). */
  outcome: 'ok' | 'tool_error' | 'error' | 'aborted';
  /** JSON-RPC error code when `outcome` is `error` (or a refusal's code), else null. */
  error_code: number | null;
  /** Wall time from arrival to the last byte, in milliseconds (microsecond precision). */
  duration_ms: number;
  /** Request body size in bytes. */
  bytes_in: number;
  /** Response body bytes written. */
  bytes_out: number;
  /** SHA-256 (hex) of the canonical JSON of `params.arguments` (tools/call, prompts/get), or `''`. */
  args_sha256: string;
  /** Values of the arguments named in the `arguments` option (sanitized, masked, capped), else `{}`. */
  args: Record<string, string | number | boolean | null>;
  /** Rules that fired on the answer (from `redact()`), in rule order. */
  redacted: string[];
}

/** The logger audit writes to: a winston Logger fits (`log(level, message, meta)`). */
export interface AuditLogger {
  log(level: string, message: string, meta: Record<string, unknown>): unknown;
}

export interface AuditOptions {
  /** Where records go: a winston Logger (required). */
  logger: AuditLogger;
  /** Log level of the records. Default `info`. */
  level?: string;
  /** Log message of the records. Default `mcp call`. It must not contain printf tokens such as `%s`. */
  message?: string;
  /** Redaction applied to caller-authored strings (always in mask mode). Default: all rules. */
  redact?: { rules?: readonly RuleName[]; maskEmailDomain?: boolean };
  /**
   * Names of tool/prompt arguments whose values are recorded under `args` (sanitized, masked, capped at 256
   * characters; objects as depth-bounded JSON). Default: none (only the digest). Deny by default.
   */
  arguments?: readonly string[];
  /** The `request_id` of a record. Default: a random UUID. Its result is sanitized and capped at 128. */
  requestId?: (req: IncomingMessage) => string;
  /**
   * Called when the logger throws or emits `error`, and (at most once a second) while records are dropped
   * because of `maxBacklog` (an Error with `code: 'AUDIT_BACKLOG'`). Default: one line on stderr.
   */
  onError?: (err: unknown) => void;
  /**
   * How many records the logger may have queued before audit stops handing it new ones. Default 10 000;
   * `Infinity` never drops.
   *
   * Why: `logger.log()` never waits. A winston Logger is an object-mode stream: when its transports cannot keep
   * up, records queue in it without bound. Under saturation a File transport with winston's default 16 KiB
   * buffer (fs.WriteStream's `highWaterMark`) writes fewer records per round trip to the disk than the server
   * answers requests, so the queue, and the process's memory, grow for as long as the load lasts. When the
   * logger is a stream (it has `writableLength`) and that many records or more are queued in it, the record is
   * not logged but counted as dropped (see `stats()`), and `onError` hears about it (at most once a second).
   * The bound is on the Logger's own queue: the few records in its and its transports' buffers (16 each for
   * winston) come on top. Loggers that are not streams are never bounded; neither is a winston Stream
   * transport's destination (that transport does not wait for its stream, so its backlog never reaches the
   * Logger).
   *
   * Give the File transport a larger buffer so that it does not fall behind in the first place:
   * `new winston.transports.File({ filename, options: { flags: 'a', highWaterMark: 1024 * 1024 } })`.
   */
  maxBacklog?: number;
}

/** What {@link AuditMiddleware.stats} reports. */
export interface AuditStats {
  /** Records not handed to the logger because it was `maxBacklog` records or more behind. */
  dropped: number;
}

/** The audit middleware, with its counters. */
export type AuditMiddleware = Middleware & {
  /** Counters of this instance (a new object per call). */
  stats(): AuditStats;
};

/** Caps (characters) per caller-authored field. */
export const AUDIT_CAPS = Object.freeze({
  rpc_id: 128,
  http_method: 16,
  path: 256,
  user_agent: 256,
  principal: 256,
  auth_method: 64,
  client: 128,
  method: 128,
  target: 1024,
  request_id: 128,
  argument: 256,
});

const MAX_CAP = Math.max(...Object.values(AUDIT_CAPS));

/** Deepest nesting serialized by {@link canonicalJson} before a subtree is replaced by `"[too_deep]"`. */
export const CANONICAL_MAX_DEPTH = 128;

/**
 * Canonical JSON (RFC 8785 style): object keys sorted by UTF-16 code units, no whitespace, ECMAScript number
 * form; `undefined` members skipped. Depth-bounded, so a deep value cannot overflow the stack.
 */
export function canonicalJson(v: unknown, maxDepth: number = CANONICAL_MAX_DEPTH): string {
  return canonical(v, 0, maxDepth);
}

function canonical(x: unknown, depth: number, maxDepth: number): string {
  if (typeof x === 'string') return JSON.stringify(x);
  if (typeof x === 'number') return Number.isFinite(x) ? JSON.stringify(x) : 'null';
  if (x === null || typeof x === 'boolean') return JSON.stringify(x);
  if (typeof x === 'bigint') return x.toString();
  if (typeof x !== 'object') return 'null';
  if (depth >= maxDepth) return '"[too_deep]"';
  if (Array.isArray(x)) {
    let out = '[';
    for (let i = 0; i < x.length; i++) {
      if (i > 0) out += ',';
      // A hole stays empty, an undefined element is null (what joining the mapped elements used to give).
      if (!(i in x)) continue;
      const e: unknown = x[i];
      out += e === undefined ? 'null' : canonical(e, depth + 1, maxDepth);
    }
    return out + ']';
  }
  const o = x as Record<string, unknown>;
  const keys = Object.keys(o);
  if (keys.length > 1) keys.sort();
  let out = '{';
  let first = true;
  for (const k of keys) {
    const val = o[k];
    if (val === undefined || typeof val === 'function') continue;
    out += (first ? '' : ',') + JSON.stringify(k) + ':' + canonical(val, depth + 1, maxDepth);
    first = false;
  }
  return out + '}';
}

/** SHA-256 hex of the canonical JSON of `v`. */
export function argumentsDigest(v: unknown): string {
  return hash('sha256', canonicalJson(v), 'hex');
}

const TARGET_TYPE: Readonly<Record<string, string>> = {
  'tools/call': 'tool',
  'prompts/get': 'prompt',
  'resources/read': 'resource',
  'resources/subscribe': 'resource',
  'resources/unsubscribe': 'resource',
};

const OPTION_NAMES = new Set([
  'logger',
  'level',
  'message',
  'redact',
  'arguments',
  'requestId',
  'onError',
  'maxBacklog',
]);

const RULE_SET: ReadonlySet<string> = new Set(RULE_NAMES);

/** Default of {@link AuditOptions.maxBacklog}. */
const DEFAULT_MAX_BACKLOG = 10_000;
const BACKLOG_EXPECTED = 'a whole number >= 1, or Infinity (never drop)';

type Chunk = unknown;

function chunkBytes(chunk: Chunk, enc: unknown): number {
  if (typeof chunk === 'string')
    return Buffer.byteLength(chunk, typeof enc === 'string' ? (enc as BufferEncoding) : 'utf8');
  if (chunk instanceof Uint8Array) return chunk.byteLength;
  return 0;
}

export function audit(options: AuditOptions): AuditMiddleware {
  if (options === null || typeof options !== 'object')
    throw new TypeError('audit: options must be an object with a logger');
  for (const k of Object.keys(options)) {
    if (!OPTION_NAMES.has(k))
      throw new TypeError(`audit: unknown option "${k}" (known: ${[...OPTION_NAMES].join(', ')})`);
  }
  const logger = options.logger;
  if (
    logger === null ||
    typeof logger !== 'object' ||
    typeof (logger as { log?: unknown }).log !== 'function'
  ) {
    throw badOption(
      'audit',
      'logger',
      logger,
      'a winston Logger (an object with a log(level, message, meta) method)',
    );
  }
  const level = options.level ?? 'info';
  if (typeof level !== 'string' || level.length === 0)
    throw badOption('audit', 'level', level, 'a non-empty string');
  const message = options.message ?? 'mcp call';
  // winston's log(level, message, meta) treats a message with printf tokens as a format and drops `meta`.
  if (typeof message !== 'string' || message.length === 0 || /%[scdjifoO%]/.test(message)) {
    throw badOption('audit', 'message', message, 'a non-empty string without printf tokens (%s, %d, …)');
  }
  const redactOpts = options.redact ?? {};
  if (redactOpts === null || typeof redactOpts !== 'object')
    throw badOption('audit', 'redact', redactOpts, 'an object');
  const compiled = compileRedactor({
    mode: 'mask', // the audit trail always masks, whatever redact()'s mode is
    ...(redactOpts.rules !== undefined ? { rules: redactOpts.rules } : {}),
    ...(redactOpts.maskEmailDomain !== undefined ? { maskEmailDomain: redactOpts.maskEmailDomain } : {}),
    maxLength: rawBudget(MAX_CAP),
  });
  if (!compiled.ok)
    throw badOption(
      'audit',
      `redact.${compiled.option}`,
      compiled.value,
      compiled.message.replace(/^.*?, want /, ''),
    );
  const redactor: Redactor = compiled.redactor;
  const argNames = options.arguments ?? [];
  if (!Array.isArray(argNames) || argNames.some((n) => typeof n !== 'string' || n.length === 0)) {
    throw badOption('audit', 'arguments', argNames, 'an array of argument names');
  }
  const recorded = [...new Set(argNames)];
  const requestId = options.requestId;
  if (requestId !== undefined && typeof requestId !== 'function')
    throw badOption('audit', 'requestId', requestId, 'a function');
  const onErrorOpt = options.onError;
  if (onErrorOpt !== undefined && typeof onErrorOpt !== 'function')
    throw badOption('audit', 'onError', onErrorOpt, 'a function');
  const onError =
    onErrorOpt ??
    ((err: unknown): void => {
      process.stderr.write(
        `[mcpware] audit: logging failed: ${err instanceof Error ? err.message : String(err)}\n`,
      );
    });
  const maxBacklog = options.maxBacklog ?? DEFAULT_MAX_BACKLOG;
  if (maxBacklog !== Infinity && !(Number.isSafeInteger(maxBacklog) && maxBacklog >= 1)) {
    // badOption shows values as JSON, where NaN and -Infinity would read `null`.
    throw typeof maxBacklog === 'number'
      ? new TypeError(`audit: option "maxBacklog" must be ${BACKLOG_EXPECTED}, got ${String(maxBacklog)}`)
      : badOption('audit', 'maxBacklog', maxBacklog, BACKLOG_EXPECTED);
  }
  // Only a stream (a winston Logger is an object-mode Transform) says how far behind it is.
  const queue = logger as { writableLength?: unknown };
  const bounded = maxBacklog !== Infinity && typeof queue.writableLength === 'number';
  let dropped = 0;
  let warnedAt = -Infinity;
  // Records are handed over in batches, one per turn of the event loop: a stream logger is corked at the first
  // record of a turn and uncorked on setImmediate, so its transports get the turn's records together (a File
  // transport then writes them with one system call instead of one each). Nothing waits longer than that turn.
  const stream = logger as { cork?: unknown; uncork?: unknown };
  const batches = typeof stream.cork === 'function' && typeof stream.uncork === 'function';
  let corked = false;
  const uncork = (): void => {
    corked = false;
    try {
      (stream.uncork as () => void).call(logger);
    } catch (err) {
      safe(onError, err);
    }
  };

  // winston emits 'error' when a transport fails; with no listener that is an uncaught exception. Logging must
  // never take the server down, so listen when nobody else does.
  const emitter = logger as { on?: unknown; listenerCount?: unknown };
  if (typeof emitter.on === 'function' && typeof emitter.listenerCount === 'function') {
    const count = (emitter.listenerCount as (e: string) => number).call(logger, 'error');
    if (count === 0)
      (emitter.on as (e: string, f: (err: unknown) => void) => void).call(logger, 'error', (err: unknown) =>
        safe(onError, err),
      );
  }

  const text = (s: unknown, cap: number, tally: RedactTally): string =>
    typeof s === 'string' ? cleanText(s, cap, redactor, tally) : '';

  function buildRecord(
    req: IncomingMessage,
    res: ServerResponse,
    t: Tracking,
    finished: boolean,
  ): AuditRecord {
    const locals: RequestLocals = req.locals ?? {};
    const mcp = locals.mcp;
    const refusal = locals.refusal;
    const response = locals.response;
    const tally = newTally(); // the audit's own masking is not reported as `redacted` (that is the answer's)

    let rid = '';
    if (requestId) {
      try {
        rid = text(requestId(req), AUDIT_CAPS.request_id, tally);
      } catch (err) {
        safe(onError, err);
      }
    }
    if (!rid) rid = randomUUID();

    let rpcId = '';
    if (mcp?.id !== undefined)
      rpcId = typeof mcp.id === 'number' ? String(mcp.id) : text(mcp.id, AUDIT_CAPS.rpc_id, tally);

    const rawUrl = ((req as { originalUrl?: unknown }).originalUrl as string | undefined) ?? req.url ?? '';
    const q = rawUrl.indexOf('?');
    const path = text(q >= 0 ? rawUrl.slice(0, q) : rawUrl, AUDIT_CAPS.path, tally);

    let client = '';
    const info = clientInfoOf(mcp?.meta, mcp?.method === 'initialize' ? mcp.params : undefined);
    if (info) client = text(info, AUDIT_CAPS.client, tally);

    let outcome: AuditRecord['outcome'] = 'ok';
    let errorCode: number | null = null;
    if (refusal) {
      outcome = 'error';
      errorCode = refusal.code;
    } else if (response?.code !== undefined) {
      outcome = 'error';
      errorCode = response.code;
    } else if (response?.toolError) outcome = 'tool_error';
    else if (res.statusCode >= 400) outcome = 'error';
    if (!finished) outcome = 'aborted';

    let digest = '';
    if (mcp?.arguments !== undefined) {
      try {
        digest = argumentsDigest(mcp.arguments);
      } catch {
        digest = '';
      }
    }
    const args: Record<string, string | number | boolean | null> = {};
    if (recorded.length > 0 && mcp?.arguments) {
      for (const name of recorded) {
        if (!Object.prototype.hasOwnProperty.call(mcp.arguments, name)) continue;
        const v = mcp.arguments[name];
        let out: string | number | boolean | null;
        if (v === null || typeof v === 'boolean') out = v;
        else if (typeof v === 'number') out = Number.isFinite(v) ? v : null;
        else if (typeof v === 'string') out = text(v, AUDIT_CAPS.argument, tally);
        else out = text(canonicalJson(v, 8), AUDIT_CAPS.argument, tally);
        // defineProperty for `__proto__`, so that it stays an own data property; plain assignment otherwise.
        if (name === '__proto__')
          Object.defineProperty(args, name, {
            value: out,
            enumerable: true,
            writable: true,
            configurable: true,
          });
        else args[name] = out;
      }
    }

    const principal = locals.principal;
    const elapsed = performance.now() - t.start;
    const contentLength = Number(req.headers['content-length']);
    return {
      event: 'audit',
      time: isoTime(t.startedAt),
      request_id: rid,
      rpc_id: rpcId,
      http_method: text(req.method ?? '', AUDIT_CAPS.http_method, tally),
      path,
      remote_addr: req.socket?.remoteAddress ?? '',
      user_agent: text(req.headers['user-agent'], AUDIT_CAPS.user_agent, tally),
      principal:
        typeof principal?.userId === 'string' ? cleanText(principal.userId, AUDIT_CAPS.principal) : '',
      auth_method: cleanText(principal?.method ?? locals.auth?.method ?? '', AUDIT_CAPS.auth_method),
      auth: locals.auth?.outcome ?? '',
      era: mcp?.era ?? '',
      protocol_version: typeof mcp?.version === 'string' ? cleanText(mcp.version, 32) : '',
      client,
      method: text(mcp?.method, AUDIT_CAPS.method, tally),
      target_type: (mcp?.method !== undefined && TARGET_TYPE[mcp.method]) || '',
      target: text(mcp?.target, AUDIT_CAPS.target, tally),
      decision: refusal && refusal.reason !== 'internal_error' ? 'refused' : 'allowed',
      reason: refusal?.reason ?? '',
      detail: typeof refusal?.detail === 'string' ? cleanText(refusal.detail, 64) : '',
      refused_by: refusal?.by ?? '',
      status: res.statusCode,
      outcome,
      error_code: errorCode,
      duration_ms: Math.round(elapsed * 1000) / 1000,
      bytes_in: mcp?.bytes ?? (Number.isSafeInteger(contentLength) && contentLength >= 0 ? contentLength : 0),
      bytes_out: t.bytesOut,
      args_sha256: digest,
      args,
      redacted: Array.isArray(locals.redaction?.fired)
        ? locals.redaction.fired.filter((r) => RULE_SET.has(r))
        : [],
    };
  }

  const report = (res: ServerResponse, t: Tracking, finished: boolean): void => {
    if (bounded && (queue.writableLength as number) >= maxBacklog) {
      dropped++;
      const now = Date.now();
      if (now - warnedAt >= 1000) {
        warnedAt = now;
        const err = new Error(
          `audit records are being dropped: the logger is ${maxBacklog} or more records behind (maxBacklog)`,
        );
        safe(onError, Object.assign(err, { code: 'AUDIT_BACKLOG', dropped }));
      }
      return;
    }
    let record: AuditRecord;
    try {
      record = buildRecord(t.req, res, t, finished);
    } catch (err) {
      safe(onError, err);
      return;
    }
    if (batches && !corked) {
      try {
        (stream.cork as () => void).call(logger);
        corked = true;
        setImmediate(uncork);
      } catch (err) {
        safe(onError, err);
      }
    }
    try {
      logger.log(level, message, record as unknown as Record<string, unknown>);
    } catch (err) {
      safe(onError, err);
    }
  };

  // Shared by every request: the response's write/end replacements and its two listeners get the response as
  // `this` and find the request's state under this instance's own key. Nothing is allocated per request but
  // that state.
  const tracking = Symbol('mcpware.audit');
  type Tracked = ServerResponse & { [tracking]?: Tracking };
  function countingWrite(this: Tracked, chunk: Chunk, encoding?: unknown): boolean {
    const t = this[tracking]!;
    t.bytesOut += chunkBytes(chunk, encoding);
    // eslint-disable-next-line prefer-rest-params -- passes the caller's arguments through untouched
    return t.write.apply(this, arguments as unknown as unknown[]);
  }
  function countingEnd(this: Tracked, chunk?: Chunk, encoding?: unknown): ServerResponse {
    const t = this[tracking]!;
    if (typeof chunk !== 'function') t.bytesOut += chunkBytes(chunk, encoding);
    // eslint-disable-next-line prefer-rest-params -- passes the caller's arguments through untouched
    return t.end.apply(this, arguments as unknown as unknown[]);
  }
  function onFinish(this: Tracked): void {
    const t = this[tracking];
    if (t === undefined || t.done) return;
    t.done = true;
    report(this, t, true);
  }
  function onClose(this: Tracked): void {
    const t = this[tracking];
    if (t === undefined || t.done) return;
    t.done = true;
    report(this, t, this.writableFinished);
  }

  const middleware: Middleware = function mcpAudit(req, res, next) {
    const tracked = res as Tracked;
    localsOf(req);
    // One record per request, even if the chain runs this instance twice.
    if (tracked[tracking] === undefined) {
      // Count body bytes as they pass (only lengths are summed; nothing is kept).
      tracked[tracking] = {
        req,
        startedAt: Date.now(),
        start: performance.now(),
        bytesOut: 0,
        done: false,
        write: res.write as Tracking['write'],
        end: res.end as Tracking['end'],
      };
      res.write = countingWrite as ServerResponse['write'];
      res.end = countingEnd as ServerResponse['end'];
      res.on('finish', onFinish);
      res.on('close', onClose);
    }
    next();
  };
  return Object.assign(middleware, {
    stats(): AuditStats {
      return { dropped };
    },
  });
}

/** What audit keeps per request (on the response) until the record is written. */
interface Tracking {
  readonly req: IncomingMessage;
  /** Arrival, ms since the epoch. */
  readonly startedAt: number;
  /** Arrival, `performance.now()`. */
  readonly start: number;
  bytesOut: number;
  done: boolean;
  /** The response's own write and end, called by the counting ones. */
  readonly write: (this: ServerResponse, ...args: unknown[]) => boolean;
  readonly end: (this: ServerResponse, ...args: unknown[]) => ServerResponse;
}

let isoSecond = NaN;
let isoPrefix = '';

/**
 * `new Date(ms).toISOString()`, with the part up to the seconds reused while the second is the same (most
 * records of a busy server share it).
 */
function isoTime(ms: number): string {
  const second = Math.floor(ms / 1000);
  if (second !== isoSecond) {
    const iso = new Date(ms).toISOString();
    isoSecond = second;
    isoPrefix = iso.slice(0, -4); // `…T12:34:56.`
    return iso;
  }
  const milli = ms - second * 1000;
  return isoPrefix + (milli < 10 ? '00' : milli < 100 ? '0' : '') + milli + 'Z';
}

function clientInfoOf(
  meta: Record<string, unknown> | undefined,
  initParams: Record<string, unknown> | undefined,
): string | undefined {
  const ci = (meta && meta[META.clientInfo]) ?? initParams?.clientInfo;
  if (ci === null || typeof ci !== 'object') return undefined;
  const { name, version } = ci as { name?: unknown; version?: unknown };
  if (typeof name !== 'string') return undefined;
  return typeof version === 'string' ? `${name}/${version}` : name;
}

function safe(f: (err: unknown) => void, err: unknown): void {
  try {
    f(err);
  } catch {
    // nothing left to report to
  }
}
