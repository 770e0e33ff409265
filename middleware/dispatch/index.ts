/**
 * `dispatch()`: the last middleware. It routes each JSON-RPC request to a handler object's method and writes
 * the answer.
 *
 * - Routing: `tools/list` → `handlers.tools.list(params, ctx)`, `resources/templates/list` →
 *   `handlers.resources.templatesList(params, ctx)`, a method without `/` → `handlers[method]` (a function).
 * - Notifications → 202 with an empty body (a `notifications.<member>` handler, if any, runs after the 202).
 *   Posted JSON-RPC responses → 202 in the legacy era (answers to the server's own requests are delivered),
 *   400 / -32600 when the request's `MCP-Protocol-Version` header is modern.
 * - Unknown method, a method of an undeclared capability, or (modern era) one the 2026-07-28 revision removed →
 *   -32601: HTTP 404 for a modern request, 200 for a legacy one.
 * - Handler errors: an McpError keeps its code and data; anything else is -32603 "Internal error" (detail to the
 *   log). Both stay in-band on HTTP 200 except -32601 (404 modern), the 400-class codes (-32700, -32600,
 *   -32020, -32021, -32022) and the HTTP-shaped application codes (401, 403, 429, 503).
 * - Results: modern ones get `resultType`, cache hints on cacheable methods, and the server's `serverInfo` in
 *   `_meta`; legacy ones are sent plain. `req.locals.outbound` transforms run on every result first.
 * - Built in (overridable): legacy `initialize`, `ping`, `logging/setLevel` and `resources/subscribe` /
 *   `unsubscribe`, and `server/discover` in both eras. Not overridable: modern `subscriptions/listen`.
 * - Streaming: a handler's `ctx.progress()`/`ctx.log()` notifications turn the answer into a request-scoped SSE
 *   stream (when the client accepts `text/event-stream`) that ends with the response. Closing the stream (or the
 *   connection) cancels: the handler's AbortSignal fires and nothing more is written for that request.
 * - `subscriptions/listen` (modern): a long-lived SSE answer carrying list-changed and resource-updated
 *   notifications from the handlers' change feeds; `close()` ends every such stream with its completion result.
 * - MRTR: on `tools/call`, `prompts/get` and `resources/read` a handler may return `ctx.inputRequired(…)`; its
 *   state is signed (HMAC-SHA256) and verified on the retry. Legacy requests get the same handler served with
 *   real server-to-client requests on the SSE answer.
 *
 * It works alone (it parses and classifies lazily, like every mcpware middleware) and after the transport
 * middlewares. It does not check headers: mount `checkHeaders()` before it.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type Era, ErrorCode, McpError, refusal } from '../../lib/errors.js';
import type { JsonObject } from '../../lib/jsonrpc.js';
import { LOG_LEVELS, type LogLevel, META, isLogLevel, logLevelRank } from '../../lib/meta.js';
import {
  type InputRequiredResult,
  MIN_STATE_KEY_BYTES,
  checkInputRequired,
  isInputRequiredResult,
  missingCapabilities,
  paramsDigest,
  principalKey,
  readInputResponses,
  signRequestState,
  verifyRequestState,
} from '../../lib/mrtr.js';
import type { McpRequest } from '../../lib/request.js';
import {
  CACHEABLE_METHODS,
  type CacheHint,
  INPUT_REQUIRED_METHODS,
  type Implementation,
  encodeResult,
  encodeResultText,
  type EncodeTextResult,
  hasCapability,
  isRemovedInModern,
  isRoutableMethod,
  requiredCapability,
  routeKey,
  routeOf,
  sendableCode,
  statusForCode,
} from '../../lib/results.js';
import { DEFAULT_LEGACY_VERSION, isModernClaim, negotiateVersion } from '../../lib/revisions.js';
import { type ChangeEvent, type ChangeFeed, changesOf } from '../../handlers/changes/index.js';
import { type ClassifyRevisionOptions, versionOptions } from '../classify-revision/index.js';
import {
  type BodyOptions,
  admitParsed,
  classifyOnce,
  ensureParsed,
  parsedNow,
  resolveBodyOptions,
} from '../internal/parse-step.js';
import {
  type CallContext,
  HANDLER_FAST,
  HANDLER_METHODS,
  type HandlerMethod,
  type Handlers,
  type InputRequiredRequest,
  type ServerCapabilities,
} from '../../handlers/contract.js';
import { localsOf, sendInternalError, sendRefusal, stderrLogger } from '../internal/respond.js';
import { badOption } from '../internal/options.js';
import { TOOL_VIEWS_APPLIED, exposeList, resolveThrough, toolViewsOf } from '../tool-filter/index.js';
import { isThenable } from '../internal/maybe-promise.js';
import type { Logger, Middleware, OutboundTransform, RequestLocals } from '../types.js';

export interface DispatchOptions extends ClassifyRevisionOptions, BodyOptions {
  /** Namespace → handler object (`tools`, `resources`, `prompts`, `completion`, …); root methods as functions. */
  handlers: Handlers;
  /** Who the server is: `{name, version}` (plus `title`, `description`, `websiteUrl`, `icons`). */
  serverInfo: Implementation;
  /**
   * What the server declares, returned exactly by `initialize` and `server/discover`. Every declared capability
   * must have its handlers (checked here), and a `listChanged`/`subscribe` flag its change feed. Default: derived
   * from the handlers (`tools` when `tools.list` and `tools.call` exist, `resources` for `list` + `read`,
   * `prompts` for `list` + `get`, `completions` for `completion.complete`; `listChanged` (and for resources
   * `subscribe`) when the handler object has a change feed, as a ToolRegistry always does; `logging` is never
   * derived).
   */
  capabilities?: ServerCapabilities;
  /** Instructions for the model, returned by `initialize` and `server/discover`. */
  instructions?: string;
  /** Cache hints per cacheable method (`tools/list`, …, `server/discover`). Default `{ttlMs: 0, cacheScope: 'private'}`. */
  cache?: Readonly<Partial<Record<string, CacheHint>>>;
  /**
   * The lowest level of `notifications/message` sent on legacy (2025-11-25) requests that carry no
   * `_meta["io.modelcontextprotocol/logLevel"]`. A legacy session's `logging/setLevel` cannot be remembered by a
   * stateless server (it is accepted and validated, nothing more), so this server-wide level stands in for it.
   * Default: none (legacy requests get no log notifications). Modern requests always follow their own `_meta`.
   */
  legacyLogLevel?: LogLevel;
  /**
   * HMAC-SHA256 key(s) for MRTR `requestState`, each at least 32 bytes (a string is taken as UTF-8). With a list,
   * the first signs and all verify (key rotation). Default: a random key per dispatcher instance, so a state
   * only verifies on the process that issued it: give every replica the same key.
   */
  requestStateKey?: string | Uint8Array | readonly (string | Uint8Array)[];
  /** How long a signed `requestState` stays valid, in ms. Default 600000 (10 minutes). */
  requestStateTtlMs?: number;
  /** Keep-alive comment interval on `subscriptions/listen` streams, in ms; 0 turns it off. Default 15000. */
  listenKeepAliveMs?: number;
  /** Most `subscriptions/listen` streams open at once on this dispatcher; more → 503. 0 refuses all. Default 1000. */
  maxListenStreams?: number;
  /** Legacy MRTR: how long to wait for the client to answer a server-to-client request, in ms. Default 300000. */
  inputTimeoutMs?: number;
  /** Legacy MRTR: most input rounds one request may take before it fails. Default 8. */
  maxInputRounds?: number;
}

/** The dispatcher middleware, with the controls a server needs at shutdown. */
export type DispatchMiddleware = Middleware & {
  /**
   * Graceful end: every open `subscriptions/listen` stream gets its completion result and is closed, pending
   * legacy input requests fail, and new listen requests are refused (503). Resolves when the streams are ended.
   */
  close(): Promise<void>;
  /** Open listen streams and legacy input requests awaiting the client (for tests and health checks). */
  stats(): { listenStreams: number; pendingInputs: number };
};

