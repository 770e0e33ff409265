/**
 * The contract between the dispatcher and the handler objects it calls. A handler object groups the methods of
 * one namespace: `tools/list` → `handlers.tools.list(params, ctx)`, `resources/templates/list` →
 * `handlers.resources.templatesList(params, ctx)` (see lib/routing.ts).
 */
import type { IncomingMessage } from 'node:http';
import type { Era, RequestId } from '../lib/errors.js';
import type { JsonObject } from '../lib/jsonrpc.js';
import type { LogLevel } from '../lib/meta.js';
import type { InputRequest, InputRequiredResult } from '../lib/mrtr.js';
import type { CacheHint, Implementation } from '../lib/encode.js';
import type { Logger, Principal, RequestLocals } from './types.js';

/** Cache hints for cacheable modern results (`ttlMs` ≥ 0, `cacheScope`). */
export type { CacheHint, Implementation };
export type { InputRequest, InputRequiredResult };

/** What a handler asks the client for (see {@link CallContext.inputRequired}). */
export interface InputRequiredRequest {
  /** Requests keyed by a name of your choice; the retry's `ctx.inputResponses` uses the same keys. */
  inputRequests?: Record<string, InputRequest>;
  /**
   * Anything JSON you want back on the retry as `ctx.requestState` (signed, bound to the caller, the method and
   * the params, and expiring; readable by the client, so no secrets).
   */
  state?: unknown;
}

/** Everything a handler knows about the call it serves. */
export interface CallContext {
  /** The JSON-RPC method, e.g. `tools/call`. */
  method: string;
  /** The request id; `undefined` only when a notification handler runs (`notifications/…`). */
  id: RequestId | undefined;
  /** `modern` (2026-07-28 envelope) or `legacy` (initialize handshake). */
  era: Era;
  /** The revision the request speaks, when known. */
  version: string | undefined;
  /** The authenticated principal, if an auth middleware ran. */
  principal: Principal | undefined;
  /** `params._meta` of the request (caller-authored: never trust it for security). */
  meta: JsonObject | undefined;
  /** The client capabilities the request declared (modern: from `_meta`; legacy: `{}` unless known). */
  clientCapabilities: JsonObject;
  /** The shared request locals. */
  locals: RequestLocals;
  /** The underlying request (node:http). */
  req: IncomingMessage;
  /** Fires when the client goes away (connection or stream closed): stop work. */
  signal: AbortSignal;
  /** Record work done, in milliseconds, against the caller's budget (limits). */
  charge(ms: number): void;
  /** The server's logger (not the client's). */
  logger: Logger;
  /**
   * Send a progress notification for this request, when the client asked for one (`_meta.progressToken`).
   * `progress` must increase. The first notification turns the answer into a request-scoped SSE stream (when
   * the client accepts `text/event-stream`). Returns false when nothing will be sent: no token, not increasing,
   * SSE not accepted, already answered, or the client is gone. Set by `dispatch()` for requests.
   */
  progress?(progress: number, total?: number, message?: string): boolean;
  /**
   * Send a `notifications/message` log for this request: modern requests only, and only at or above the level
   * the request named in `_meta["io.modelcontextprotocol/logLevel"]` (none named: nothing is sent). Returns
   * false when nothing will be sent. Set by `dispatch()` for requests.
   */
  log?(level: LogLevel, data: unknown, logger?: string): boolean;
  /**
   * MRTR, on a retry: the client's answers (`params.inputResponses`), keyed like the input requests you sent.
   * Entries that are not objects are left out (you then ask again). `undefined` on a first call.
   */
  inputResponses?: Readonly<Record<string, JsonObject>>;
  /**
   * MRTR, on a retry: the `state` you gave `inputRequired()` in the previous round, after its signature, caller,
   * method, params and expiry were verified (a state failing any check is refused before you are called).
   * `undefined` when the retry carried none.
   */
  requestState?: unknown;
  /**
   * MRTR (`tools/call`, `prompts/get`, `resources/read` only; set by `dispatch()`): build the input-required
   * result to return. You are called again, as a new request, with `ctx.inputResponses` and `ctx.requestState`.
   * Throws -32021 (HTTP 400, `data.requiredCapabilities`) when a request needs a client capability this modern
   * request did not declare. Legacy (2025-11-25) requests get the same handler code served as real
   * server-to-client requests on the answer's SSE stream.
   */
  inputRequired?(request: InputRequiredRequest): InputRequiredResult;
  /**
   * Throw -32021 (HTTP 400) unless the request declared these client capabilities, e.g. `{ sampling: {} }`.
   * Legacy requests are read against their session's declared capabilities (none without a session), and the
   * -32021 is answered in-band (a tool error on `tools/call`). Set by `dispatch()` for requests.
   */
  requireClientCapabilities?(required: Readonly<Record<string, object>>): void;
  /**
   * The tasks of the `io.modelcontextprotocol/tasks` extension, on a modern `tools/call` when `dispatch()` has
   * `tasks` configured: whether this request's client declared the extension, and `start()`, which turns the call
   * into a task. Undefined otherwise (a legacy request, another method, a dispatcher without tasks).
   */
  tasks?: TaskHost;
  /** The id of the task this context's work runs in; undefined outside a task. */
  taskId?: string;
  /**
   * The OpenTelemetry `Context` of the request's span when `otel()` runs in front of the dispatcher (pass it to
   * `tracer.startSpan(name, options, ctx.otel)`); undefined otherwise. Handlers also run inside it, so spans
   * started with the active context nest under the request's span too.
   */
  otel?: unknown;
}

