/**
 * @module
 * `dispatch()`: the last middleware. It routes each JSON-RPC request to a handler object's method (`tools/list` →
 * `handlers.tools.list(params, ctx)`), writes the answer (JSON, or a request-scoped SSE stream when the handler
 * sends notifications first), serves `subscriptions/listen` and multi-round-trip input. It parses and classifies
 * lazily, so it works alone or after the transport middlewares; mount `checkHeaders()` before it. A GET with a
 * legacy session opens that session's stream (legacy-stream.ts); another HTTP method gets 405 with
 * `Allow: POST`; OPTIONS goes on.
 *
 * @see docs/middleware/dispatch.md
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CacheHint, Implementation } from '../../lib/encode.js';
import type { ServerCapabilities } from '../../core/contract.js';
import type { McpRequest } from '../../lib/request.js';
import { refusal } from '../../lib/errors.js';
import { log } from '../../core/log.js';
import { markPassedOn } from '../../core/mount-order.js';
import { onParsed } from '../../core/parse-step.js';
import { refuseMethod } from '../../core/post-only.js';
import { sendRefusal } from '../../core/respond.js';
import { traceOf } from '../../core/trace.js';
import { createBuiltins } from './builtins.js';
import { createCancellations } from './cancel.js';
import { type CloseOptions, closeDeadline, createDrain } from './drain.js';
import { createInputBroker } from './legacy-input.js';
import { createLegacyStreams } from './legacy-stream.js';
import { createListenRouter } from './listen.js';
import { createStateCodec } from './mrtr.js';
import {
  DISPATCH,
  type DispatchMiddleware,
  type DispatchOptions,
  resolveDispatchOptions,
} from './options.js';
import { type Dispatcher, route } from './requests.js';
import { createSessionCodec } from './session.js';
import { createTaskMethods } from './task-methods.js';
import { createTaskRuntime } from './tasks.js';

export type {
  DispatchCancellationOptions,
  DispatchMiddleware,
  DispatchOptions,
  DispatchSessionOptions,
  DispatchTaskOptions,
} from './options.js';
export { memoryTaskStore } from '../../core/task-store.js';
export type { MemoryTaskStoreOptions, TaskBounds, TaskStore, TaskWrite } from '../../core/task-store.js';

const NO_AUTH_DECISION =
  'dispatch: a request reached dispatch() with no authentication decision, and was refused (500): mount an ' +
  'auth middleware (apiKeyAuth, oidcAuth, authenticate) before dispatch(), or pass dispatch({ anonymous: true }) ' +
  'for a server that wants none';

/**
 * Whether an authentication decided on the request: an auth middleware's `ok` (`req.locals.auth`), or, with no
 * outcome recorded, a principal an authenticator of your own set.
 */
function authDecided(req: IncomingMessage): boolean {
  const locals = req.locals;
  if (locals === undefined) return false;
  if (locals.auth !== undefined) return locals.auth.outcome === 'ok';
  return typeof locals.principal === 'object' && locals.principal !== null;
}

/**
 * Answer each parsed request from the handler objects (`tools`, `resources`, `prompts`, `completion`):
 * lifecycle methods (`initialize`, `server/discover`), routing of slash methods, capabilities, pagination
 * and the JSON-RPC error of a failed handler. It is the end of the chain; it refuses requests no
 * authentication accepted unless `anonymous: true`.
 * @param options - {@link DispatchOptions}
 * @see docs/middleware/dispatch.md
 * @example
 * ```ts
 * import { dispatch } from 'mcpware/dispatch';
 * import { parse } from 'mcpware/parse';
 * import { ToolRegistry, ok } from 'mcpware/tools';
 *
 * const tools = new ToolRegistry({
 *   tools: [{ name: 'ping', inputSchema: { type: 'object' }, call: () => ok({ pong: true }) }],
 * });
 * app.use(
 *   '/mcp',
 *   parse(),
 *   dispatch({ anonymous: true, handlers: { tools }, serverInfo: { name: 'my-server', version: '1.0.0' } }),
 * );
 * ```
 */
