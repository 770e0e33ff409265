/**
 * One parsed message, routed: a posted response is delivered to the input broker, a notification is
 * acknowledged (202) and handed to its handler, and a request is routed to its handler (or a built-in), called
 * round by round, and its result encoded and written.
 *
 * @see docs/middleware/dispatch.md
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type Era, ErrorCode, McpError, refusal } from '../../lib/errors.js';
import type { JsonObject } from '../../lib/jsonrpc.js';
import { isInputRequiredResult } from '../../lib/mrtr.js';
import type { McpRequest } from '../../lib/request.js';
import { type EncodeResult, encodeResult, responseText } from '../../lib/encode.js';
import {
  type Route,
  capabilityOfRoute,
  hasCapability,
  isRemovedRoute,
  isRoutableMethod,
  routeFor,
  routeKey,
} from '../../lib/routing.js';
import { isModernClaim } from '../../lib/revisions.js';
import { classifyOnce } from '../../core/parse-step.js';
import { errorMeta, log } from '../../core/log.js';
import { isThenable } from '../../core/maybe-promise.js';
import { localsOf, sendRefusal } from '../../core/respond.js';
import { exposeList, resolveThrough, toolViewsOf } from '../../core/tool-views.js';
import type { Builtins } from './builtins.js';
import { CANCELLED, type Cancellations } from './cancel.js';
import type { Drain } from './drain.js';
import { type Call, type ContextEnv, HandlerContext, openCall } from './handler-context.js';
import type { InputBroker } from './legacy-input.js';
import type { ListenRouter } from './listen.js';
import { type RoundInput, checkedInputRequired, handedBackState, readRound } from './mrtr.js';
import { DISPATCH } from './options.js';
import { applyOutbound } from '../../core/outbound.js';
import { TRACE } from '../../core/trace.js';
import { Reply, spokenVersion, writeAnswer } from './reply.js';
import type { Bound } from './route-table.js';
import { type RpcError, internalError, methodNotFound, sendRpcError, sendThrown } from './rpc-errors.js';
import { lackingCapabilityResult } from './session.js';
import type { TaskMethods } from './task-methods.js';
import { isJsonObject } from '../../lib/json.js';
import { clip } from '../../lib/clip.js';

/** Everything a request is served with. */
export interface Dispatcher extends ContextEnv {
  readonly builtins: Builtins;
  readonly listen: ListenRouter;
  readonly inputs: InputBroker;
  readonly drain: Drain;
  readonly cancels: Cancellations;
  /** `tasks/get`, `tasks/update` and `tasks/cancel`, when tasks are configured. */
  readonly taskMethods?: TaskMethods | undefined;
}

const TOOLS_CALL = routeKey('tools/call');
const TOOLS_LIST = routeKey('tools/list');
const LISTEN = routeKey('subscriptions/listen');
const TASKS_GET = routeKey('tasks/get');

type Views = ReturnType<typeof toolViewsOf>;

/** What one request's rounds share. */
interface Target {
  readonly call: Call;
  readonly bound: Bound;
  readonly views: Views;
  readonly key: string;
}

/** Route one parsed message. */
export function route(
  dispatcher: Dispatcher,
  req: IncomingMessage,
  res: ServerResponse,
  mcp: McpRequest,
): void | Promise<void> {
  const { config } = dispatcher;
  const revision = classifyOnce(req, mcp, config);
  if (!revision.ok) return sendRefusal(req, res, revision, DISPATCH);
  switch (mcp.kind) {
    case 'response':
    case 'error': {
      // A client answering a server request: legacy only (the modern revision has no server requests).
      const h = mcp.headers.protocolVersion;
      if (h !== undefined && (isModernClaim(h) || config.modernVersions.includes(h))) {
        return sendRefusal(req, res, refusal('response_not_accepted'), DISPATCH, { id: undefined });
      }
      localsOf(req).response = {};
      writeAnswer(res, 202, undefined, spokenVersion(config, mcp, undefined));
      return dispatcher.inputs.deliver(req, mcp);
    }
    case 'notification':
      return handleNotification(dispatcher, req, res, mcp, revision.era);
    case 'request':
      // Draining: no new work (posted answers and notifications still reach the calls in flight).
      if (dispatcher.drain.draining) return dispatcher.drain.refuse(req, res, mcp);
      return handleRequest(dispatcher, req, res, mcp, revision.era);
  }
}

/** 202 at once; then the `notifications.<member>` handler, if there is one. */
async function handleNotification(
  dispatcher: Dispatcher,
  req: IncomingMessage,
  res: ServerResponse,
  mcp: McpRequest,
  era: Era,
): Promise<void> {
  localsOf(req).response = {};
  writeAnswer(res, 202, undefined, spokenVersion(dispatcher.config, mcp, undefined));
  const method = mcp.method ?? '';
  if (era === 'legacy' && method === CANCELLED) dispatcher.cancels.cancel(req, mcp);
  if (!isRoutableMethod(method)) return;
  const r = routeFor(method);
  if (r.namespace !== 'notifications') return;
  const bound = dispatcher.config.routes.get(r.namespace, r.member);
  if (!bound) return;
  try {
    const call = openCall(new Reply(dispatcher.config, req, res, mcp, era), r);
    const params = mcp.params ?? {};
    await bound.fn.call(bound.self, params, new HandlerContext(dispatcher, call, { params }));
  } catch (err) {
    log(dispatcher.config.logger, 'error', `dispatch: notification handler for ${clip(method, 128)} failed`, {
      method: clip(method, 128),
      error: errorMeta(err),
    });
  }
}

