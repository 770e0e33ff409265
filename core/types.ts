/**
 * Shared types: the per-request locals every mcpware middleware reads and writes, and the Connect-style
 * handler shape. Only node:http is assumed; Express's Request and Response extend these.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Era, RefusalReason } from '../lib/errors.js';
import type { McpRequest } from '../lib/request.js';
import type { TOOL_VIEWS, ToolView } from './tool-views.js';
import type { RequestTrace, TRACE, TRACE_REDACTOR, TraceRedactor } from './trace.js';

/** Who is asking, as an authenticator decided. Limits, audit and tool visibility key on it. */
export interface Principal {
  userId: string;
  groups: readonly string[];
  roles: readonly string[];
  email?: string;
  /** Which authenticator recognized the credential, e.g. `api-key` or `oidc`. */
  method: string;
  /**
   * Where `userId` is unique: `api-key` for `apiKeyAuth()`, the token's issuer for `oidcAuth()`. The same
   * `userId` from two sources is two callers: limits and listen-stream slots key on method, source and id
   * together, and audit records name it (`principal_source`). Default: `method`.
   */
  source?: string;
  /** Verified token claims, when the credential was a token. */
  claims?: Readonly<Record<string, unknown>>;
}

/** The outcome of a refusal, recorded for audit and metrics. */
export interface RefusalRecord {
  reason: RefusalReason;
  code: number;
  status: number;
  /** Which middleware refused, e.g. `parse`, `apiKeyAuth`, `limits`. */
  by: string;
  /** A finer, stable sub-reason when the refusing middleware has one (e.g. the limit: `rpm`, `cost_budget`). */
  detail?: string;
}

/** How authentication ended for this request (metrics and audit read it). */
export type AuthOutcome = 'ok' | 'missing' | 'invalid' | 'expired' | 'forbidden' | 'unavailable';

/**
 * What the final answer was, written by the dispatcher (or any final handler) before it responds, so audit and
 * metrics can report it without parsing the body.
 */
export interface ResponseRecord {
  /** JSON-RPC error code, when the answer was an error. */
  code?: number;
  /** True when a tools/call result carried `isError: true`. */
  toolError?: boolean;
  /** `complete`, `input_required`, or `stream` for SSE answers. */
  resultType?: string;
}

/**
 * What an outgoing value is: a result, a notification (or a server-to-client request), or the `{ message, data }`
 * of an error a server behind `sdk()` or `proxy()` answered (mcpware's own errors are generic and not passed).
 */
export type OutboundKind = 'result' | 'notification' | 'error';

/**
 * A transform applied to outgoing results and notifications before they are encoded (redaction uses it).
 * `method` is the request's method. Return the value to send (the input may be returned as is).
 */
export type OutboundTransform = (value: unknown, info: { method: string; kind: OutboundKind }) => unknown;

/** What `redact()` did to one request's outgoing values (audit and metrics report it). */
export interface RedactionRecord {
  mode: 'off' | 'warn' | 'mask';
  /** Rule names that matched at least once, in rule order (`jwt`, `pem`, `email`, `token`, `card`, `phone`, `ip`). */
  fired: string[];
  /** Matches per rule. */
  hits: Record<string, number>;
  /** Strings cut (mask) or only partly scanned (warn) because they exceeded the redactor's `maxLength`. */
  truncated: number;
}

/** Everything mcpware attaches to `req.locals`. Other keys are free for the application. */
export interface RequestLocals {
  /** Authentication outcome, set by the auth middlewares. */
  auth?: { outcome: AuthOutcome; method?: string };
  /** Set by the final handler: the outcome of the call. */
  response?: ResponseRecord;
  /** Applied by the dispatcher to results and notifications on their way out (redaction registers here). */
  outbound?: OutboundTransform[];
  /** Work charged to the caller in milliseconds (limits read it when the response closes). */
  chargedMs?: number;
  /** The parsed MCP request (set once per request by the shared parse step). */
  mcp?: McpRequest;
  /** The authenticated principal. */
  principal?: Principal;
  /** Set when a middleware refused the request. */
  refusal?: RefusalRecord;
  /**
   * Set by `dispatch()`: messages written on this request's SSE answer before its response (progress and log
   * notifications, listen-stream events, legacy input requests), counted as they are written.
   */
  streamed?: number;
  /** Set by `redact()`: the mode, and which rules fired on this request's outgoing results and notifications. */
  redaction?: RedactionRecord;
  /**
   * Set by a `ToolRegistry` when a `tools/call` reaches a registered tool this caller sees: the tool's own name
   * (through any tool filter's renaming). Metrics label tool calls from it, so a name that no registered tool
   * answered (refused, unknown, or answered by an `unknownTool` hook) never becomes a label.
   */
  tool?: string;
  /**
   * Set by `toolFilter()`: the tool views `dispatch()` and a `ToolRegistry` apply to this request's `tools/list`
   * and `tools/call`, outermost (closest to the client) first.
   */
  [TOOL_VIEWS]?: ToolView[];
  /**
   * Set by `dispatch()` on a `tools/call` answered with a task (and on a `tasks/get` that found the task's worker
   * gone): the task, and when it ends. Audit and metrics record the end; limits hold the request's slot and charge
   * its work until then.
   */
  task?: TaskTrack;
  /** Set by `otel()`: the request's trace (see core/trace.ts). */
  [TRACE]?: RequestTrace;
  /** Set by `redact()` on a traced request: its redaction of a value, for what `otel()` captures. */
  [TRACE_REDACTOR]?: TraceRedactor;
  [key: string]: unknown;
}

/** How a task ended, as audit and metrics record it. */
export interface TaskEnd {
  status: 'completed' | 'failed' | 'cancelled';
  /** `ok`, `tool_error` (a result with `isError`), `error` (a JSON-RPC error), `cancelled`, `lost` (its worker went away). */
  outcome: 'ok' | 'tool_error' | 'error' | 'cancelled' | 'lost';
  /** The JSON-RPC error code of a failed task. */
  code?: number;
  /** From the task's creation to its end, in milliseconds (on the replica that ran it). */
  elapsedMs: number;
  /**
   * The end was written by another request (a `tasks/get` or `tasks/cancel` that found the task's worker gone),
   * whose own record counts it: the creating request's slots are released, but audit and metrics do not record
   * the end a second time.
   */
  elsewhere?: boolean;
}

/** A task seen from the request that made it (see {@link RequestLocals.task}). */
export interface TaskTrack {
  readonly taskId: string;
  /** The registered tool the task runs. */
  readonly tool: string | undefined;
  /** The end, once the task has ended here. */
  readonly ended: TaskEnd | undefined;
  /** Call `listener` once when the task ends (at once when it has); listeners' exceptions are logged and ignored. */
  onEnd(listener: (end: TaskEnd) => void): void;
}

/** A Connect/Express middleware. */
export type Middleware = (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void;

/** A minimal logger: winston, pino and console all fit. */
export interface Logger {
  error(message: string, meta?: Record<string, unknown>): void;
  warn?(message: string, meta?: Record<string, unknown>): void;
  info?(message: string, meta?: Record<string, unknown>): void;
  debug?(message: string, meta?: Record<string, unknown>): void;
}

export type { Era };

declare module 'node:http' {
  interface IncomingMessage {
    /** Per-request values shared between mcpware middlewares (and your own code). */
    locals?: RequestLocals;
  }
}