/**
 * The work of a task: called in the background with a context of its own (`ctx.taskId` set, `ctx.signal`
 * aborted by `tasks/cancel`), and called again with `ctx.inputResponses` each time it returns
 * `ctx.inputRequired(…)` and the client answered through `tasks/update`. It returns the call's result, or throws
 * McpError (the task ends `failed` with that error).
 */
export type TaskWork = (ctx: CallContext) => unknown;

/** What a `tools/call` handler can do with tasks (see {@link CallContext.tasks}). */
export interface TaskHost {
  /** Whether the request's client declared the tasks extension: only then may `start()` be called. */
  readonly declared: boolean;
  /**
   * Create a task that runs `work` in the background; resolves with the `CreateTaskResult` to return once the task
   * is stored (a `tasks/get` on any replica finds it). Rejects with McpError when the caller's task bounds are
   * reached, or when the client did not declare the extension.
   */
  start(work: TaskWork, info: { tool: string }): Promise<JsonObject>;
}

/** A handler method. Return the result body; the dispatcher adds `resultType`, cache hints and `_meta`. */
export type HandlerMethod = (params: JsonObject, ctx: CallContext) => unknown;

/**
 * A handler object: one namespace's methods (keys are the folded member names: `list`, `templatesList`, …).
 *
 * Which members the dispatcher may call, so that no JSON-RPC method name can reach anything else:
 * - when the object has a {@link HANDLER_METHODS} property, exactly the members it lists (a ToolRegistry lists
 *   `list` and `call`);
 * - otherwise the methods it defines: its own function-valued properties (object literals) and its classes'
 *   methods (the prototype chain up to the first built-in prototype, the nearest definition of a name winning).
 *   `constructor` and the members of `Object.prototype`, `Function.prototype`, built-in classes and
 *   `EventEmitter` (`toString`, `hasOwnProperty`, `call`, `emit`, …) are never callable.
 * Symbol-keyed and `#private` members are never reachable from a method name: keep internals there.
 */
// `object`, not an index-signature type: class instances (a ToolRegistry) have no implicit index signature.
export type HandlerObject = object;

/** Where a handler object lists its callable members (see {@link HandlerObject}). */
export const HANDLER_METHODS: unique symbol = Symbol.for('mcpware.handlerMethods');

/**
 * The `handlers` option of `dispatch()`: namespace → handler object (`tools`, `resources`, `prompts`,
 * `completion`, `notifications`, `server`, or your own), and root methods (`initialize`, `ping`, or your own
 * method without `/`) as functions.
 */
export type Handlers = Readonly<Record<string, HandlerObject | HandlerMethod>>;

/** `ServerCapabilities` as the server declares them (initialize and server/discover return them as given). */
export interface ServerCapabilities {
  tools?: { listChanged?: boolean; [k: string]: unknown };
  resources?: { subscribe?: boolean; listChanged?: boolean; [k: string]: unknown };
  prompts?: { listChanged?: boolean; [k: string]: unknown };
  completions?: Record<string, unknown>;
  /** Deprecated in 2026-07-28; legacy `logging/setLevel` is answered only when declared. */
  logging?: Record<string, unknown>;
  experimental?: Record<string, unknown>;
  extensions?: Record<string, unknown>;
  [key: string]: unknown;
}