/** The handler of a request, or the error it is answered with when it has none. */
function resolveTarget(
  dispatcher: Dispatcher,
  reply: Reply,
  r: Route | undefined,
): Bound | RpcError | 'listen' {
  const { mcp, era } = reply;
  const method = mcp.method!;
  if (r === undefined) return methodNotFound(method, era);
  if (era === 'modern' && isRemovedRoute(r.key))
    return methodNotFound(method, era, 'Removed in protocol revision 2026-07-28');
  const { namespace: ns, member } = r;
  if (ns === 'notifications') return methodNotFound(method, era);
  const tasks = dispatcher.taskMethods;
  if (ns === 'tasks' && tasks !== undefined) {
    // The extension's methods, modern only; the rest of its reserved namespace (tasks/list, tasks/result) is not.
    return (era === 'modern' ? tasks.get(member) : undefined) ?? methodNotFound(method, era);
  }
  if (r.key === LISTEN) {
    // The modern revision's subscription pattern; a 2025-11-25 client has no such method.
    return era === 'modern' ? 'listen' : methodNotFound(method, era);
  }
  const cap = capabilityOfRoute(r.key);
  if (cap !== undefined && !hasCapability(dispatcher.config.capabilities, cap)) {
    return methodNotFound(method, era, `Server does not support the ${cap} capability`);
  }
  // logging/setLevel and resources/(un)subscribe are legacy methods of their capabilities (gated above); the
  // built-in ping and initialize are legacy-only (removed methods were refused above for modern requests).
  return (
    dispatcher.config.routes.get(ns, member) ??
    dispatcher.builtins.get(ns, member) ??
    methodNotFound(method, era)
  );
}

function handleRequest(
  dispatcher: Dispatcher,
  req: IncomingMessage,
  res: ServerResponse,
  mcp: McpRequest,
  era: Era,
): void | Promise<void> {
  const { config } = dispatcher;
  if (era === 'legacy' && config.legacyVersions.length === 0) {
    // A modern-only server names what it speaks, as 2026-07-28 asks of an answer to `initialize`.
    const requested =
      typeof mcp.params?.protocolVersion === 'string'
        ? mcp.params.protocolVersion
        : (mcp.headers.protocolVersion ?? '');
    const refused = refusal('unsupported_protocol_version', {
      message: 'This server speaks only the modern protocol revisions',
      data: { supported: [...config.modernVersions], requested },
    });
    return sendRefusal(req, res, refused, DISPATCH);
  }
  const reply = new Reply(config, req, res, mcp, era);
  // Routable names only: a name with an empty segment is never folded.
  const r = isRoutableMethod(mcp.method!) ? routeFor(mcp.method!) : undefined;
  const handler = resolveTarget(dispatcher, reply, r);
  if (handler === 'listen') return dispatcher.listen.serve(reply, mcp.params ?? {});
  if (!('fn' in handler)) return sendRpcError(reply, handler, config.logger);

  const route = r!;
  const views = route.namespace === 'tools' && !config.routes.viewsAware ? toolViewsOf(reply.locals) : [];
  const target: Target = { call: openCall(reply, route), bound: handler, views, key: route.key };
  // Until an answer is written this is the outcome: whoever reads the record when the client goes away (audit and
  // metrics listen for the response's close, possibly before the handler notices) sees a cancelled call.
  reply.locals.response = { resultType: 'cancelled' };
  const original: JsonObject = mcp.params ?? {};
  let value: unknown;
  try {
    value = invoke(dispatcher, target, original);
  } catch (err) {
    return failed(dispatcher, target.call, err);
  }
  // A plain result with no tool filter to apply is answered in this turn.
  // see docs/performance.md#synchronous-answers
  const out =
    !isThenable(value) && !isInputRequiredResult(value) && views.length === 0
      ? settle(dispatcher, target, value)
      : runRounds(dispatcher, target, original, value);
  // Still running: in flight until it has answered (a drain waits for it).
  if (out !== undefined) {
    dispatcher.drain.track(target.call, out);
    // A legacy call can be cancelled by a notifications/cancelled naming it.
    if (era === 'legacy') dispatcher.cancels.track(target.call, out);
  }
  return out;
}

/**
 * One round of a request: its MRTR members are read from the params (client retries) or given (legacy rounds),
 * the tool name is resolved through the request's tool filter views, and the handler is called.
 */
