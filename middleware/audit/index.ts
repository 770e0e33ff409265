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
import { hash, randomFillSync } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logform } from 'winston';
import {
  type RedactTally,
  type Redactor,
  type RuleName,
  RULE_NAMES,
  compileRedactor,
  newTally,
} from '../../lib/redact/index.js';
import { cleanText, rawBudget } from '../../lib/sanitize.js';
import { META } from '../../lib/meta.js';
import type { McpRequest } from '../../lib/request.js';
import { localsOf } from '../internal/respond.js';
import { badOption } from '../internal/options.js';
import type { Middleware, RequestLocals } from '../types.js';

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

/**
 * A winston Logger (3.x), recognized by what only it has together: a stream (`write`, `cork`), `transports`,
 * `levels`, `configure` and `isLevelEnabled`. Anything else is called as an AuditLogger.
 */
function isWinstonLogger(l: unknown): boolean {
  const w = l as Record<string, unknown>;
  return (
    typeof w.write === 'function' &&
    typeof w.cork === 'function' &&
    typeof w.configure === 'function' &&
    typeof w.isLevelEnabled === 'function' &&
    Array.isArray(w.transports) &&
    w.levels !== null &&
    typeof w.levels === 'object'
  );
}

/** winston's (triple-beam's) key for the finished log line. */
const MESSAGE = Symbol.for('message');

/** A winston format: an object with `transform` (what `winston.format(...)()` makes). */
export type AuditJsonFormat = Logform.Format;

/**
 * A winston format for the audit logger: one JSON line per record with plain `JSON.stringify`, keys in the
 * record's fixed order followed by `level` and `message`. `winston.format.json()` gives the same values but
 * runs safe-stable-stringify with a replacer and sorts the keys of every record: about half of winston's work
 * per record. Audit records hold only strings, numbers, booleans, null and flat objects/arrays of them, so the
 * plain stringifier is enough; should a value be unserializable anyway (a BigInt or a cycle from another
 * caller of the same logger), the line says so instead of throwing inside the logger.
 * Combine as usual: `winston.format.combine(winston.format.timestamp(), auditJsonFormat())`.
 */