const F = 'dispatch';
const TOOLS_CALL = routeKey('tools/call');
const TOOLS_LIST = routeKey('tools/list');
/** A cheap first look at Accept before splitting it (bounded: a literal). */
const EVENT_STREAM = /event-stream/i;

interface Bound {
  fn: HandlerMethod;
  /** `this` for the call. */
  obj: object | undefined;
}

const isObj = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

function clip(s: string, max = 128): string {
  return s.length > max ? s.slice(0, max) + '…' : s;
}

/** One SSE event carrying a JSON-RPC message. */
function sseEvent(text: string): string {
  return `event: message\ndata: ${text}\n\n`;
}

/** Build the routing table once: only callable members (see HandlerObject) are reachable. */
function buildTable(handlers: unknown): { table: Map<string, Map<string, Bound>>; viewsAware: boolean } {
  if (!isObj(handlers)) throw badOption(F, 'handlers', handlers, 'an object of handler objects');
  const table = new Map<string, Map<string, Bound>>();
  const add = (ns: string, member: string, b: Bound): void => {
    let m = table.get(ns);
    if (!m) table.set(ns, (m = new Map()));
    m.set(member, b);
  };
  let viewsAware = false;
  for (const ns of Object.keys(handlers)) {
    const h = handlers[ns];
    if (typeof h === 'function') {
      if (ns === '' || ns.includes('/'))
        throw badOption(F, `handlers.${ns}`, h, 'a handler object (root methods are named without "/")');
      add('', ns, { fn: h as HandlerMethod, obj: undefined });
      continue;
    }
    if (h === null || typeof h !== 'object' || Array.isArray(h)) {
      throw badOption(F, `handlers.${ns}`, h, 'a handler object or a function');
    }
    if (ns.includes('/')) throw badOption(F, `handlers.${ns}`, h, 'registered under a namespace without "/"');
    const obj = h as Record<string | symbol, unknown>;
    let members: readonly string[];
    if (HANDLER_METHODS in obj) {
      const listed = obj[HANDLER_METHODS];
      if (!Array.isArray(listed) || listed.some((m) => typeof m !== 'string')) {
        throw badOption(F, `handlers.${ns}[HANDLER_METHODS]`, listed, 'an array of member names');
      }
      for (const m of listed as string[]) {
        if (typeof obj[m] !== 'function')
          throw badOption(F, `handlers.${ns}.${m}`, obj[m], 'a function (it is listed in HANDLER_METHODS)');
      }
      members = listed as string[];
    } else {
      members = Object.keys(obj).filter((k) => typeof obj[k] === 'function');
    }
    // A synchronous variant the object offers for a member (HANDLER_FAST) is used in its place.
    const fastOf =
      typeof obj[HANDLER_FAST] === 'function' ? (obj[HANDLER_FAST] as (m: string) => unknown) : undefined;
    for (const m of members) {
      const fast = fastOf?.call(obj, m);
      add(ns, m, { fn: (typeof fast === 'function' ? fast : obj[m]) as HandlerMethod, obj });
    }
    if (ns === 'tools' && obj[TOOL_VIEWS_APPLIED] === true) viewsAware = true;
  }
  return { table, viewsAware };
}

/** Members each capability promises to answer. */
/** Members each capability promises to answer. */
const PROMISES: Readonly<Record<string, readonly [string, string][]>> = {
  tools: [
    ['tools', 'list'],
    ['tools', 'call'],
  ],
  resources: [
    ['resources', 'list'],
    ['resources', 'read'],
  ],
  prompts: [
    ['prompts', 'list'],
    ['prompts', 'get'],
  ],
  completions: [['completion', 'complete']],
};

/** The change feeds of the three list-bearing handler objects. */
interface Feeds {
  tools?: ChangeFeed | undefined;
  resources?: ChangeFeed | undefined;
  prompts?: ChangeFeed | undefined;
}

function resolveCapabilities(
  given: unknown,
  has: (ns: string, m: string) => boolean,
  feeds: Feeds,
): ServerCapabilities {
  if (given === undefined) {
    const caps: ServerCapabilities = {};
    for (const cap of ['tools', 'resources', 'prompts', 'completions'] as const) {
      const need = PROMISES[cap]!;
      const present = need.filter(([ns, m]) => has(ns, m));
      if (present.length === need.length) caps[cap] = {};
      else if (present.length > 0) {
        const missing = need.filter(([ns, m]) => !has(ns, m)).map(([ns, m]) => `${ns}.${m}`);
        throw new TypeError(
          `dispatch: option "handlers" has part of the ${cap} methods; add ${missing.join(' and ')} (or declare capabilities explicitly)`,
        );
      }
    }
    if (caps.tools && feeds.tools) caps.tools = { listChanged: true };
    if (caps.prompts && feeds.prompts) caps.prompts = { listChanged: true };
    if (caps.resources) {
      if (feeds.resources) caps.resources = { subscribe: true, listChanged: true };
      else if (has('resources', 'subscribe') && has('resources', 'unsubscribe'))
        caps.resources = { subscribe: true };
    }
    return caps;
  }
  if (!isObj(given)) throw badOption(F, 'capabilities', given, 'an object (ServerCapabilities)');
  for (const key of [
    'tools',
    'resources',
    'prompts',
    'completions',
    'logging',
    'experimental',
    'extensions',
  ]) {
    if (given[key] !== undefined && !isObj(given[key]))
      throw badOption(F, `capabilities.${key}`, given[key], 'an object');
  }
  for (const key of ['tools', 'resources', 'prompts'] as const) {
    const c = given[key];
    // A listChanged promise needs a channel: the handler object's change feed, read by subscriptions/listen.
    if (isObj(c) && c.listChanged === true && !feeds[key]) {
      throw badOption(
        F,
        `capabilities.${key}.listChanged`,
        true,
        `false or absent unless handlers.${key} has a change feed (a ToolRegistry, or the changes option of resources()/prompts())`,
      );
    }
  }
  for (const cap of Object.keys(PROMISES)) {
    if (!hasCapability(given, cap)) continue;
    const missing = PROMISES[cap]!.filter(([ns, m]) => !has(ns, m)).map(([ns, m]) => `handlers.${ns}.${m}`);
    if (missing.length > 0) {
      throw new TypeError(
        `dispatch: option "capabilities" declares ${cap}, a promise to answer it, but ${missing.join(' and ')} ${missing.length > 1 ? 'are' : 'is'} missing`,
      );
    }
  }
  if (
    hasCapability(given, 'resources.subscribe') &&
    !feeds.resources &&
    !(has('resources', 'subscribe') && has('resources', 'unsubscribe'))
  ) {
    throw new TypeError(
      'dispatch: option "capabilities" declares resources.subscribe, but handlers.resources has no change feed (the changes option of resources()) and no subscribe and unsubscribe members',
    );
  }
  try {
    return structuredClone(given) as ServerCapabilities;
  } catch {
    throw badOption(F, 'capabilities', given, 'plain JSON data');
  }
}

function intOption(name: string, v: unknown, def: number, min: number, max: number): number {
  if (v === undefined) return def;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min || v > max) {
    throw badOption(F, name, v, `an integer from ${min} to ${max}`);
  }
  return v;
}