function invoke(dispatcher: Dispatcher, t: Target, params: JsonObject, given?: RoundInput): unknown {
  const round = given ?? readRound(dispatcher.states, t.call, params, dispatcher.config.logger);
  const ctx = new HandlerContext(dispatcher, t.call, round);
  if (t.views.length > 0 && t.key === TOOLS_CALL) {
    const name = params.name;
    const actual = typeof name === 'string' ? resolveThrough(name, t.views) : undefined;
    if (typeof name === 'string' && actual === undefined) {
      throw new McpError(ErrorCode.InvalidParams, `Unknown tool: "${clip(name, 64)}"`, { tool: name });
    }
    if (actual !== undefined && actual !== name) params = { ...params, name: actual };
  }
  return t.bound.fn.call(t.bound.self, params, ctx);
}

/**
 * The rest of a request after its first call: await it; on a legacy request serve each input-required round
 * with real server-to-client requests (the same handler, called again with the answers); apply the tool filter
 * to a tools/list result; then answer.
 */
async function runRounds(
  dispatcher: Dispatcher,
  t: Target,
  original: JsonObject,
  first: unknown,
): Promise<void> {
  const { call } = t;
  let value: unknown;
  try {
    value = await first;
    for (let round = 1; isInputRequiredResult(value); round++) {
      const asked = checkedInputRequired(value, call);
      if (call.era !== 'legacy') break;
      const state = handedBackState(dispatcher.states, call, original, asked);
      const answers = await dispatcher.inputs.ask(call, asked, round);
      const params: JsonObject = { ...original, inputResponses: answers };
      if (asked.requestState !== undefined) params.requestState = asked.requestState;
      const given: RoundInput = { params, inputResponses: Object.freeze(answers) };
      if (state !== undefined) given.requestState = state;
      value = await invoke(dispatcher, t, params, given);
    }
    if (t.views.length > 0 && t.key === TOOLS_LIST && isJsonObject(value) && Array.isArray(value.tools)) {
      const tools = exposeList(value.tools, t.views);
      if (!tools)
        throw new Error(
          'tools/list: a listed tool has no string name; the list is withheld (tool filter fails closed)',
        );
      value = { ...value, tools };
    }
  } catch (err) {
    return failed(dispatcher, call, err);
  }
  return settle(dispatcher, t, value);
}

/** A result through the outbound transforms, then answered. */
function settle(
  dispatcher: Dispatcher,
  t: Pick<Target, 'call' | 'key'>,
  value: unknown,
): void | Promise<void> {
  let out: unknown;
  try {
    out = applyOutbound(t.call.reply.locals, value, t.call.method, 'result');
  } catch (err) {
    return failed(dispatcher, t.call, err);
  }
  if (!isThenable(out)) return answer(dispatcher, t, out);
  return Promise.resolve(out).then(
    (v) => answer(dispatcher, t, v),
    (err: unknown) => failed(dispatcher, t.call, err),
  );
}

/** A handler's failure: nothing more for a cancelled call, else the error answer. */
function failed(dispatcher: Dispatcher, call: Call, err: unknown): void | Promise<void> {
  if (call.ac.aborted) {
    // Unless answered already (cut off at a shutdown deadline), a cancelled call is recorded as such.
    if (!call.reply.answered) call.reply.locals.response = { resultType: 'cancelled' };
    return;
  }
  // A legacy tool whose client lacks a capability it asked for answers a tool error naming it.
  const lacking = lackingCapabilityResult(call, err);
  if (lacking !== undefined) return settle(dispatcher, { call, key: TOOLS_CALL }, lacking);
  return sendThrown(call.reply, err, dispatcher.config.logger);
}

/** Encode and write a handler's (transformed) result. */
function answer(
  dispatcher: Dispatcher,
  t: Pick<Target, 'call' | 'key'>,
  value: unknown,
): void | Promise<void> {
  const { reply } = t.call;
  const { mcp, era, locals } = reply;
  const { config } = dispatcher;
  const method = t.call.method;
  if (t.call.ac.aborted) {
    if (!reply.answered) locals.response = { resultType: 'cancelled' };
    return;
  }
  let encoded: EncodeResult;
  let text = '';
  try {
    encoded = encodeResult(value, {
      era,
      method,
      routeKey: t.key,
      cache: config.cache.get(t.key),
      serverInfo: config.serverInfo,
      // A task's own `ttlMs` is kept: the CreateTaskResult of the call that made one, and tasks/get's task.
      task: t.key === TASKS_GET || (t.key === TOOLS_CALL && locals.task !== undefined),
    });
    if (encoded.ok) text = responseText(mcp.id, encoded.result);
  } catch (err) {
    log(config.logger, 'error', `dispatch: the result of ${clip(method, 128)} is not serializable`, {
      method: clip(method, 128),
      error: errorMeta(err),
    });
    return sendRpcError(reply, internalError(), config.logger);
  }
  if (!encoded.ok) {
    log(config.logger, 'error', `dispatch: ${encoded.message}`, {
      method: clip(method, 128),
      reason: encoded.reason,
    });
    return sendRpcError(reply, internalError(), config.logger);
  }
  const record: { resultType: string; toolError?: boolean } = { resultType: encoded.resultType };
  if (t.key === TOOLS_CALL) record.toolError = encoded.result.isError === true;
  // Under otel(): the result as answered, after the outbound transforms (redaction), for what it may capture.
  locals[TRACE]?.result(value);
  return reply.send(200, text, record);
}
