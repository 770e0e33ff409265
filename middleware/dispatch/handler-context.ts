/**
 * What a handler is called with: the per-request {@link Call} shared by every round of one request, and the
 * {@link HandlerContext} (`ctx`) made for each round: the request's identity, its signal, and the functions that
 * send progress and log notifications, require client capabilities and ask for input.
 *
 * @see docs/middleware/dispatch.md
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Era } from '../../lib/errors.js';
import type { JsonObject } from '../../lib/jsonrpc.js';
import { type LogLevel, META, isLogLevel, logLevelRank } from '../../lib/meta.js';
import { missingCapabilities } from '../../lib/mrtr.js';
import { principalKey } from '../../lib/principal.js';
import { DEFAULT_LEGACY_VERSION, negotiateVersion } from '../../lib/revisions.js';
import { type Route, routeKey } from '../../lib/routing.js';
import { addCharge } from '../../core/charge.js';
import type { CallContext } from '../../core/contract.js';
import { traceOf } from '../../core/trace.js';
import type { Logger, RequestLocals } from '../../core/types.js';
import {
  type RoundInput,
  type RoundScope,
  type StateCodec,
  allowsInputRequired,
  buildInputRequired,
} from './mrtr.js';
import type { DispatchConfig } from './options.js';
import type { Reply } from './reply.js';
import { missingCapabilityError } from './rpc-errors.js';
import {
  inputMethods,
  lackingCapabilities,
  lackingCapabilityError,
  sessionCapabilitiesOf,
} from './session.js';
import { isJsonObject } from '../../lib/json.js';
import type { TaskRuntime } from './tasks.js';

const TOOLS_CALL = routeKey('tools/call');

/**
 * An AbortController made only when something asks for its signal: most handlers never look at `ctx.signal`.
 * `aborted` is readable without making it.
 */
// see docs/performance.md#lazyabort
export class LazyAbort {
  aborted = false;
  #reason: unknown;
  #controller: AbortController | undefined;

  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.aborted) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.#reason = reason;
    this.#controller?.abort(reason);
  }
}

/** The per-request pieces shared by every round of one request. */
export interface Call extends RoundScope {
  readonly reply: Reply;
  readonly ac: LazyAbort;
}

/** Start a call: closing the response (the stream, or the connection) before the answer is written cancels it. */
export function openCall(reply: Reply, route: Route): Call {
  const { res, mcp, era, locals } = reply;
  const ac = new LazyAbort();
  // A response emits 'close' once.
  res.on('close', () => {
    if (!res.writableFinished) ac.abort(new Error('The client went away'));
  });
  let clientCapabilities: JsonObject = {};
  if (era === 'modern') {
    const c = mcp.meta?.[META.clientCapabilities];
    if (isJsonObject(c)) clientCapabilities = c;
  } else if (mcp.method === 'initialize') {
    if (isJsonObject(mcp.params?.capabilities)) clientCapabilities = mcp.params.capabilities;
  } else {
    // Legacy: what the request's session declared (none without a session).
    clientCapabilities = sessionCapabilitiesOf(reply.req);
  }
  return {
    reply,
    ac,
    method: mcp.method ?? '',
    inputRequired: allowsInputRequired(route.key),
    era,
    clientCapabilities,
    principal: principalKey(locals.principal),
  };
}

/** What a context needs of its dispatcher. */
export interface ContextEnv {
  readonly config: DispatchConfig;
  readonly states: StateCodec;
  /** The dispatcher's tasks, when configured. */
  readonly tasks?: TaskRuntime | undefined;
}

/**
 * A handler's context. `signal` and the request's functions (`progress`, `log`, `requireClientCapabilities`,
 * `inputRequired`, `charge`, `tasks`) are getters on the prototype: a request whose handler never reads them makes no
 * function for them, and nothing of the request is held in a closure on the object. Each getter returns a
 * function that does not depend on `this` (`const { progress } = ctx` works). `otel` is a getter too: the trace's
 * context is read only by a handler that asks for it.
 *
 * The members a handler does not get are undefined: `progress`, `log` and `requireClientCapabilities` for a
 * notification; `inputRequired`, `inputResponses` and `requestState` outside `tools/call`, `prompts/get` and
 * `resources/read` (the last two also when the request carries none).
 */
// see docs/performance.md#handlercontext-getters
export class HandlerContext implements CallContext {
  readonly #env: ContextEnv;
  readonly #call: Call;
  readonly #round: RoundInput | undefined;
  #last = -Infinity;
  method: string;
  id: CallContext['id'];
  era: Era;
  version: string | undefined;
  principal: CallContext['principal'];
  meta: CallContext['meta'];
  clientCapabilities: JsonObject;
  locals: RequestLocals;
  req: IncomingMessage;
  logger: Logger;