function checkStateKeys(v: unknown): Uint8Array[] {
  if (v === undefined) return [randomBytes(32)];
  const list = Array.isArray(v) ? (v as unknown[]) : [v];
  if (list.length === 0) throw badOption(F, 'requestStateKey', v, 'a key or a non-empty list of keys');
  return list.map((k, i) => {
    const bytes =
      typeof k === 'string' ? Buffer.from(k, 'utf8') : k instanceof Uint8Array ? Buffer.from(k) : undefined;
    if (!bytes || bytes.length < MIN_STATE_KEY_BYTES) {
      throw badOption(
        F,
        Array.isArray(v) ? `requestStateKey[${i}]` : 'requestStateKey',
        // Never echo key material into an error message: describe it.
        `(a ${typeof k === 'string' ? 'string' : k instanceof Uint8Array ? 'Uint8Array' : typeof k} of ${bytes?.length ?? 0} bytes)`,
        `a string or Uint8Array of at least ${MIN_STATE_KEY_BYTES} bytes`,
      );
    }
    return bytes;
  });
}
function checkServerInfo(v: unknown): Implementation {
  if (
    !isObj(v) ||
    typeof v.name !== 'string' ||
    v.name === '' ||
    typeof v.version !== 'string' ||
    v.version === ''
  ) {
    throw badOption(F, 'serverInfo', v, 'an object with non-empty string name and version');
  }
  try {
    return Object.freeze(structuredClone(v)) as Implementation;
  } catch {
    throw badOption(F, 'serverInfo', v, 'plain JSON data');
  }
}

function checkCacheOption(v: unknown): Map<string, CacheHint> {
  const out = new Map<string, CacheHint>();
  if (v === undefined) return out;
  if (!isObj(v))
    throw badOption(F, 'cache', v, 'an object mapping cacheable methods to { ttlMs, cacheScope }');
  for (const method of Object.keys(v)) {
    if (!CACHEABLE_METHODS.includes(method)) {
      throw badOption(F, 'cache', method, `keyed by cacheable methods (${CACHEABLE_METHODS.join(', ')})`);
    }
    const h = v[method];
    if (
      !isObj(h) ||
      typeof h.ttlMs !== 'number' ||
      !Number.isSafeInteger(h.ttlMs) ||
      h.ttlMs < 0 ||
      (h.cacheScope !== 'public' && h.cacheScope !== 'private')
    ) {
      throw badOption(F, `cache.${method}`, h, "{ ttlMs: integer ≥ 0, cacheScope: 'public' | 'private' }");
    }
    out.set(routeKey(method), { ttlMs: h.ttlMs, cacheScope: h.cacheScope });
  }
  return out;
}

function isMcpErrorLike(e: unknown): e is McpError {
  // instanceof fails across two copies of the package (CJS and ESM builds side by side): check the shape too.
  return (
    e instanceof McpError ||
    (e instanceof Error && e.name === 'McpError' && Number.isInteger((e as { code?: unknown }).code))
  );
}

const INPUT_REQUIRED_ROUTES: ReadonlySet<string> = new Set(INPUT_REQUIRED_METHODS.map(routeKey));
const LISTEN = routeKey('subscriptions/listen');
/** A listen stream whose client reads slower than this many buffered bytes is dropped. */
const MAX_LISTEN_BUFFER = 1024 * 1024;
/** Most URIs one listen request may subscribe to. */
const MAX_RESOURCE_SUBSCRIPTIONS = 1000;
/** Prefix of the ids of the server's own legacy requests (answers carrying another id are just acknowledged). */
const INPUT_ID_PREFIX = 'mcpware-input-';