export function dispatch(options: DispatchOptions): DispatchMiddleware {
  const config = resolveDispatchOptions(options);
  const sessions = createSessionCodec(config);
  const tasks = config.tasks && createTaskRuntime(config.tasks);
  const listen = createListenRouter({
    feeds: config.feeds,
    capabilities: config.capabilities,
    maxStreams: config.maxListenStreams,
    maxPerPrincipal: config.maxListenStreamsPerPrincipal,
    logger: config.logger,
    serverInfo: config.serverInfo,
    tasks: tasks?.notifier,
  });
  const inputs = createInputBroker({ timeoutMs: config.inputTimeoutMs, maxRounds: config.maxInputRounds });
  const drain = createDrain(config.logger);
  const cancels = createCancellations(config);
  const streams = createLegacyStreams(config, sessions, listen);
  const dispatcher: Dispatcher = {
    config,
    states: createStateCodec({ keys: config.stateKeys, ttlMs: config.stateTtlMs }),
    builtins: createBuiltins(config, sessions, streams),
    listen,
    inputs,
    drain,
    cancels,
    tasks,
    taskMethods: tasks && createTaskMethods(tasks),
  };

  let toldUndecided = false;
  const go = (mcp: McpRequest, req: IncomingMessage, res: ServerResponse): void | Promise<void> => {
    if (config.anonymous || authDecided(req)) {
      // A legacy session that fails verification is answered 404 here.
      if (!sessions.admit(req, res, mcp)) return;
      // Under otel(), the request is served in its span's context: a handler's own spans nest under it.
      const trace = traceOf(req.locals);
      if (trace === undefined) return route(dispatcher, req, res, mcp);
      return trace.run(() => route(dispatcher, req, res, mcp));
    }
    return undecided(req, res);
  };
  const undecided = (req: IncomingMessage, res: ServerResponse): void => {
    // Fail closed: no authentication decided on this request, and the configuration does not say none is wanted.
    if (!toldUndecided) {
      toldUndecided = true;
      log(config.logger, 'error', NO_AUTH_DECISION, { reason: 'no_auth_decision' });
    }
    return sendRefusal(req, res, refusal('no_auth_decision'), DISPATCH);
  };

  const middleware = function mcpDispatch(
    req: IncomingMessage,
    res: ServerResponse,
    next: (err?: unknown) => void,
  ): void {
    if (req.method === 'GET' && req.headers['mcp-session-id'] !== undefined) {
      // A legacy session's GET stream (without a session: the 405 below, no stream to open).
      if (config.anonymous || authDecided(req)) return streams.serve(req, res);
      return undecided(req, res);
    }
    if (req.method !== 'POST') {
      // Answered as every POST-only middleware answers it (core/post-only.ts), but OPTIONS, a CORS preflight for
      // the middleware after: marked, so that a middleware of the chain mounted after learns its place.
      if (req.method !== 'OPTIONS') return refuseMethod(req, res, DISPATCH);
      markPassedOn(req);
      return next();
    }
    // see docs/performance.md#parse-once
    onParsed(req, res, DISPATCH, config.logger, go, config.body);
  };
  let closing: Promise<void> | undefined;
  const close = async (deadlineMs: number): Promise<void> => {
    await Promise.all([listen.closeAll(), drain.drain(deadlineMs)]);
    cancels.close();
    streams.close();
    // The tasks still running here end failed (task_interrupted): no replica would finish them.
    await tasks?.close();
    // What the calls left behind: nothing is waiting on these answers any more.
    inputs.failAll();
  };
  return Object.assign(middleware, {
    async close(options?: CloseOptions): Promise<void> {
      const deadlineMs = closeDeadline(options);
      return (closing ??= close(deadlineMs));
    },
    readiness: (req: IncomingMessage, res: ServerResponse): void => drain.readiness(req, res),
    stats() {
      return {
        listenStreams: listen.openCount,
        listenPrincipals: listen.principalCount,
        pendingInputs: inputs.pending,
        inFlight: drain.inFlight,
        draining: drain.draining,
        tasksRunning: tasks?.running ?? 0,
        listenTaskIds: tasks?.notifier.watched ?? 0,
      };
    },
  });
}

export type { CacheHint, Implementation, ServerCapabilities };
export {
  redisTaskStore,
  type RedisTaskStoreClient,
  type RedisTaskStoreOptions,
} from '../../core/task-store-redis.js';
