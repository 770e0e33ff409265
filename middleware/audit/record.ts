/**
 * The audit record: its fixed keys, the caps on caller-authored fields, and how one record is built from what
 * the other middlewares left on `req.locals`.
 * @see docs/middleware/audit.md
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { argumentsDigest, canonicalJson } from '../../lib/canonical-json.js';
import { META } from '../../lib/meta.js';
import { type RedactTally, type Redactor, RULE_NAMES, newTally } from '../../lib/redact/types.js';
import type { McpRequest } from '../../lib/request.js';
import { METHOD_TARGETS } from '../../lib/routing.js';
import { cleanText, escapeIdentity } from '../../lib/sanitize.js';
import { principalSource } from '../../lib/principal.js';
import { TRACE } from '../../core/trace.js';
import type { RequestLocals, TaskEnd, TaskTrack } from '../../core/types.js';
import { CleanMemo } from './clean-memo.js';
import { createIsoTime } from './iso-time.js';

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
  'principal_source',
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
  'result_type',
  'task_id',
  'task_status',
  'trace_id',
  'span_id',
] as const);

export type AuditKey = (typeof AUDIT_KEYS)[number];

/** One audit record (what is passed to the logger as metadata). */
export interface AuditRecord {
  /** `audit` for a request; `task_end` for the end of a task (see {@link taskEndRecord}). */
  event: 'audit' | 'task_end';
  /** When the request arrived (a `task_end` record: when the task ended), ISO 8601 UTC. */
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
  /**
   * `principal.userId` (`''` when anonymous), escaped, not masked: it is the accountable identity, so no
   * character is dropped; an invisible, control, bidi or edge-space character reads as `\u{XXXX}` and a
   * backslash as `\\` (lib/sanitize.ts `escapeIdentity`). Two callers never read the same.
   */
  principal: string;
  /**
   * Where `principal` is unique: `api-key`, the token's issuer for OIDC, another authenticator's method (`''`
   * when anonymous). The same `principal` from two sources is two callers.
   */
  principal_source: string;
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
  /**
   * `ok`, `tool_error` (a tools/call result with isError), `error` (JSON-RPC error), or `aborted` (client gone); a
   * `task_end` record: the task's (`ok`, `tool_error`, `error`, `cancelled`, `lost`).
   */
  outcome: 'ok' | 'tool_error' | 'error' | 'aborted' | 'cancelled' | 'lost';
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
  /** The answer's `resultType` (`complete`, `input_required`, `task`, …; `stream` for SSE), or `''`. */
  result_type: string;
  /** The task the request made (or found ended), and the task of a `task_end` record; else `''`. */
  task_id: string;
  /** A `task_end` record: how the task ended (`completed`, `failed`, `cancelled`); else `''`. */
  task_status: string;
  /**
   * The W3C trace id (32 lowercase hex) of the request's span when `otel()` traces it, else `''`. A `task_end`
   * record keeps the id of the request that carried the task.
   */
  trace_id: string;
  /** The request span's W3C span id (16 lowercase hex) when `otel()` traces it, else `''`. */
  span_id: string;
}

/** Caps (characters) per caller-authored field. */
export const AUDIT_CAPS = Object.freeze({
  rpc_id: 128,
  http_method: 16,
  path: 256,
  user_agent: 256,
  principal: 256,
  principal_source: 256,
  auth_method: 64,
  client: 128,
  method: 128,
  target: 1024,
  request_id: 128,
  argument: 256,
  result_type: 32,
  task_id: 128,
});

/** The largest cap: the redactor's input budget is sized for it. */
export const MAX_CAP = Math.max(...Object.values(AUDIT_CAPS));

/** Nesting kept when a recorded argument is an object or array (serialized as canonical JSON). */
const ARGUMENT_MAX_DEPTH = 8;

const RULE_SET: ReadonlySet<string> = new Set(RULE_NAMES);

const TRACE_ID = /^[0-9a-f]{32}$/;
const SPAN_ID = /^[0-9a-f]{16}$/;

/** A trace or span id as the trace gives it, when it has the W3C form; else `''`. */
function idOf(id: string | undefined, form: RegExp): string {
  return typeof id === 'string' && form.test(id) ? id : '';
}

/** When a request arrived and how many answer bytes were written (kept by the byte counter). */
export interface Arrival {
  /** Arrival, ms since the epoch. */
  readonly startedAt: number;
  /** Arrival, `performance.now()`. */
  readonly start: number;
  readonly bytesOut: number;
}

/** What the record builder needs from the options. */
export interface RecordConfig {
  readonly redactor: Redactor;
  /** Argument names recorded under `args` (no duplicates). */
  readonly recorded: readonly string[];
  readonly requestId: ((req: IncomingMessage) => string) | undefined;
  /** Hears a throwing `requestId`; never throws. */
  readonly onError: (err: unknown) => void;
}

/** Builds the record of one finished (or abandoned) request. */
export type BuildRecord = (
  req: IncomingMessage,
  res: ServerResponse,
  arrival: Arrival,
  finished: boolean,
) => AuditRecord;