export function auditJsonFormat(): AuditJsonFormat {
  return {
    transform(info: Logform.TransformableInfo) {
      let line: string;
      try {
        line = JSON.stringify(info);
      } catch {
        line = JSON.stringify({
          level: info.level,
          message: info.message,
          error: 'unserializable log record',
        });
      }
      info[MESSAGE] = line;
      return info;
    },
  };
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

// A Map, not an object literal: a caller's method named `constructor` or `toString` must not find
// Object.prototype's functions (the record would then lack `target_type`).
const TARGET_TYPE: ReadonlyMap<string, string> = new Map([
  ['tools/call', 'tool'],
  ['prompts/get', 'prompt'],
  ['resources/read', 'resource'],
  ['resources/subscribe', 'resource'],
  ['resources/unsubscribe', 'resource'],
]);

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
  // A winston Logger gets each record as one `info` object (`log(info)`, its fast path) rather than
  // `log(level, message, meta)`, which copies every record into a new object of 33 keys (in dictionary mode,
  // slower to build and to serialize). The line is the same: winston's three-argument form writes the meta's keys,
  // then `level` and `message`, and so does the info object built here. Only while the Logger has no
  // `defaultMeta`: `log(info)` lets defaultMeta overwrite the record's keys, where the three-argument form lets
  // the record win; with defaultMeta the three-argument form is kept.
  const winstonLike = isWinstonLogger(logger);
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

  // The audit's own masking is not reported as `redacted` (that is the answer's), so what the redactor counts is
  // never read: one scratch tally serves every call instead of a fresh one per record.
  const tally = newTally();
  const clean = (s: unknown, cap: number): string =>
    typeof s === 'string' ? cleanText(s, cap, redactor, tally) : '';
  // Caller-authored strings that repeat from request to request (the HTTP method, the path, the user agent, the
  // client, the JSON-RPC method, the tool or resource) are cleaned once per distinct value; see CleanMemo.
  const httpMethods = new CleanMemo(AUDIT_CAPS.http_method, redactor, tally);
  const paths = new CleanMemo(AUDIT_CAPS.path, redactor, tally);
  const userAgents = new CleanMemo(AUDIT_CAPS.user_agent, redactor, tally);
  const clients = new CleanMemo(AUDIT_CAPS.client, redactor, tally);
  const methods = new CleanMemo(AUDIT_CAPS.method, redactor, tally);
  const targets = new CleanMemo(AUDIT_CAPS.target, redactor, tally);

  function recordedArgs(
    argv: Record<string, unknown> | undefined,
  ): Record<string, string | number | boolean | null> {
    const args: Record<string, string | number | boolean | null> = {};
    if (recorded.length === 0 || !argv) return args;
    for (const name of recorded) {
      if (!Object.prototype.hasOwnProperty.call(argv, name)) continue;
      const v = argv[name];
      let out: string | number | boolean | null;
      if (v === null || typeof v === 'boolean') out = v;
      else if (typeof v === 'number') out = Number.isFinite(v) ? v : null;
      else if (typeof v === 'string') out = clean(v, AUDIT_CAPS.argument);
      else out = clean(canonicalJson(v, 8), AUDIT_CAPS.argument);
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
    return args;
  }

  /**
   * One record. Which fields go through the cleaning (sanitize, mask, cut) and why the others need not:
   * - cleaned and masked: every caller-authored string: `rpc_id` when a string, `http_method`, `path`,
   *   `user_agent`, `client`, `method`, `target`, recorded `args`, and what the `requestId` option returns. The
   *   memoized ones (CleanMemo) get exactly what cleanText gives. None of them has a checked charset to lean
   *   on: the parser only requires `method` to be a non-empty string, and `req.method` can be set by any
   *   middleware mounted before this one (method-override and the like).
   * - sanitized and cut, not masked (as before): `principal` (the accountable identity), `auth_method`,
   *   `protocol_version` (a legacy request's header value may be anything), `detail`. cleanText answers an
   *   already clean one without copying it (sanitize.ts, isPlain).
   * - used as they are: values this process makes (`event`; `time`, an ISO string; `request_id` when it is a
   *   random UUID, hex and dashes; `args_sha256`, hex; `rpc_id` from a number, digits; the numbers), values
   *   from fixed vocabularies set by mcpware's own middlewares (`auth`, `era`, `reason`, `refused_by`, and
   *   `decision`, `outcome`, `target_type` chosen here), `redacted` (filtered to the rule names), and
   *   `remote_addr` (the socket's peer address, an IP literal from the OS, not from the caller's bytes).
   */
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

    let rid = '';
    if (requestId) {
      try {
        rid = clean(requestId(req), AUDIT_CAPS.request_id);
      } catch (err) {
        safe(onError, err);
      }
    }
    if (!rid) rid = newUUID();

    const id = mcp?.id;
    const rpcId = id === undefined ? '' : typeof id === 'number' ? String(id) : clean(id, AUDIT_CAPS.rpc_id);

    const rawUrl = ((req as { originalUrl?: unknown }).originalUrl as string | undefined) ?? req.url ?? '';
    const q = rawUrl.indexOf('?');
    // With a query, the path is a slice of the URL: cleaned without the memo, which would keep the URL alive.
    const path = q >= 0 ? clean(rawUrl.slice(0, q), AUDIT_CAPS.path) : paths.clean(rawUrl);

    const method = mcp?.method;
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

    const principal = locals.principal;
    const auth = locals.auth;
    const elapsed = performance.now() - t.start;
    const fired = locals.redaction?.fired;
    return {
      event: 'audit',
      time: isoTime(t.startedAt),
      request_id: rid,
      rpc_id: rpcId,
      http_method: httpMethods.clean(req.method),
      path,
      remote_addr: req.socket?.remoteAddress ?? '',
      user_agent: userAgents.clean(req.headers['user-agent']),
      principal:
        typeof principal?.userId === 'string' ? cleanText(principal.userId, AUDIT_CAPS.principal) : '',
      auth_method: cleanText(principal?.method ?? auth?.method ?? '', AUDIT_CAPS.auth_method),
      auth: auth?.outcome ?? '',
      era: mcp?.era ?? '',
      protocol_version: typeof mcp?.version === 'string' ? cleanText(mcp.version, 32) : '',
      client: clientOf(mcp, clients),
      method: methods.clean(method),
      target_type: (typeof method === 'string' && TARGET_TYPE.get(method)) || '',
      target: targets.clean(mcp?.target),
      decision: refusal && refusal.reason !== 'internal_error' ? 'refused' : 'allowed',
      reason: refusal?.reason ?? '',
      detail: typeof refusal?.detail === 'string' ? cleanText(refusal.detail, 64) : '',
      refused_by: refusal?.by ?? '',
      status: res.statusCode,
      outcome,
      error_code: errorCode,
      duration_ms: Math.round(elapsed * 1000) / 1000,
      bytes_in: mcp?.bytes ?? contentLength(req),
      bytes_out: t.bytesOut,
      args_sha256: digest,
      args: recordedArgs(mcp?.arguments),
      redacted: Array.isArray(fired) ? knownRules(fired) : [],
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
      if (winstonLike && !(logger as { defaultMeta?: unknown }).defaultMeta) {
        const info = record as AuditRecord & { level: string; message: string };
        info.level = level;
        info.message = message;
        (logger as unknown as { log(info: object): unknown }).log(info);
      } else logger.log(level, message, record as unknown as Record<string, unknown>);
    } catch (err) {
      safe(onError, err);
    }
  };

  // Shared by every request: the response's write/end replacements and its two listeners get the response as
  // `this` and find the request's state in `req.locals` (mcpware's own object, `res.req` leads to it) under this
  // instance's own key. Not on the response: under Express (which swaps the response's prototype) each property
  // added to a response object gives it a hidden class of its own, a map and a descriptor copy per request that
  // the collector must then trace too. Not in closures made per request either, which measured dearer still
  // (bench/NOTES.md: the full stack on node:http counted 212k → 387k instructions per request). Replacing
  // `write` and `end` themselves (own properties) cannot be helped: that is how the bytes are counted.
  const tracking = Symbol('mcpware.audit');
  type Marked = RequestLocals & { [tracking]?: Tracking };
  const trackingOf = (res: ServerResponse): Tracking | undefined =>
    (res.req?.locals as Marked | undefined)?.[tracking];
  function lost(t: Tracking | undefined): t is undefined {
    if (t !== undefined) return false;
    safe(
      onError,
      new Error(
        'audit: req.locals was replaced during a request, so its record is lost (add to req.locals, never replace it)',
      ),
    );
    return true;
  }
  function countingWrite(this: ServerResponse, chunk: Chunk, encoding?: unknown): boolean {
    const t = trackingOf(this);
    // Without the state (req.locals replaced) the response's prototype writes: the bytes are not counted.
    // eslint-disable-next-line prefer-rest-params -- passes the caller's arguments through untouched
    if (t === undefined) return protoOf(this).write.apply(this, arguments as unknown as unknown[]);
    t.bytesOut += chunkBytes(chunk, encoding);
    // eslint-disable-next-line prefer-rest-params -- passes the caller's arguments through untouched
    return t.write.apply(this, arguments as unknown as unknown[]);
  }
  function countingEnd(this: ServerResponse, chunk?: Chunk, encoding?: unknown): ServerResponse {
    const t = trackingOf(this);
    // eslint-disable-next-line prefer-rest-params -- passes the caller's arguments through untouched
    if (t === undefined) return protoOf(this).end.apply(this, arguments as unknown as unknown[]);
    if (typeof chunk !== 'function') t.bytesOut += chunkBytes(chunk, encoding);
    // eslint-disable-next-line prefer-rest-params -- passes the caller's arguments through untouched
    return t.end.apply(this, arguments as unknown as unknown[]);
  }
  function onFinish(this: ServerResponse): void {
    const t = trackingOf(this);
    if (t === undefined || t.done) return;
    t.done = true;
    report(this, t, true);
  }
  function onClose(this: ServerResponse): void {
    // 'close' comes last, once per response: the place to say that a record was lost.
    const t = trackingOf(this);
    if (lost(t) || t.done) return;
    t.done = true;
    report(this, t, this.writableFinished);
  }

  const middleware: Middleware = function mcpAudit(req, res, next) {
    const locals = localsOf(req) as Marked;
    // One record per request, even if the chain runs this instance twice.
    if (locals[tracking] === undefined) {
      // Count body bytes as they pass (only lengths are summed; nothing is kept).
      locals[tracking] = {
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

/** The response's prototype: what write/end fall back to when audit's state is gone (see countingWrite). */
function protoOf(res: ServerResponse): Pick<Tracking, 'write' | 'end'> {
  return Object.getPrototypeOf(res) as Pick<Tracking, 'write' | 'end'>;
}

/** What audit keeps per request (in `req.locals`) until the record is written. */
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
let isoMs = NaN;
let isoLast = '';

/**
 * `new Date(ms).toISOString()`, with the part up to the seconds reused while the second is the same (most
 * records of a busy server share it), and the whole string while the millisecond is (a busy server answers
 * several requests that arrived in the same one).
 */
function isoTime(ms: number): string {
  if (ms === isoMs) return isoLast;
  isoMs = ms;
  const second = Math.floor(ms / 1000);
  if (second !== isoSecond) {
    const iso = new Date(ms).toISOString();
    isoSecond = second;
    isoPrefix = iso.slice(0, -4); // `…T12:34:56.`
    isoLast = iso;
    return iso;
  }
  const milli = ms - second * 1000;
  isoLast = isoPrefix + (milli < 10 ? '00' : milli < 100 ? '0' : '') + milli + 'Z';
  return isoLast;
}

/** Random UUIDs are drawn from this many ids' worth of random bytes at a time (randomUUID's batch too). */
const UUID_BATCH = 128;
// Not Buffer.allocUnsafe: a small unsafe buffer is a slice of a pool other buffers share (and expose).
const uuidRandom = Buffer.alloc(16 * UUID_BATCH);
let uuidNext = uuidRandom.length;
/** The text being written: the dashes stay, and so do the version (4) and variant (8–b) digits' places. */
const uuidText = Buffer.from('00000000-0000-4000-8000-000000000000', 'latin1');
const HEX_DIGITS = Buffer.from('0123456789abcdef', 'latin1');
/** Where each of the 16 bytes' two hex digits go in the text. */
const UUID_DIGIT_AT = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34];

/**
 * A random (version 4) UUID, as crypto.randomUUID makes one (same random source, same batching) but written
 * into a buffer and read out as one flat string: randomUUID joins 20 pieces, about 600 bytes of garbage per
 * record, and the logger's JSON format then copies the joined string once more.
 */
function newUUID(): string {
  if (uuidNext === uuidRandom.length) {
    randomFillSync(uuidRandom);
    uuidNext = 0;
  }
  for (let i = 0; i < 16; i++) {
    let b = uuidRandom[uuidNext + i]!;
    // The version (4) in byte 6's high nibble, the variant (binary 10) in byte 8's two high bits (RFC 9562).
    if (i === 6) b = (b & 0x0f) | 0x40;
    else if (i === 8) b = (b & 0x3f) | 0x80;
    const at = UUID_DIGIT_AT[i]!;
    uuidText[at] = HEX_DIGITS[b >> 4]!;
    uuidText[at + 1] = HEX_DIGITS[b & 0x0f]!;
  }
  uuidNext += 16;
  return uuidText.toString('latin1', 0, 36);
}

/**
 * Most distinct values one {@link CleanMemo} holds. When full it starts over: a flood of new values costs a miss
 * each, no more.
 */
const MEMO_ENTRIES = 128;
/** Longest raw value a {@link CleanMemo} keeps: longer ones are rare, and are cleaned every time. */
const MEMO_MAX_LENGTH = 256;

/**
 * cleanText for one field, remembered per distinct raw value. Exact, not an approximation: cleanText is a pure
 * function of the string, the cap and the redactor (fixed per instance), so a remembered answer is the one a
 * new call would give. Bounded: at most MEMO_ENTRIES values of at most MEMO_MAX_LENGTH units each.
 */
class CleanMemo {
  private readonly seen = new Map<string, string>();
  constructor(
    private readonly cap: number,
    private readonly redactor: Redactor,
    private readonly tally: RedactTally,
  ) {}

  clean(s: unknown): string {
    if (typeof s !== 'string') return '';
    if (s.length > MEMO_MAX_LENGTH) return cleanText(s, this.cap, this.redactor, this.tally);
    let out = this.seen.get(s);
    if (out === undefined) {
      out = cleanText(s, this.cap, this.redactor, this.tally);
      if (this.seen.size >= MEMO_ENTRIES) this.seen.clear();
      this.seen.set(s, out);
    }
    return out;
  }
}

/** The cleaned `client`: `name/version` from clientInfo (modern `_meta`, or `initialize` params), or `''`. */
function clientOf(mcp: McpRequest | undefined, clients: CleanMemo): string {
  if (mcp === undefined) return '';
  const ci =
    (mcp.meta && mcp.meta[META.clientInfo]) ??
    (mcp.method === 'initialize' ? mcp.params?.clientInfo : undefined);
  if (ci === null || typeof ci !== 'object') return '';
  const { name, version } = ci as { name?: unknown; version?: unknown };
  if (typeof name !== 'string') return '';
  return clients.clean(typeof version === 'string' ? `${name}/${version}` : name);
}

/** The request's Content-Length when it is a byte count, else 0 (for requests refused before parsing). */
function contentLength(req: IncomingMessage): number {
  const n = Number(req.headers['content-length']);
  return Number.isSafeInteger(n) && n >= 0 ? n : 0;
}

/** The names in `fired` that are rule names, in their order (a loop, not filter with a new closure). */
function knownRules(fired: readonly unknown[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < fired.length; i++) {
    const r = fired[i];
    if (typeof r === 'string' && RULE_SET.has(r)) out.push(r);
  }
  return out;
}

function safe(f: (err: unknown) => void, err: unknown): void {
  try {
    f(err);
  } catch {
    // nothing left to report to
  }
}