  constructor(env: ContextEnv, call: Call, round: RoundInput) {
    const { req, mcp, era, locals } = call.reply;
    this.#env = env;
    this.#call = call;
    this.#round = call.inputRequired ? round : undefined;
    this.method = call.method;
    this.id = mcp.id;
    this.era = era;
    this.version =
      era === 'modern' || mcp.version !== undefined
        ? mcp.version
        : mcp.method === 'initialize'
          ? negotiateVersion(mcp.params?.protocolVersion, env.config.legacyVersions)
          : // 2025-11-25 transport: a request without the header is assumed to speak 2025-03-26.
            DEFAULT_LEGACY_VERSION;
    this.principal = locals.principal;
    this.meta = mcp.meta;
    this.clientCapabilities = call.clientCapabilities;
    this.locals = locals;
    this.req = req;
    this.logger = env.config.logger;
  }

  get signal(): AbortSignal {
    return this.#call.ac.signal;
  }

  /** The OpenTelemetry `Context` of the request's span, under `otel()` (core/trace.ts); else undefined. */
  get otel(): unknown {
    return traceOf(this.locals)?.context;
  }

  /** The response a context's call answers on (the built-in `initialize` sets the session header on it). */
  static responseOf(ctx: unknown): ServerResponse | undefined {
    return ctx instanceof HandlerContext ? ctx.#call.reply.res : undefined;
  }

  get charge(): (ms: number) => void {
    const locals = this.locals;
    return (ms) => addCharge(locals, ms);
  }

  get progress(): CallContext['progress'] {
    if (this.#call.reply.mcp.kind !== 'request') return undefined;
    return (progress, total, message) => this.#progress(progress, total, message);
  }

  get log(): CallContext['log'] {
    if (this.#call.reply.mcp.kind !== 'request') return undefined;
    return (level, data, loggerName) => this.#log(level, data, loggerName);
  }

  get requireClientCapabilities(): CallContext['requireClientCapabilities'] {
    if (this.#call.reply.mcp.kind !== 'request') return undefined;
    return (required) => this.#requireClientCapabilities(required);
  }

  get inputRequired(): CallContext['inputRequired'] {
    const round = this.#round;
    if (round === undefined || this.#call.reply.mcp.kind !== 'request') return undefined;
    const { states } = this.#env;
    const call = this.#call;
    return (request) => {
      // Legacy: a request for a capability the client did not negotiate is refused here, where the handler can
      // catch it, never sent (2025-11-25: only negotiated capabilities are used).
      if (call.era === 'legacy' && request !== null && typeof request === 'object') {
        const missing = lackingCapabilities(inputMethods(request.inputRequests), call.clientCapabilities);
        if (missing) throw lackingCapabilityError(missing);
      }
      return buildInputRequired(states, call, round.params, request);
    };
  }

  /** Tasks: on a modern `tools/call` request of a dispatcher with `tasks`. */
  get tasks(): CallContext['tasks'] {
    const rt = this.#env.tasks;
    const call = this.#call;
    if (rt === undefined || call.era !== 'modern' || call.reply.mcp.kind !== 'request') return undefined;
    return routeKey(call.method) === TOOLS_CALL ? rt.host(this) : undefined;
  }

  get inputResponses(): CallContext['inputResponses'] {
    return this.#round?.inputResponses;
  }

  get requestState(): unknown {
    return this.#round?.requestState;
  }

  /** Progress only when the client asked for it (a progressToken), increasing, and while the request runs. */
  #progress(progress: number, total?: number, message?: string): boolean {
    const token = this.meta?.[META.progressToken];
    if ((typeof token !== 'string' && typeof token !== 'number') || this.#call.ac.aborted) return false;
    if (typeof progress !== 'number' || !Number.isFinite(progress) || progress <= this.#last) return false;
    this.#last = progress;
    const params: JsonObject = { progressToken: token, progress };
    if (typeof total === 'number' && Number.isFinite(total)) params.total = total;
    if (typeof message === 'string') params.message = message;
    return this.#call.reply.notify('notifications/progress', params);
  }

  /**
   * Logs: a modern request only at or above the level its _meta names (2026-07-28: MUST NOT otherwise). A legacy
   * request gets the server's legacyLogLevel, standing in for the session's logging/setLevel, which a stateless
   * server cannot remember (2025-11-25 leaves the level to the server until the client sets one).
   */
  #log(level: LogLevel, data: unknown, loggerName?: string): boolean {
    const wanted = this.era === 'modern' ? this.meta?.[META.logLevel] : this.#env.config.legacyLogLevel;
    if (
      !isLogLevel(wanted) ||
      !isLogLevel(level) ||
      logLevelRank(level) < logLevelRank(wanted) ||
      this.#call.ac.aborted
    )
      return false;
    const params: JsonObject = { level, data };
    if (typeof loggerName === 'string') params.logger = loggerName;
    return this.#call.reply.notify('notifications/message', params);
  }

  #requireClientCapabilities(required: Readonly<Record<string, object>>): void {
    if (!isJsonObject(required))
      throw new TypeError('requireClientCapabilities(): expected an object of capabilities');
    const missing = missingCapabilities(required, this.clientCapabilities);
    if (!missing) return;
    // Legacy: read against the session's declared capabilities (none without a session), answered as a refused
    // input request is (in-band; a tool error for a tool that does not catch it).
    throw this.era === 'modern' ? missingCapabilityError(missing) : lackingCapabilityError(missing);
  }
}
