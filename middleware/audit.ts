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
 * It refuses nothing. A failing logger never affects the answer.
 */
import { createHash, randomUUID } from 'node:crypto';
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
  /** Called when the logger throws or emits `error`. Default: one line on stderr. */
  onError?: (err: unknown) => void;
}

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
  const walk = (x: unknown, depth: number): string => {
    if (x === null || typeof x === 'boolean' || typeof x === 'string') return JSON.stringify(x);
    if (typeof x === 'number') return Number.isFinite(x) ? JSON.stringify(x) : 'null';
    if (typeof x === 'bigint') return x.toString();
    if (typeof x !== 'object') return 'null';
    if (depth >= maxDepth) return '"[too_deep]"';
    if (Array.isArray(x))
      return '[' + x.map((e) => (e === undefined ? 'null' : walk(e, depth + 1))).join(',') + ']';
    const o = x as Record<string, unknown>;
    const parts: string[] = [];
    for (const k of Object.keys(o).sort()) {
      const val = o[k];
      if (val === undefined || typeof val === 'function') continue;
      parts.push(JSON.stringify(k) + ':' + walk(val, depth + 1));
    }
    return '{' + parts.join(',') + '}';
  };
  return walk(v, 0);
}

/** SHA-256 hex of the canonical JSON of `v`. */
export function argumentsDigest(v: unknown): string {
  return createHash('sha256').update(canonicalJson(v), 'utf8').digest('hex');
}

const TARGET_TYPE: Readonly<Record<string, string>> = {
  'tools/call': 'tool',
  'prompts/get': 'prompt',
  'resources/read': 'resource',
  'resources/subscribe': 'resource',
  'resources/unsubscribe': 'resource',
};

const OPTION_NAMES = new Set(['logger', 'level', 'message', 'redact', 'arguments', 'requestId', 'onError']);

type Chunk = unknown;

function chunkBytes(chunk: Chunk, enc: unknown): number {
  if (typeof chunk === 'string')
    return Buffer.byteLength(chunk, typeof enc === 'string' ? (enc as BufferEncoding) : 'utf8');
  if (chunk instanceof Uint8Array) return chunk.byteLength;
  return 0;
}

export function audit(options: AuditOptions): Middleware {
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
    startedAt: number,
    start: bigint,
    bytesOut: number,
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
        Object.defineProperty(args, name, {
          value: out,
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
    }

    const principal = locals.principal;
    const elapsed = Number(process.hrtime.bigint() - start) / 1e6;
    const contentLength = Number(req.headers['content-length']);
    return {
      event: 'audit',
      time: new Date(startedAt).toISOString(),
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
      bytes_out: bytesOut,
      args_sha256: digest,
      args,
      redacted: Array.isArray(locals.redaction?.fired)
        ? locals.redaction.fired.filter((r) => (RULE_NAMES as readonly string[]).includes(r))
        : [],
    };
  }

  return function mcpAudit(req, res, next) {
    const startedAt = Date.now();
    const start = process.hrtime.bigint();
    localsOf(req);
    let bytesOut = 0;
    // Count body bytes as they pass (only lengths are summed; nothing is kept).
    const origWrite = res.write;
    const origEnd = res.end;
    res.write = function (this: ServerResponse, chunk: Chunk, ...rest: unknown[]): boolean {
      bytesOut += chunkBytes(chunk, rest[0]);
      return (origWrite as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
    } as ServerResponse['write'];
    res.end = function (this: ServerResponse, chunk?: Chunk, ...rest: unknown[]): ServerResponse {
      if (typeof chunk !== 'function') bytesOut += chunkBytes(chunk, rest[0]);
      return (origEnd as (...a: unknown[]) => ServerResponse).call(this, chunk, ...rest);
    } as ServerResponse['end'];

    let done = false;
    const finish = (finished: boolean): void => {
      if (done) return;
      done = true;
      res.removeListener('finish', onFinish);
      res.removeListener('close', onClose);
      let record: AuditRecord;
      try {
        record = buildRecord(req, res, startedAt, start, bytesOut, finished);
      } catch (err) {
        safe(onError, err);
        return;
      }
      try {
        logger.log(level, message, record as unknown as Record<string, unknown>);
      } catch (err) {
        safe(onError, err);
      }
    };
    const onFinish = (): void => finish(true);
    const onClose = (): void => finish(res.writableFinished);
    res.on('finish', onFinish);
    res.on('close', onClose);
    next();
  };
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