export function dispatch(options: DispatchOptions): DispatchMiddleware {
  if (options === null || typeof options !== 'object')
    throw new TypeError('dispatch: options must be an object');
  const versions = versionOptions(F, options);
  const modernVersions = versions.modernVersions!;
  const legacyVersions = versions.legacyVersions!;
  if (modernVersions.length + legacyVersions.length === 0) {
    throw badOption(
      F,
      'modernVersions',
      modernVersions,
      'non-empty (or legacyVersions non-empty): the server must speak some revision',
    );
  }
  const body = resolveBodyOptions(F, options);
  const logger: Logger = options.logger ?? stderrLogger;
  if (logger === null || typeof logger !== 'object' || typeof logger.error !== 'function') {
    throw badOption(F, 'logger', logger, 'a logger with an error() method');
  }
  const serverInfo = checkServerInfo(options.serverInfo);
  // Encoded once: modern results carry it in `_meta` (a private frozen copy, so the text cannot go stale).
  const serverInfoJson = JSON.stringify(serverInfo);
  if (options.instructions !== undefined && typeof options.instructions !== 'string') {
    throw badOption(F, 'instructions', options.instructions, 'a string');
  }
  const instructions = options.instructions;
  const cache = checkCacheOption(options.cache);
  if (options.legacyLogLevel !== undefined && !isLogLevel(options.legacyLogLevel)) {
    throw badOption(F, 'legacyLogLevel', options.legacyLogLevel, `one of ${LOG_LEVELS.join(', ')}`);
  }
  const legacyLogLevel = options.legacyLogLevel;
  const stateKeys = checkStateKeys(options.requestStateKey);
  const stateTtlMs = intOption(
    'requestStateTtlMs',
    options.requestStateTtlMs,
    600_000,
    1_000,
    7 * 86_400_000,
  );
  const keepAliveMs = intOption('listenKeepAliveMs', options.listenKeepAliveMs, 15_000, 0, 3_600_000);
  const maxListen = intOption('maxListenStreams', options.maxListenStreams, 1000, 0, 1_000_000);
  const inputTimeoutMs = intOption('inputTimeoutMs', options.inputTimeoutMs, 300_000, 1, 86_400_000);
  const maxInputRounds = intOption('maxInputRounds', options.maxInputRounds, 8, 1, 1000);
  const { table, viewsAware } = buildTable(options.handlers);
  const has = (ns: string, m: string): boolean => table.get(ns)?.has(m) === true;
  const handlerObjects = options.handlers as Readonly<Record<string, unknown>>;
  const feeds: Feeds = {
    tools: changesOf(handlerObjects.tools),
    resources: changesOf(handlerObjects.resources),
    prompts: changesOf(handlerObjects.prompts),
  };
  const capabilities = resolveCapabilities(options.capabilities, has, feeds);
  const supportedVersions = [...modernVersions, ...legacyVersions];

  // Built-in services, used when no handler of that name is registered. Keyed by (namespace, member) like the
  // table, so `server.discover` (no slash: the root method "server.discover") can never reach server/discover.
  const builtins = new Map<string, HandlerMethod>();
  const bkey = (ns: string, member: string): string => `${ns}\u0000${member}`;
  builtins.set(bkey('', 'initialize'), (params) => {
    const out: JsonObject = {
      protocolVersion: negotiateVersion(params.protocolVersion, legacyVersions),
      capabilities: structuredClone(capabilities),
      serverInfo: structuredClone(serverInfo),
    };
    if (instructions !== undefined) out.instructions = instructions;
    return out;
  });
  builtins.set(bkey('', 'ping'), () => ({}));
  builtins.set(bkey('server', 'discover'), () => {
    const out: JsonObject = {
      supportedVersions: [...supportedVersions],
      capabilities: structuredClone(capabilities),
    };
    if (instructions !== undefined) out.instructions = instructions;
    out._meta = { [META.serverInfo]: structuredClone(serverInfo) };
    return out;
  });
  builtins.set(bkey('logging', 'setLevel'), (params) => {
    // Stateless: the level of a legacy session cannot be kept between requests; the call is accepted and
    // validated only (legacy requests get the `legacyLogLevel` option's level). Modern clients send the level
    // per request in _meta.
    if (!isLogLevel(params.level)) {
      throw new McpError(
        ErrorCode.InvalidParams,
        `Invalid params: "level" must be one of ${LOG_LEVELS.join(', ')}`,
      );
    }
    return {};
  });
  builtins.set(bkey('resources', 'templatesList'), (params) => {
    // `resources` promises resources/templates/list; with no templates handler the list is empty.
    if (typeof params.cursor === 'string' && params.cursor !== '') {
      throw new McpError(
        ErrorCode.InvalidParams,
        'resources/templates/list: Invalid cursor: it is malformed',
      );
    }
    return { resourceTemplates: [] };
  });
  // 2025-11-25 resources/subscribe and unsubscribe (legacy only; gated by resources.subscribe): the request is
  // validated and acknowledged. A stateless server has no session stream to deliver
  // notifications/resources/updated on, so legacy subscribers are never notified; modern clients subscribe with
  // subscriptions/listen (resourceSubscriptions) and are.
  const subscribeAck: HandlerMethod = (params) => {
    if (typeof params.uri !== 'string' || params.uri === '') {
      throw new McpError(ErrorCode.InvalidParams, 'Invalid params: "uri" must be a non-empty string');
    }
    return {};
  };
  builtins.set(bkey('resources', 'subscribe'), subscribeAck);
  builtins.set(bkey('resources', 'unsubscribe'), subscribeAck);

  const isModernHeader = (h: string | undefined): boolean =>
    h !== undefined && (isModernClaim(h) || modernVersions.includes(h));

  /** The `MCP-Protocol-Version` response header: the request's, when it named a revision we speak in that era. */
  function versionHeader(mcp: McpRequest, era: Era | undefined): Record<string, string> | undefined {
    const h = mcp.headers.protocolVersion;
    if (h === undefined) return undefined;
    const ok =
      era === 'modern'
        ? modernVersions.includes(h)
        : era === 'legacy'
          ? legacyVersions.includes(h)
          : supportedVersions.includes(h);
    return ok ? { 'MCP-Protocol-Version': h } : undefined;
  }

  function write(
    res: ServerResponse,
    status: number,
    text: string | undefined,
    headers?: Record<string, string>,
  ): void {
    if (res.headersSent || res.writableEnded || res.destroyed) {
      if (!res.writableEnded && !res.destroyed) res.end();
      return;
    }
    // One writeHead with a flat list rather than a setHeader per header: node builds no header map for the
    // common answer. Headers other middlewares set earlier are kept (writeHead merges them).
    const list: (string | number)[] = [];
    if (headers) for (const k of Object.keys(headers)) list.push(k, headers[k]!);
    if (text === undefined) {
      list.push('Content-Length', 0);
      res.writeHead(status, list);
      res.end();
      return;
    }
    list.push('Content-Type', 'application/json', 'Content-Length', Buffer.byteLength(text));
    res.writeHead(status, list);
    res.end(text);
  }

  function logFailure(message: string, err: unknown, extra: Record<string, unknown> = {}): void {
    try {
      const meta: Record<string, unknown> = { ...extra };
      if (err !== undefined)
        meta.error = err instanceof Error ? { message: err.message, stack: err.stack } : String(err);
      logger.error(message, meta);
    } catch {
      // A broken logger must not take the answer down with it.
    }
  }

  function logWarn(message: string, meta: Record<string, unknown>): void {
    try {
      (logger.warn ?? logger.error).call(logger, message, meta);
    } catch {
      // As above.
    }
  }

  /**
   * The request's outbound transforms (redaction) applied in order. Synchronous while they are (a throw is
   * thrown); a promise from the first transform that returns one.
   */
  function applyOutbound(
    locals: RequestLocals,
    value: unknown,
    method: string,
    kind: 'result' | 'notification',
  ): unknown {
    const transforms = locals.outbound;
    if (!Array.isArray(transforms)) return value;
    for (let i = 0; i < transforms.length; i++) {
      const t: unknown = transforms[i];
      if (typeof t !== 'function') continue;
      value = (t as OutboundTransform)(value, { method, kind });
      if (isThenable(value)) return finishTransforms(transforms, i + 1, value, method, kind);
    }
    return value;
  }

  async function finishTransforms(
    transforms: readonly unknown[],
    from: number,
    pending: PromiseLike<unknown>,
    method: string,
    kind: 'result' | 'notification',
  ): Promise<unknown> {
    let value = await pending;
    for (let i = from; i < transforms.length; i++) {
      const t: unknown = transforms[i];
      if (typeof t !== 'function') continue;
      value = (t as OutboundTransform)(value, { method, kind });
      if (isThenable(value)) value = await value;
    }
    return value;
  }

  /**
   * The answer to one request. It is one JSON body, unless something is sent before the response (a
   * notification, or a legacy server-to-client request) while the client accepts `text/event-stream`: the answer
   * then becomes a request-scoped SSE stream carrying those messages in order and, last, the response (2026-07-28
   * and 2025-11-25 Streamable HTTP alike). No event ids: the stream is not resumable.
   *
   * A class rather than an object of closures: a request makes one object, and its methods are compiled once.
   */
  class Reply {
    readonly locals: RequestLocals;
    /** Whether the client accepts an SSE answer (read from Accept on first use). */
    #accepts: boolean | undefined = undefined;
    #streaming = false;
    #closed = false;
    /** Messages sent before the response, in order; most answers have none and never make a promise for them. */
    #queue: Promise<void> | undefined = undefined;

    constructor(
      readonly req: IncomingMessage,
      readonly res: ServerResponse,
      readonly mcp: McpRequest,
      readonly era: Era,
    ) {
      this.locals = localsOf(req);
    }

    /** Whether the client accepts an SSE answer. */
    canStream(): boolean {
      return (this.#accepts ??= acceptsEventStream(this.req));
    }

    #gone(): boolean {
      return this.res.destroyed || this.res.writableEnded;
    }

    #startStream(): void {
      const res = this.res;
      this.#streaming = true;
      res.statusCode = 200;
      res.setHeader('Content-Type', 'text/event-stream');
      res.setHeader('Cache-Control', 'no-cache');
      res.setHeader('X-Accel-Buffering', 'no');
      const vh = versionHeader(this.mcp, this.era);
      if (vh) for (const k of Object.keys(vh)) res.setHeader(k, vh[k]!);
      res.flushHeaders();
    }

    /**
     * Queue a message before the response; false when it cannot be delivered (no SSE, answered, client gone). A
     * message that fails its outbound transform is dropped; when it is `critical` (the stream makes no sense
     * without it) the connection is closed instead.
     */
    push(message: JsonObject, critical = false): boolean {
      const { res, mcp, locals } = this;
      if (this.#closed || !this.canStream() || this.#gone() || (res.headersSent && !this.#streaming))
        return false;
      this.#queue = (this.#queue ?? Promise.resolve()).then(async () => {
        if (this.#gone()) return;
        const what = typeof message.method === 'string' ? message.method : 'message';
        let text: string;
        try {
          const msg = await applyOutbound(locals, message, mcp.method ?? '', 'notification');
          text = JSON.stringify(msg);
        } catch (err) {
          // Fail closed: a message that could not be transformed (redaction) or encoded is not sent.
          logFailure(`dispatch: a ${clip(what)} message of ${clip(mcp.method ?? '')} was dropped`, err);
          if (critical) res.destroy();
          return;
        }
        // The client may have gone while the transform ran: then nothing more is written.
        if (this.#gone()) return;
        if (!this.#streaming) this.#startStream();
        locals.streamed = (locals.streamed ?? 0) + 1;
        res.write(sseEvent(text));
      });
      return true;
    }

    /** Queue a notification (see push). */
    notify(method: string, params: JsonObject): boolean {
      return this.push({ jsonrpc: '2.0', method, params });
    }

    /** Queue an SSE comment line (keep-alive); only on a stream already started. */
    comment(text: string): void {
      if (this.#closed || !this.#streaming) return;
      this.#queue = (this.#queue ?? Promise.resolve()).then(() => {
        if (!this.#gone()) this.res.write(`: ${text}\n\n`);
      });
    }

    /** Write the final response (JSON, or the last SSE event) after the queued messages. */
    send(status: number, text: string, record: RequestLocals['response']): void | Promise<void> {
      this.#closed = true;
      // Only an answer that queued messages before it waits for them; the common one is written at once.
      if (this.#queue) return this.#queue.then(() => this.#deliver(status, text, record));
      this.#deliver(status, text, record);
    }

    /** Bytes written but not yet flushed to the client. */
    buffered(): number {
      return this.res.writableLength;
    }

    #deliver(status: number, text: string, record: RequestLocals['response']): void {
      const { res, locals } = this;
      if (this.#streaming) {
        // The ResponseRecord contract: `stream` marks an SSE answer (an error keeps its code).
        locals.response = { ...record, resultType: 'stream' };
        if (!this.#gone()) res.end(sseEvent(text));
        return;
      }
      locals.response = record;
      write(res, status, text, status < 300 ? versionHeader(this.mcp, this.era) : undefined);
    }
  }

  function acceptsEventStream(req: IncomingMessage): boolean {
    const a = req.headers.accept;
    if (typeof a !== 'string' || !EVENT_STREAM.test(a)) return false;
    return a.split(',').some((part) => {
      const semi = part.indexOf(';');
      return (semi < 0 ? part : part.slice(0, semi)).trim().toLowerCase() === 'text/event-stream';
    });
  }

  function makeReply(req: IncomingMessage, res: ServerResponse, mcp: McpRequest, era: Era): Reply {
    return new Reply(req, res, mcp, era);
  }

  async function sendRpcError(
    r: Reply,
    code: number,
    message: string,
    data: unknown,
    status: number,
  ): Promise<void> {
    const error: { code: number; message: string; data?: unknown } = { code, message };
    if (data !== undefined) error.data = data;
    let text: string;
    try {
      text = JSON.stringify({ jsonrpc: '2.0', id: r.mcp.id, error });
    } catch (e) {
      logFailure(`dispatch: error data of ${clip(r.mcp.method ?? '')} is not serializable`, e);
      code = ErrorCode.InternalError;
      text = JSON.stringify({ jsonrpc: '2.0', id: r.mcp.id, error: { code, message: 'Internal error' } });
      status = 200;
    }
    await r.send(status, text, { code });
  }

  function methodNotFound(r: Reply, reason?: string): Promise<void> {
    const data: JsonObject = { method: clip(r.mcp.method ?? '') };
    if (reason !== undefined) data.reason = reason;
    return sendRpcError(
      r,
      ErrorCode.MethodNotFound,
      'Method not found',
      data,
      statusForCode(ErrorCode.MethodNotFound, r.era),
    );
  }

  /** Turn whatever a handler threw into the JSON-RPC error it is sent as. */
  function sendThrown(r: Reply, err: unknown): Promise<void> {
    const method = r.mcp.method ?? '';
    const era = r.era;
    if (isMcpErrorLike(err)) {
      const code = sendableCode(err.code, era);
      if (code === ErrorCode.InternalError && err.code !== ErrorCode.InternalError) {
        logFailure(
          `dispatch: handler for ${clip(method)} threw code ${err.code}, which this revision forbids; sent -32603`,
          err,
        );
        return sendRpcError(r, code, 'Internal error', undefined, 200);
      }
      let status =
        typeof err.status === 'number' &&
        Number.isInteger(err.status) &&
        err.status >= 200 &&
        err.status <= 599
          ? err.status
          : statusForCode(code, era);
      // A legacy 404 means "session gone" to a 2025-11-25 client: never send one for a handler error.
      if (era === 'legacy' && status === 404) status = 200;
      const message = typeof err.message === 'string' && err.message !== '' ? err.message : 'Error';
      return sendRpcError(r, code, message, err.data, status);
    }
    logFailure(`dispatch: handler for ${clip(method)} failed`, err, { method: clip(method) });
    return sendRpcError(r, ErrorCode.InternalError, 'Internal error', undefined, 200);
  }

  /** -32021 for the capabilities a request needs but did not declare. */
  function missingCapabilityError(required: Record<string, JsonObject>): McpError {
    const names = Object.keys(required);
    return new McpError(
      ErrorCode.MissingRequiredClientCapability,
      `This request needs the client ${names.length > 1 ? 'capabilities' : 'capability'} ${names.join(', ')}, which it did not declare`,
      { requiredCapabilities: required },
      400,
    );
  }

  /** The per-request pieces shared by every round of one request. */
  interface Call {
    reply: Reply;
    ac: LazyAbort;
    clientCapabilities: JsonObject;
    principal: string;
  }

  function openCall(reply: Reply): Call {
    const { res, mcp, era, locals } = reply;
    const ac = new LazyAbort();
    // Closing the stream (or the connection, for a JSON answer) before the answer is written cancels the call.
    const onClose = (): void => {
      if (!res.writableFinished) ac.abort(new Error('The client went away'));
    };
    // `on`, not `once`: a response closes once, and once() would wrap the listener in another closure.
    res.on('close', onClose);
    let clientCapabilities: JsonObject = {};
    if (era === 'modern') {
      const c = mcp.meta?.[META.clientCapabilities];
      if (isObj(c)) clientCapabilities = c;
    } else if (mcp.method === 'initialize' && isObj(mcp.params?.capabilities)) {
      clientCapabilities = mcp.params.capabilities as JsonObject;
    }
    return { reply, ac, clientCapabilities, principal: principalKey(locals.principal) };
  }

  interface RoundInput {
    params: JsonObject;
    inputResponses?: Readonly<Record<string, JsonObject>>;
    requestState?: unknown;
  }

  /**
   * A handler's context. A class, not an object literal: `signal` and the request's functions (`progress`, `log`,
   * `requireClientCapabilities`, `inputRequired`, `charge`) are getters on the prototype, so a request whose
   * handler never reads them makes no function for them, and the AbortController is made only on demand.
   *
   * Each getter returns a new function that does not depend on `this` (`const { progress } = ctx` works), and
   * nothing of the request is stored on the object as a function. That is for memory: while the context held
   * closures over the request (as it did), V8 kept every request's objects alive through young-generation
   * collections as long as it was still compiling the code, the first second or so of load. Each request, its
   * response and its answer were promoted to the old generation (~7 MB in the first second), and V8 grew its young
   * generation to the 16 MB maximum at once. Measured on the full stack at a moderate 1,000 requests per second:
   * 105–107 MB of RSS before, 80 MB after (bench/NOTES.md).
   *
   * The members a handler does not get are undefined: `progress`, `log` and `requireClientCapabilities` for a
   * notification; `inputRequired`, `inputResponses` and `requestState` outside `tools/call`, `prompts/get` and
   * `resources/read` (the last two also when the request carries none).
   */
  class HandlerContext implements CallContext {
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

    constructor(call: Call, round: RoundInput) {
      const { reply, clientCapabilities } = call;
      const { req, mcp, era, locals } = reply;
      this.#call = call;
      this.#round = INPUT_REQUIRED_ROUTES.has(routeKey(mcp.method ?? '')) ? round : undefined;
      this.method = mcp.method ?? '';
      this.id = mcp.id;
      this.era = era;
      this.version =
        era === 'modern' || mcp.version !== undefined
          ? mcp.version
          : mcp.method === 'initialize'
            ? negotiateVersion(mcp.params?.protocolVersion, legacyVersions)
            : // 2025-11-25 transport: a request without the header is assumed to speak 2025-03-26.
              DEFAULT_LEGACY_VERSION;
      this.principal = locals.principal;
      this.meta = mcp.meta;
      this.clientCapabilities = clientCapabilities;
      this.locals = locals;
      this.req = req;
      this.logger = logger;
    }

    get signal(): AbortSignal {
      return this.#call.ac.signal;
    }

    get charge(): (ms: number) => void {
      const locals = this.locals;
      return (ms) => {
        if (typeof ms !== 'number' || !Number.isFinite(ms)) return;
        locals.chargedMs = (locals.chargedMs ?? 0) + ms;
      };
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
      const call = this.#call;
      return (request) => buildInputRequired(call, round.params, request);
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
      const wanted = this.era === 'modern' ? this.meta?.[META.logLevel] : legacyLogLevel;
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
      if (this.era !== 'modern') return;
      if (!isObj(required))
        throw new TypeError('requireClientCapabilities(): expected an object of capabilities');
      const missing = missingCapabilities(required, this.clientCapabilities);
      if (missing) throw missingCapabilityError(missing);
    }
  }

  function buildInputRequired(
    call: Call,
    params: JsonObject,
    request: InputRequiredRequest,
  ): InputRequiredResult {
    if (request === null || typeof request !== 'object')
      throw new TypeError('inputRequired(): expected { inputRequests?, state? }');
    const out: InputRequiredResult = { resultType: 'input_required' };
    if (request.inputRequests !== undefined) out.inputRequests = request.inputRequests;
    if (request.state !== undefined || request.inputRequests === undefined) {
      let state: unknown;
      try {
        // A plain JSON copy: what is signed is exactly what comes back.
        state = request.state === undefined ? undefined : JSON.parse(JSON.stringify(request.state));
      } catch {
        throw new TypeError('inputRequired(): state must be JSON data');
      }
      out.requestState = signRequestState(
        state,
        { principal: call.principal, method: call.reply.mcp.method ?? '', digest: paramsDigest(params) },
        stateKeys[0]!,
        Date.now() + stateTtlMs,
      );
    }
    const check = checkInputRequired(out, call.reply.era === 'modern' ? call.clientCapabilities : undefined);
    if (!check.ok) {
      if (check.reason === 'missing_capability') throw missingCapabilityError(check.requiredCapabilities);
      throw new TypeError(`inputRequired(): ${check.message}`);
    }
    return out;
  }

  /**
   * Read a round's MRTR members (`inputResponses`, `requestState`) on the three methods that allow them. Throws
   * -32602 for a malformed `inputResponses` or a `requestState` that fails verification.
   */
  function readRound(call: Call, params: JsonObject): RoundInput {
    const method = call.reply.mcp.method ?? '';
    if (!INPUT_REQUIRED_ROUTES.has(routeKey(method))) return { params };
    const out: RoundInput = { params };
    const ir = readInputResponses(params.inputResponses, Object.hasOwn(params, 'inputResponses'));
    if (!ir.ok) throw new McpError(ErrorCode.InvalidParams, ir.message);
    if (ir.present) out.inputResponses = Object.freeze(ir.responses);
    if (Object.hasOwn(params, 'requestState')) {
      const v = verifyRequestState(
        params.requestState,
        { principal: call.principal, method, digest: paramsDigest(params) },
        stateKeys,
        Date.now(),
      );
      if (!v.ok) {
        logWarn('dispatch: requestState refused', { method: clip(method), reason: v.reason });
        throw new McpError(
          ErrorCode.InvalidParams,
          v.reason === 'expired'
            ? 'Invalid params: requestState has expired; send the request again without it'
            : 'Invalid params: requestState failed verification',
          { reason: v.reason === 'expired' ? 'expired' : 'invalid' },
        );
      }
      out.requestState = v.state;
    }
    return out;
  }

  // --- Legacy server-to-client requests (2025-11-25: sent on the request's SSE answer) ----------------------

  interface PendingInput {
    principal: string;
    settle(message: { result?: unknown; error?: unknown }): void;
    fail(err: Error): void;
  }
  const pendingInputs = new Map<string, PendingInput>();

  /** Send the input requests of one round as JSON-RPC requests on the SSE answer and await every answer. */
  async function askClient(call: Call, value: InputRequiredResult): Promise<Record<string, JsonObject>> {
    const { reply, ac } = call;
    const requests = Object.entries(value.inputRequests ?? {});
    const answers: Record<string, JsonObject> = {};
    if (requests.length === 0) return answers;
    if (!reply.canStream()) {
      throw new McpError(
        ErrorCode.InternalError,
        'This request needs input from the client, which a 2025-11-25 client receives on a text/event-stream answer; the request does not accept one',
      );
    }
    await Promise.all(
      requests.map(
        ([key, request]) =>
          new Promise<void>((resolve, reject) => {
            const id = INPUT_ID_PREFIX + randomUUID();
            const cleanup = (): void => {
              pendingInputs.delete(id);
              clearTimeout(timer);
              ac.signal.removeEventListener('abort', onAbort);
            };
            const fail = (err: Error): void => {
              cleanup();
              reject(err);
            };
            const onAbort = (): void => fail(new Error('The client went away'));
            const timer = setTimeout(
              () =>
                fail(
                  new McpError(
                    ErrorCode.InternalError,
                    'Timed out waiting for the client to answer an input request',
                    {
                      inputRequest: clip(key),
                    },
                  ),
                ),
              inputTimeoutMs,
            );
            timer.unref?.();
            ac.signal.addEventListener('abort', onAbort, { once: true });
            pendingInputs.set(id, {
              principal: call.principal,
              fail,
              settle(message) {
                cleanup();
                if (isObj(message.result)) {
                  answers[key] = message.result;
                  resolve();
                  return;
                }
                const e = isObj(message.error) ? message.error : {};
                reject(
                  new McpError(ErrorCode.InternalError, 'The client could not answer an input request', {
                    inputRequest: clip(key),
                    error: {
                      code: typeof e.code === 'number' ? e.code : undefined,
                      message: typeof e.message === 'string' ? clip(e.message, 256) : undefined,
                    },
                  }),
                );
              },
            });
            const msg: JsonObject = { jsonrpc: '2.0', id, method: request.method };
            msg.params = isObj(request.params) ? request.params : {};
            // Critical: a request that cannot be sent would leave the call waiting for an answer that never comes.
            if (!reply.push(msg, true)) fail(new Error('The input request could not be sent'));
          }),
      ),
    );
    return answers;
  }

  /** A posted JSON-RPC response: the answer to one of this server's legacy input requests, or ignored. */
  function deliverAnswer(req: IncomingMessage, mcp: McpRequest): void {
    const id = mcp.id;
    if (typeof id !== 'string' || !id.startsWith(INPUT_ID_PREFIX)) return;
    const p = pendingInputs.get(id);
    // Only the caller who was asked may answer (ids are unguessable, this is defence in depth).
    if (!p || p.principal !== principalKey(localsOf(req).principal)) return;
    const m = mcp.message;
    p.settle(m.kind === 'response' ? { result: m.result } : m.kind === 'error' ? { error: m.error } : {});
  }

  // --- subscriptions/listen -------------------------------------------------------------------------------------

  interface Listener {
    end(): Promise<void>;
  }
  const listeners = new Set<Listener>();
  let shuttingDown = false;

  async function handleListen(reply: Reply, params: JsonObject): Promise<void> {
    const { res, mcp, locals } = reply;
    const id = mcp.id!;
    const filter = params.notifications;
    if (!isObj(filter)) {
      return sendRpcError(
        reply,
        ErrorCode.InvalidParams,
        'Invalid params: "notifications" must be an object (a subscription filter)',
        undefined,
        200,
      );
    }
    if (!reply.canStream()) {
      return sendRpcError(
        reply,
        ErrorCode.InvalidRequest,
        'subscriptions/listen answers with a text/event-stream; the request must accept it',
        undefined,
        400,
      );
    }
    if (shuttingDown || listeners.size >= maxListen) {
      return sendRpcError(
        reply,
        ErrorCode.Unavailable,
        shuttingDown ? 'The server is shutting down' : 'Too many subscriptions are open; retry later',
        undefined,
        503,
      );
    }
    // The honoured subset: only types the client asked for and the server has a feed for.
    const honoured: JsonObject = {};
    if (filter.toolsListChanged === true && feeds.tools && hasCapability(capabilities, 'tools.listChanged'))
      honoured.toolsListChanged = true;
    if (
      filter.promptsListChanged === true &&
      feeds.prompts &&
      hasCapability(capabilities, 'prompts.listChanged')
    )
      honoured.promptsListChanged = true;
    if (
      filter.resourcesListChanged === true &&
      feeds.resources &&
      hasCapability(capabilities, 'resources.listChanged')
    )
      honoured.resourcesListChanged = true;
    const uris = new Set<string>();
    if (
      Array.isArray(filter.resourceSubscriptions) &&
      feeds.resources &&
      hasCapability(capabilities, 'resources.subscribe')
    ) {
      for (const u of filter.resourceSubscriptions) {
        if (typeof u === 'string' && u !== '' && uris.size < MAX_RESOURCE_SUBSCRIPTIONS) uris.add(u);
      }
      honoured.resourceSubscriptions = [...uris];
    }
    const tag = (p: JsonObject = {}): JsonObject => ({ ...p, _meta: { [META.subscriptionId]: id } });
    locals.response = { resultType: 'stream' };
    // An open subscription is waiting, not work: nothing is charged to the caller's budget for its lifetime
    // (limits() would otherwise charge the stream's wall-clock time when it closes).
    locals.chargedMs ??= 0;
    // The acknowledgement is queued before any listener exists: it is always the first message of the stream.
    reply.push(
      {
        jsonrpc: '2.0',
        method: 'notifications/subscriptions/acknowledged',
        params: tag({ notifications: honoured }),
      },
      true,
    );

    // Bursts (a registry registering ten tools) become one list_changed per type per tick.
    const due = new Set<string>();
    let scheduled = false;
    const guard = (): void => {
      if (reply.buffered() > MAX_LISTEN_BUFFER) {
        // A client that does not read is dropped rather than buffered without bound.
        logWarn('dispatch: a subscriptions/listen client stopped reading; its stream was closed', {});
        res.destroy();
      }
    };
    const flush = (): void => {
      scheduled = false;
      for (const method of due) reply.notify(method, tag());
      due.clear();
      guard();
    };
    const listChanged = (method: string): void => {
      due.add(method);
      if (!scheduled) {
        scheduled = true;
        queueMicrotask(flush);
      }
    };
    const unsubscribe: (() => void)[] = [];
    const on = (feed: ChangeFeed | undefined, fn: (e: ChangeEvent) => void): void => {
      if (feed) unsubscribe.push(feed.subscribe(fn));
    };
    if (honoured.toolsListChanged)
      on(feeds.tools, (e) => e.type === 'listChanged' && listChanged('notifications/tools/list_changed'));
    if (honoured.promptsListChanged)
      on(feeds.prompts, (e) => e.type === 'listChanged' && listChanged('notifications/prompts/list_changed'));
    if (honoured.resourcesListChanged || uris.size > 0) {
      on(feeds.resources, (e) => {
        if (e.type === 'listChanged') {
          if (honoured.resourcesListChanged) listChanged('notifications/resources/list_changed');
        } else if (uris.has(e.uri)) {
          reply.notify('notifications/resources/updated', tag({ uri: e.uri }));
          guard();
        }
      });
    }
    const keepAlive =
      keepAliveMs > 0
        ? setInterval(() => {
            reply.comment('keep-alive');
          }, keepAliveMs)
        : undefined;
    keepAlive?.unref?.();

    let ended = false;
    const stop = (): void => {
      if (ended) return;
      ended = true;
      for (const u of unsubscribe) u();
      if (keepAlive) clearInterval(keepAlive);
      listeners.delete(listener);
    };
    const listener: Listener = {
      async end() {
        if (ended) return;
        stop();
        // Graceful end (2026-07-28 subscriptions): the completion result, then the stream closes.
        const encoded = encodeResult(
          { _meta: { [META.subscriptionId]: id } },
          { era: 'modern', method: mcp.method ?? '', serverInfo },
        );
        if (!encoded.ok) return void res.end();
        let value: unknown = encoded.result;
        try {
          value = await applyOutbound(locals, value, mcp.method ?? '', 'result');
        } catch (err) {
          logFailure('dispatch: the subscriptions/listen result could not be transformed', err);
        }
        await reply.send(200, JSON.stringify({ jsonrpc: '2.0', id, result: value }), {
          resultType: 'complete',
        });
      },
    };
    listeners.add(listener);
    res.once('close', stop);
    if (res.destroyed) stop();
  }

  // --- Requests --------------------------------------------------------------------------------------------------

  async function handleNotification(
    req: IncomingMessage,
    res: ServerResponse,
    mcp: McpRequest,
    era: Era,
  ): Promise<void> {
    const locals = localsOf(req);
    locals.response = {};
    write(res, 202, undefined, versionHeader(mcp, undefined));
    const method = mcp.method ?? '';
    if (!isRoutableMethod(method)) return;
    const [ns, member] = routeOf(method);
    if (ns !== 'notifications') return;
    const bound = table.get(ns)?.get(member);
    if (!bound) return;
    try {
      const reply = makeReply(req, res, mcp, era);
      await bound.fn.call(
        bound.obj,
        mcp.params ?? {},
        new HandlerContext(openCall(reply), { params: mcp.params ?? {} }),
      );
    } catch (err) {
      logFailure(`dispatch: notification handler for ${clip(method)} failed`, err, { method: clip(method) });
    }
  }

  /**
   * One round of a request: its MRTR members are read from the params (client retries) or given (legacy rounds),
   * the tool name is resolved through the request's tool filter views, and the handler is called.
   */
  function invoke(
    call: Call,
    bound: Bound | undefined,
    builtin: HandlerMethod | undefined,
    views: ReturnType<typeof toolViewsOf>,
    key: string,
    params: JsonObject,
    given?: RoundInput,
  ): unknown {
    const round = given ?? readRound(call, params);
    const ctx = new HandlerContext(call, round);
    if (views.length > 0 && key === TOOLS_CALL) {
      const name = params.name;
      const actual = typeof name === 'string' ? resolveThrough(name, views) : undefined;
      if (typeof name === 'string' && actual === undefined) {
        throw new McpError(ErrorCode.InvalidParams, `Unknown tool: "${clip(name, 64)}"`, { tool: name });
      }
      if (actual !== undefined && actual !== name) params = { ...params, name: actual };
    }
    return bound ? bound.fn.call(bound.obj, params, ctx) : builtin!(params, ctx);
  }

  /** A handler's input-required result, checked; anything wrong with it is a server bug (or -32021). */
  function checkedInputRequired(v: InputRequiredResult, call: Call, key: string): InputRequiredResult {
    const { mcp, era } = call.reply;
    const method = mcp.method ?? '';
    if (!INPUT_REQUIRED_ROUTES.has(key)) {
      throw new Error(
        `${method}: the handler returned an input-required result, which only tools/call, prompts/get and resources/read may`,
      );
    }
    const check = checkInputRequired(v, era === 'modern' ? call.clientCapabilities : undefined);
    if (!check.ok) {
      if (check.reason === 'missing_capability') throw missingCapabilityError(check.requiredCapabilities);
      throw new Error(`${method}: the handler returned a malformed input-required result: ${check.message}`);
    }
    return v;
  }

  function handleRequest(
    req: IncomingMessage,
    res: ServerResponse,
    mcp: McpRequest,
    era: Era,
  ): void | Promise<void> {
    const method = mcp.method!;
    if (era === 'legacy' && legacyVersions.length === 0) {
      // A modern-only server names what it speaks, as 2026-07-28 asks of an answer to `initialize`.
      const requested =
        typeof mcp.params?.protocolVersion === 'string'
          ? mcp.params.protocolVersion
          : (mcp.headers.protocolVersion ?? '');
      const r = refusal('unsupported_protocol_version', {
        message: 'This server speaks only the modern protocol revisions',
        data: { supported: [...modernVersions], requested },
      });
      return sendRefusal(req, res, r, F);
    }
    const reply = makeReply(req, res, mcp, era);
    const locals = reply.locals;
    if (!isRoutableMethod(method)) return methodNotFound(reply);
    if (era === 'modern' && isRemovedInModern(method))
      return methodNotFound(reply, 'Removed in protocol revision 2026-07-28');
    // Indexed, not destructured: destructuring an array runs its iterator.
    const route = routeOf(method);
    const ns = route[0];
    const member = route[1];
    if (ns === 'notifications') return methodNotFound(reply);
    const key = routeKey(method);
    if (key === LISTEN) {
      // The modern revision's subscription pattern; a 2025-11-25 client has no such method.
      if (era !== 'modern') return methodNotFound(reply);
      return handleListen(reply, mcp.params ?? {});
    }
    const cap = requiredCapability(method);
    if (cap !== undefined && !hasCapability(capabilities, cap)) {
      return methodNotFound(reply, `Server does not support the ${cap} capability`);
    }
    const bound = table.get(ns)?.get(member);
    const builtin = bound ? undefined : builtins.get(bkey(ns, member));
    if (!bound && !builtin) return methodNotFound(reply);
    // logging/setLevel and resources/(un)subscribe are legacy methods of their capabilities (gated above); the
    // built-in ping and initialize are legacy-only (removed methods were refused above for modern requests).

    const views = ns === 'tools' && !viewsAware ? toolViewsOf(locals) : [];
    const original: JsonObject = mcp.params ?? {};
    const call = openCall(reply);
    // Until an answer is written this is the outcome: whoever reads the record when the client goes away (audit and
    // metrics listen for the response's close, possibly before the handler notices) sees a cancelled call.
    locals.response = { resultType: 'cancelled' };
    let value: unknown;
    try {
      value = invoke(call, bound, builtin, views, key, original);
    } catch (err) {
      return failed(reply, call, err);
    }
    // The common case, a plain result from a synchronous handler with no tool filter: answered in this turn,
    // with no promise and no microtask.
    if (!isThenable(value) && !isInputRequiredResult(value) && views.length === 0) {
      try {
        value = applyOutbound(locals, value, method, 'result');
      } catch (err) {
        return failed(reply, call, err);
      }
      if (!isThenable(value)) return answer(reply, call, key, value);
      return Promise.resolve(value).then(
        (v) => answer(reply, call, key, v),
        (err: unknown) => failed(reply, call, err),
      );
    }
    const rounds = async (first: unknown): Promise<void> => {
      let value: unknown;
      try {
        value = await first;
        // Legacy: the same handler, served with real server-to-client requests on the SSE answer, round by round.
        // The state never leaves the process here, so it is handed back directly (after checking it is ours).
        for (let round = 1; isInputRequiredResult(value); round++) {
          const ir = checkedInputRequired(value, call, key);
          if (era !== 'legacy') break;
          if (round > maxInputRounds) {
            throw new McpError(
              ErrorCode.InternalError,
              `The request needed more than ${maxInputRounds} rounds of client input`,
            );
          }
          let state: unknown;
          if (ir.requestState !== undefined) {
            const v = verifyRequestState(
              ir.requestState,
              { principal: call.principal, method, digest: paramsDigest(original) },
              stateKeys,
              Date.now(),
            );
            if (!v.ok) {
              throw new Error(
                `${method}: the handler returned a requestState not made by ctx.inputRequired()`,
              );
            }
            state = v.state;
          }
          const answers = await askClient(call, ir);
          const next: JsonObject = { ...original, inputResponses: answers };
          if (ir.requestState !== undefined) next.requestState = ir.requestState;
          const given: RoundInput = { params: next, inputResponses: Object.freeze(answers) };
          if (state !== undefined) given.requestState = state;
          value = await invoke(call, bound, builtin, views, key, next, given);
        }
        if (views.length > 0 && key === TOOLS_LIST && isObj(value) && Array.isArray(value.tools)) {
          const tools = exposeList(value.tools, views);
          if (!tools)
            throw new Error(
              'tools/list: a listed tool has no string name; the list is withheld (tool filter fails closed)',
            );
          value = { ...value, tools };
        }
        value = applyOutbound(locals, value, method, 'result');
        if (isThenable(value)) value = await value;
      } catch (err) {
        return failed(reply, call, err);
      }
      return answer(reply, call, key, value);
    };
    return rounds(value);
  }

  /** A handler's failure: nothing more for a cancelled call, else the error answer. */
  function failed(reply: Reply, call: Call, err: unknown): void | Promise<void> {
    if (call.ac.aborted) {
      reply.locals.response = { resultType: 'cancelled' };
      return;
    }
    return sendThrown(reply, err);
  }

  /** Encode and write a handler's (transformed) result. */
  function answer(reply: Reply, call: Call, key: string, value: unknown): void | Promise<void> {
    const { mcp, era, locals } = reply;
    const method = mcp.method!;
    if (call.ac.aborted) {
      locals.response = { resultType: 'cancelled' };
      return;
    }
    let encoded: EncodeTextResult;
    try {
      encoded = encodeResultText(value, { era, method, cache: cache.get(key), serverInfo, serverInfoJson });
    } catch (err) {
      logFailure(`dispatch: the result of ${clip(method)} is not serializable`, err, {
        method: clip(method),
      });
      return sendRpcError(reply, ErrorCode.InternalError, 'Internal error', undefined, 200);
    }
    if (!encoded.ok) {
      logFailure(`dispatch: ${encoded.message}`, undefined, { method: clip(method), reason: encoded.reason });
      return sendRpcError(reply, ErrorCode.InternalError, 'Internal error', undefined, 200);
    }
    // The envelope as text around the encoded result: the same bytes as stringifying the whole answer.
    const id = mcp.id === undefined ? '' : `"id":${JSON.stringify(mcp.id)},`;
    const text = `{"jsonrpc":"2.0",${id}"result":${encoded.text}}`;
    const record: { resultType: string; toolError?: boolean } = { resultType: encoded.resultType };
    if (key === TOOLS_CALL) record.toolError = encoded.isError;
    return reply.send(200, text, record);
  }

  function run(req: IncomingMessage, res: ServerResponse): void | Promise<void> {
    // Already parsed (by parse(), or another middleware): go on without waiting for a promise.
    const now = parsedNow(req);
    if (now === undefined) {
      return ensureParsed(req, res, F, body).then((mcp) => (mcp ? route(req, res, mcp) : undefined));
    }
    const mcp = admitParsed(req, res, now, F);
    if (!mcp) return;
    return route(req, res, mcp);
  }

  function route(req: IncomingMessage, res: ServerResponse, mcp: McpRequest): void | Promise<void> {
    const cls = classifyOnce(req, mcp, versions);
    if (!cls.ok) return sendRefusal(req, res, cls, F);
    switch (mcp.kind) {
      case 'response':
      case 'error':
        // A client answering a server request: legacy only (the modern revision has no server requests).
        if (isModernHeader(mcp.headers.protocolVersion)) {
          return sendRefusal(req, res, refusal('response_not_accepted'), F, { id: undefined });
        }
        localsOf(req).response = {};
        write(res, 202, undefined, versionHeader(mcp, undefined));
        return deliverAnswer(req, mcp);
      case 'notification':
        return handleNotification(req, res, mcp, cls.era);
      case 'request':
        return handleRequest(req, res, mcp, cls.era);
    }
  }

  const middleware = function mcpDispatch(
    req: IncomingMessage,
    res: ServerResponse,
    next: (err?: unknown) => void,
  ) {
    if (req.method !== 'POST') return next();
    let pending: void | Promise<void>;
    try {
      pending = run(req, res);
    } catch (err) {
      return sendInternalError(req, res, err, F, logger);
    }
    // A promise only when something waited (an async handler, a body still being read).
    if (pending) pending.catch((err: unknown) => sendInternalError(req, res, err, F, logger));
  };
  return Object.assign(middleware, {
    async close(): Promise<void> {
      shuttingDown = true;
      for (const p of [...pendingInputs.values()]) p.fail(new Error('The server is shutting down'));
      await Promise.all([...listeners].map((l) => l.end()));
    },
    stats() {
      return { listenStreams: listeners.size, pendingInputs: pendingInputs.size };
    },
  });
}

/**
 * An AbortController made only when something asks for its signal: building one costs a few microseconds, and
 * most handlers never look at `ctx.signal`. `aborted` is readable without making it.
 */
class LazyAbort {
  aborted = false;
  private reason: unknown;
  private controller: AbortController | undefined;

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.controller?.abort(reason);
  }
}

export type { CacheHint, Implementation, ServerCapabilities };