/**
 * The record builder of one audit instance. Which fields go through the cleaning (sanitize, mask, cut) and why
 * the others need not:
 * - cleaned and masked: every caller-authored string: `rpc_id` when a string, `http_method`, `path`,
 *   `user_agent`, `client`, `method`, `target`, recorded `args`, and what the `requestId` option returns. The
 *   memoized ones (CleanMemo) get exactly what cleanText gives. None of them has a checked charset to lean on:
 *   the parser only requires `method` to be a non-empty string, and `req.method` can be set by any middleware
 *   mounted before this one (method-override and the like).
 * - escaped, not masked (escapeIdentity: nothing dropped, so two identities never read the same): `principal`
 *   (the accountable identity), `principal_source`, `auth_method`.
 * - sanitized and cut, not masked: `protocol_version` (a legacy request's header value may be anything),
 *   `detail`, `result_type` (a server behind `proxy()` may answer any), `task_id` (the dispatcher makes it; a
 *   masked id could not be matched with its `task_end` record).
 * - used as they are: values this process makes (`event`, `time`, a random `request_id`, `args_sha256`, `rpc_id`
 *   from a number, the numbers), values from fixed vocabularies set by mcpware's own middlewares (`auth`, `era`,
 *   `reason`, `refused_by`, and `decision`, `outcome`, `target_type` chosen here), `redacted` (filtered to the
 *   rule names), `remote_addr` (the socket's peer address, from the OS, not from the caller's bytes), and
 *   `trace_id` and `span_id` (kept only in their W3C hex form, else `''`).
 */
export function createRecordBuilder(config: RecordConfig): BuildRecord {
  const { redactor, onError } = config;
  // The audit's own masking is not reported as `redacted` (that is the answer's), so what the redactor counts is
  // never read: one scratch tally serves every record.
  const tally: RedactTally = newTally();
  const clean = (s: unknown, cap: number): string =>
    typeof s === 'string' ? cleanText(s, cap, redactor, tally) : '';
  const memo = (cap: number): CleanMemo => new CleanMemo(cap, redactor, tally);
  const httpMethods = memo(AUDIT_CAPS.http_method);
  const paths = memo(AUDIT_CAPS.path);
  const userAgents = memo(AUDIT_CAPS.user_agent);
  const clients = memo(AUDIT_CAPS.client);
  const methods = memo(AUDIT_CAPS.method);
  const targets = memo(AUDIT_CAPS.target);
  // see docs/performance.md#audit-times
  const isoTime = createIsoTime();

  function requestIdOf(req: IncomingMessage): string {
    if (config.requestId) {
      try {
        const rid = clean(config.requestId(req), AUDIT_CAPS.request_id);
        if (rid) return rid;
      } catch (err) {
        onError(err);
      }
    }
    return randomUUID();
  }

  function pathOf(req: IncomingMessage): string {
    const rawUrl = (req as { originalUrl?: string }).originalUrl ?? req.url ?? '';
    const q = rawUrl.indexOf('?');
    // With a query, the path is a slice of the URL: cleaned without the memo, which would keep the URL alive.
    return q >= 0 ? clean(rawUrl.slice(0, q), AUDIT_CAPS.path) : paths.clean(rawUrl);
  }

  function recordedArgs(argv: Record<string, unknown> | undefined): AuditRecord['args'] {
    const args: AuditRecord['args'] = {};
    if (!argv) return args;
    for (const name of config.recorded) {
      if (!Object.hasOwn(argv, name)) continue;
      const v = argv[name];
      let out: string | number | boolean | null;
      if (v === null || typeof v === 'boolean') out = v;
      else if (typeof v === 'number') out = Number.isFinite(v) ? v : null;
      else if (typeof v === 'string') out = clean(v, AUDIT_CAPS.argument);
      else out = clean(canonicalJson(v, ARGUMENT_MAX_DEPTH), AUDIT_CAPS.argument);
      // defineProperty, so that a caller's `__proto__` stays an own data property.
      Object.defineProperty(args, name, { value: out, enumerable: true, writable: true, configurable: true });
    }
    return args;
  }

  return function buildRecord(req, res, arrival, finished) {
    const locals: RequestLocals = req.locals ?? {};
    const { mcp, refusal, principal, auth } = locals;
    const id = mcp?.id;
    const method = mcp?.method;
    const { outcome, errorCode } = outcomeOf(locals, res, finished);
    const fired = locals.redaction?.fired;
    const trace = locals[TRACE];
    return {
      event: 'audit',
      time: isoTime(arrival.startedAt),
      request_id: requestIdOf(req),
      rpc_id: id === undefined ? '' : typeof id === 'number' ? String(id) : clean(id, AUDIT_CAPS.rpc_id),
      http_method: httpMethods.clean(req.method),
      path: pathOf(req),
      remote_addr: req.socket?.remoteAddress ?? '',
      user_agent: userAgents.clean(req.headers['user-agent']),
      principal:
        typeof principal?.userId === 'string' ? escapeIdentity(principal.userId, AUDIT_CAPS.principal) : '',
      principal_source: escapeIdentity(principalSource(principal), AUDIT_CAPS.principal_source),
      auth_method: escapeIdentity(principal?.method ?? auth?.method ?? '', AUDIT_CAPS.auth_method),
      auth: auth?.outcome ?? '',
      era: mcp?.era ?? '',
      protocol_version: typeof mcp?.version === 'string' ? cleanText(mcp.version, 32) : '',
      client: clients.clean(clientOf(mcp)),
      method: methods.clean(method),
      target_type: (typeof method === 'string' && METHOD_TARGETS.get(method)?.kind) || '',
      target: targets.clean(mcp?.target),
      decision: refusal && refusal.reason !== 'internal_error' ? 'refused' : 'allowed',
      reason: refusal?.reason ?? '',
      detail: typeof refusal?.detail === 'string' ? cleanText(refusal.detail, 64) : '',
      refused_by: refusal?.by ?? '',
      status: res.statusCode,
      outcome,
      error_code: errorCode,
      duration_ms: Math.round((performance.now() - arrival.start) * 1000) / 1000,
      bytes_in: mcp?.bytes ?? contentLength(req),
      bytes_out: arrival.bytesOut,
      args_sha256: digestOf(mcp?.arguments),
      args: recordedArgs(mcp?.arguments),
      redacted: Array.isArray(fired) ? fired.filter(isRuleName) : [],
      result_type: cleanText(locals.response?.resultType ?? '', AUDIT_CAPS.result_type),
      task_id: cleanText(locals.task?.taskId ?? '', AUDIT_CAPS.task_id),
      task_status: '',
      trace_id: trace === undefined ? '' : idOf(trace.traceId, TRACE_ID),
      span_id: trace === undefined ? '' : idOf(trace.spanId, SPAN_ID),
    };
  };
}

/**
 * The record of a task's end, from the record of the request that carried the task (the `tools/call` that made
 * it, or the `tasks/get` that found its worker gone): that request's identity, client, method and arguments,
 * with the task's tool as the target and its end as the status, outcome, error code and duration. The task id and
 * tool are sanitized and cut, not masked: the server makes them (a random id, a registered tool's name), and a
 * masked id could not be matched with the request's record.
 */
export function taskEndRecord(
  base: AuditRecord,
  task: TaskTrack,
  end: TaskEnd,
  endedAt: number,
): AuditRecord {
  const elapsed = Number.isFinite(end.elapsedMs) ? Math.max(end.elapsedMs, 0) : 0;
  return {
    ...base,
    event: 'task_end',
    time: new Date(endedAt).toISOString(),
    target_type: 'tool',
    target: cleanText(task.tool ?? '', AUDIT_CAPS.target),
    decision: 'allowed',
    reason: '',
    detail: '',
    refused_by: '',
    status: 0,
    outcome: end.outcome,
    error_code: typeof end.code === 'number' && Number.isFinite(end.code) ? end.code : null,
    duration_ms: Math.round(elapsed * 1000) / 1000,
    bytes_in: 0,
    bytes_out: 0,
    redacted: [],
    result_type: '',
    task_id: cleanText(task.taskId, AUDIT_CAPS.task_id),
    task_status: end.status,
  };
}

/** `outcome` and `error_code`: a refusal or a JSON-RPC error is `error`, a client gone first is `aborted`. */
function outcomeOf(
  locals: RequestLocals,
  res: ServerResponse,
  finished: boolean,
): { outcome: AuditRecord['outcome']; errorCode: number | null } {
  const { refusal, response } = locals;
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
  // A call its client cancelled (legacy notifications/cancelled) ends with no result: as if the client went away.
  else if (response?.resultType === 'cancelled') outcome = 'aborted';
  if (!finished) outcome = 'aborted';
  return { outcome, errorCode };
}

/** The digest of the arguments, or `''` when there are none or they cannot be serialized. */
function digestOf(args: unknown): string {
  if (args === undefined) return '';
  try {
    return argumentsDigest(args);
  } catch {
    return '';
  }
}

/** The raw `client`: `name/version` from clientInfo (modern `_meta`, or `initialize` params), else undefined. */
function clientOf(mcp: McpRequest | undefined): string | undefined {
  if (mcp === undefined) return undefined;
  const ci =
    (mcp.meta && mcp.meta[META.clientInfo]) ??
    (mcp.method === 'initialize' ? mcp.params?.clientInfo : undefined);
  if (ci === null || typeof ci !== 'object') return undefined;
  const { name, version } = ci as { name?: unknown; version?: unknown };
  if (typeof name !== 'string') return undefined;
  return typeof version === 'string' ? `${name}/${version}` : name;
}

/** The request's Content-Length when it is a byte count, else 0 (for requests refused before parsing). */
function contentLength(req: IncomingMessage): number {
  const n = Number(req.headers['content-length']);
  return Number.isSafeInteger(n) && n >= 0 ? n : 0;
}

function isRuleName(r: unknown): r is string {
  return typeof r === 'string' && RULE_SET.has(r);
}
