/**
 * `dispatch()`: the last middleware. It routes each JSON-RPC request to a handler object's method and writes
 * the answer.
 *
 * - Routing: `tools/list` → `handlers.tools.list(params, ctx)`, `resources/templates/list` →
 *   `handlers.resources.templatesList(params, ctx)`, a method without `/` → `handlers[method]` (a function).
 * - Notifications → 202 with an empty body (a `notifications.<member>` handler, if any, runs after the 202).
 *   Posted JSON-RPC responses → 202 in the legacy era, 400 / -32600 when the request's
 *   `MCP-Protocol-Version` header is modern.
 * - Unknown method, a method of an undeclared capability, or (modern era) one the 2026-07-28 revision removed →
 *   -32601: HTTP 404 for a modern request, 200 for a legacy one.
 * - Handler errors: an McpError keeps its code and data; anything else is -32603 "Internal error" (detail to the
 *   log). Both stay in-band on HTTP 200 except -32601 (404 modern), the 400-class codes (-32700, -32600,
 *   -32020, -32021, -32022) and the HTTP-shaped application codes (401, 403, 429, 503).
 * - Results: modern ones get `resultType`, cache hints on cacheable methods, and the server's `serverInfo` in
 *   `_meta`; legacy ones are sent plain. `req.locals.outbound` transforms run on every result first.
 * - Built in (overridable): legacy `initialize`, `ping` and `logging/setLevel`, and `server/discover` in both eras.
 * - Streaming: a handler's `ctx.progress()`/`ctx.log()` notifications turn the answer into a request-scoped SSE
 *   stream (when the client accepts `text/event-stream`) that ends with the response.
 *
 * It works alone (it parses and classifies lazily, like every mcpware middleware) and after the transport
 * middlewares. It does not check headers: mount `checkHeaders()` before it.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type Era, ErrorCode, McpError, refusal } from '../lib/errors.js';
import type { JsonObject } from '../lib/jsonrpc.js';
import { LOG_LEVELS, META, isLogLevel, logLevelRank } from '../lib/meta.js';
import type { McpRequest } from '../lib/request.js';
import {
  CACHEABLE_METHODS,
  type CacheHint,
  type Implementation,
  encodeResult,
  hasCapability,
  isRemovedInModern,
  isRoutableMethod,
  requiredCapability,
  routeKey,
  routeOf,
  sendableCode,
  statusForCode,
} from '../lib/results.js';
import { DEFAULT_LEGACY_VERSION, isModernClaim, negotiateVersion } from '../lib/revisions.js';
import { type ClassifyRevisionOptions, versionOptions } from './classifyRevision.js';
import { type BodyOptions, classifyOnce, ensureParsed, resolveBodyOptions } from './context.js';
import {
  type CallContext,
  HANDLER_METHODS,
  type HandlerMethod,
  type Handlers,
  type ServerCapabilities,
} from './handlers.js';
import { badOption, localsOf, sendInternalError, sendRefusal, stderrLogger } from './respond.js';
import { TOOL_VIEWS_APPLIED, exposeList, resolveThrough, toolViewsOf } from './toolFilter.js';
import type { Logger, Middleware, RequestLocals } from './types.js';

export interface DispatchOptions extends ClassifyRevisionOptions, BodyOptions {
  /** Namespace → handler object (`tools`, `resources`, `prompts`, `completion`, …); root methods as functions. */
  handlers: Handlers;
  /** Who the server is: `{name, version}` (plus `title`, `description`, `websiteUrl`, `icons`). */
  serverInfo: Implementation;
  /**
   * What the server declares, returned exactly by `initialize` and `server/discover`. Every declared capability
   * must have its handlers (checked here). Default: derived from the handlers (`tools` when `tools.list` and
   * `tools.call` exist, `resources` for `list` + `read`, `prompts` for `list` + `get`, `completions` for
   * `completion.complete`; `logging` is never derived).
   */
  capabilities?: ServerCapabilities;
  /** Instructions for the model, returned by `initialize` and `server/discover`. */
  instructions?: string;
  /** Cache hints per cacheable method (`tools/list`, …, `server/discover`). Default `{ttlMs: 0, cacheScope: 'private'}`. */
  cache?: Readonly<Partial<Record<string, CacheHint>>>;
}

const F = 'dispatch';
const TOOLS_CALL = routeKey('tools/call');
const TOOLS_LIST = routeKey('tools/list');

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
    for (const m of members) add(ns, m, { fn: obj[m] as HandlerMethod, obj });
    if (ns === 'tools' && obj[TOOL_VIEWS_APPLIED] === true) viewsAware = true;
  }
  return { table, viewsAware };
}

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
  'resources.subscribe': [
    ['resources', 'subscribe'],
    ['resources', 'unsubscribe'],
  ],
};

function resolveCapabilities(given: unknown, has: (ns: string, m: string) => boolean): ServerCapabilities {
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
    if (caps.resources && has('resources', 'subscribe') && has('resources', 'unsubscribe'))
      caps.resources = { subscribe: true };
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
  for (const key of ['tools', 'resources', 'prompts']) {
    const c = given[key];
    // A listChanged promise needs a channel for the notification (subscriptions/listen), which is not built yet.
    if (isObj(c) && c.listChanged === true) {
      throw badOption(
        F,
        `capabilities.${key}.listChanged`,
        true,
        'false or absent (list-changed notifications are not supported yet)',
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
  try {
    return structuredClone(given) as ServerCapabilities;
  } catch {
    throw badOption(F, 'capabilities', given, 'plain JSON data');
  }
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

export function dispatch(options: DispatchOptions): Middleware {
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
  if (options.instructions !== undefined && typeof options.instructions !== 'string') {
    throw badOption(F, 'instructions', options.instructions, 'a string');
  }
  const instructions = options.instructions;
  const cache = checkCacheOption(options.cache);
  const { table, viewsAware } = buildTable(options.handlers);
  const has = (ns: string, m: string): boolean => table.get(ns)?.has(m) === true;
  const capabilities = resolveCapabilities(options.capabilities, has);
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
    // validated only. Modern clients send the level per request in _meta.
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
    res.statusCode = status;
    if (headers) for (const k of Object.keys(headers)) res.setHeader(k, headers[k]!);
    if (text === undefined) {
      res.setHeader('Content-Length', 0);
      res.end();
      return;
    }
    res.setHeader('Content-Type', 'application/json');
    res.setHeader('Content-Length', Buffer.byteLength(text));
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

  async function applyOutbound(
    locals: RequestLocals,
    value: unknown,
    method: string,
    kind: 'result' | 'notification',
  ): Promise<unknown> {
    const transforms = locals.outbound;
    if (!Array.isArray(transforms)) return value;
    for (const t of transforms) {
      if (typeof t !== 'function') continue;
      value = t(value, { method, kind });
      if (
        value !== null &&
        typeof value === 'object' &&
        typeof (value as { then?: unknown }).then === 'function'
      )
        value = await value;
    }
    return value;
  }

  /**
   * The answer to one request. It is one JSON body, unless the handler sends a notification (progress, log)
   * while the client accepts `text/event-stream`: the answer then becomes a request-scoped SSE stream carrying
   * the notifications in order and, last, the response (2026-07-28 and 2025-11-25 Streamable HTTP alike).
   */
  interface Reply {
    req: IncomingMessage;
    res: ServerResponse;
    mcp: McpRequest;
    era: Era;
    locals: RequestLocals;
    /** Queue a notification; false when it cannot be delivered (no SSE accepted, answered, client gone). */
    notify(method: string, params: JsonObject): boolean;
    /** Write the final response (JSON, or the last SSE event) after the queued notifications. */
    send(status: number, text: string, record: RequestLocals['response']): Promise<void>;
  }

  function acceptsEventStream(req: IncomingMessage): boolean {
    const a = req.headers.accept;
    if (typeof a !== 'string') return false;
    return a.split(',').some((part) => {
      const semi = part.indexOf(';');
      return (semi < 0 ? part : part.slice(0, semi)).trim().toLowerCase() === 'text/event-stream';
    });
  }

  function makeReply(req: IncomingMessage, res: ServerResponse, mcp: McpRequest, era: Era): Reply {
    const locals = localsOf(req);
    const canStream = acceptsEventStream(req);
    let streaming = false;
    let closed = false;
    let queue: Promise<void> = Promise.resolve();
    const event = (text: string): string => `event: message\ndata: ${text}\n\n`;
    const startStream = (): void => {
      streaming = true;
      res.statusCode = 200;
      res.setHeader('Content-Type', 'text/event-stream');
      res.setHeader('Cache-Control', 'no-cache');
      res.setHeader('X-Accel-Buffering', 'no');
      const vh = versionHeader(mcp, era);
      if (vh) for (const k of Object.keys(vh)) res.setHeader(k, vh[k]!);
      res.flushHeaders();
    };
    return {
      req,
      res,
      mcp,
      era,
      locals,
      notify(method, params) {
        if (closed || !canStream || res.destroyed || (res.headersSent && !streaming)) return false;
        queue = queue.then(async () => {
          if (res.destroyed || res.writableEnded) return;
          let text: string;
          try {
            const msg = await applyOutbound(
              locals,
              { jsonrpc: '2.0', method, params },
              mcp.method ?? '',
              'notification',
            );
            text = JSON.stringify(msg);
          } catch (err) {
            // Fail closed: a notification that could not be transformed (redaction) or encoded is not sent.
            logFailure(
              `dispatch: a ${clip(method)} notification of ${clip(mcp.method ?? '')} was dropped`,
              err,
            );
            return;
          }
          if (!streaming) startStream();
          res.write(event(text));
        });
        return true;
      },
      async send(status, text, record) {
        closed = true;
        await queue;
        if (streaming) {
          // The ResponseRecord contract: `stream` marks an SSE answer (an error keeps its code).
          locals.response = { ...record, resultType: 'stream' };
          if (!res.destroyed && !res.writableEnded) res.end(event(text));
          return;
        }
        locals.response = record;
        write(res, status, text, status < 300 ? versionHeader(mcp, era) : undefined);
      },
    };
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

  function makeContext(r: Reply): CallContext {
    const { req, res, mcp, era, locals } = r;
    const ac = new AbortController();
    const onClose = (): void => {
      if (!res.writableFinished) ac.abort(new Error('The client went away'));
    };
    res.once('close', onClose);
    let clientCapabilities: JsonObject = {};
    if (era === 'modern') {
      const c = mcp.meta?.[META.clientCapabilities];
      if (isObj(c)) clientCapabilities = c;
    } else if (mcp.method === 'initialize' && isObj(mcp.params?.capabilities)) {
      clientCapabilities = mcp.params.capabilities as JsonObject;
    }
    const ctx: CallContext = {
      method: mcp.method ?? '',
      id: mcp.id,
      era,
      version:
        era === 'modern' || mcp.version !== undefined
          ? mcp.version
          : mcp.method === 'initialize'
            ? negotiateVersion(mcp.params?.protocolVersion, legacyVersions)
            : // 2025-11-25 transport: a request without the header is assumed to speak 2025-03-26.
              DEFAULT_LEGACY_VERSION,
      principal: locals.principal,
      meta: mcp.meta,
      clientCapabilities,
      locals,
      req,
      signal: ac.signal,
      charge(ms: number): void {
        if (typeof ms !== 'number' || !Number.isFinite(ms)) return;
        locals.chargedMs = (locals.chargedMs ?? 0) + ms;
      },
      logger,
    };
    if (mcp.kind !== 'request') return ctx;
    // Progress only when the client asked for it (a progressToken), increasing, and while the request runs.
    const token = mcp.meta?.[META.progressToken];
    let last = -Infinity;
    ctx.progress = (progress, total, message) => {
      if ((typeof token !== 'string' && typeof token !== 'number') || ac.signal.aborted) return false;
      if (typeof progress !== 'number' || !Number.isFinite(progress) || progress <= last) return false;
      last = progress;
      const params: JsonObject = { progressToken: token, progress };
      if (typeof total === 'number' && Number.isFinite(total)) params.total = total;
      if (typeof message === 'string') params.message = message;
      return r.notify('notifications/progress', params);
    };
    // Logs only for a modern request that named a level in its _meta (2026-07-28: MUST NOT otherwise). A legacy
    // session's logging/setLevel cannot be remembered statelessly, so legacy requests get no log notifications.
    const wanted = era === 'modern' ? mcp.meta?.[META.logLevel] : undefined;
    ctx.log = (level, data, loggerName) => {
      if (
        !isLogLevel(wanted) ||
        !isLogLevel(level) ||
        logLevelRank(level) < logLevelRank(wanted) ||
        ac.signal.aborted
      )
        return false;
      const params: JsonObject = { level, data };
      if (typeof loggerName === 'string') params.logger = loggerName;
      return r.notify('notifications/message', params);
    };
    return ctx;
  }

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
      await bound.fn.call(bound.obj, mcp.params ?? {}, makeContext(makeReply(req, res, mcp, era)));
    } catch (err) {
      logFailure(`dispatch: notification handler for ${clip(method)} failed`, err, { method: clip(method) });
    }
  }

  async function handleRequest(
    req: IncomingMessage,
    res: ServerResponse,
    mcp: McpRequest,
    era: Era,
  ): Promise<void> {
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
    const [ns, member] = routeOf(method);
    if (ns === 'notifications') return methodNotFound(reply);
    const cap = requiredCapability(method);
    if (cap !== undefined && !hasCapability(capabilities, cap)) {
      return methodNotFound(reply, `Server does not support the ${cap} capability`);
    }
    const bound = table.get(ns)?.get(member);
    const builtin = bound ? undefined : builtins.get(bkey(ns, member));
    if (!bound && !builtin) return methodNotFound(reply);
    // logging/setLevel is a legacy method of the logging capability (gated above); the built-in ping and
    // initialize are legacy-only (removed methods were refused above for modern requests).

    const key = routeKey(method);
    const views = ns === 'tools' && !viewsAware ? toolViewsOf(locals) : [];
    let params: JsonObject = mcp.params ?? {};
    const ctx = makeContext(reply);
    let value: unknown;
    try {
      if (views.length > 0 && key === TOOLS_CALL) {
        const name = params.name;
        const actual = typeof name === 'string' ? resolveThrough(name, views) : undefined;
        if (typeof name === 'string' && actual === undefined) {
          throw new McpError(ErrorCode.InvalidParams, `Unknown tool: "${clip(name, 64)}"`, { tool: name });
        }
        if (actual !== undefined && actual !== name) params = { ...params, name: actual };
      }
      value = bound ? await bound.fn.call(bound.obj, params, ctx) : await builtin!(params, ctx);
      if (views.length > 0 && key === TOOLS_LIST && isObj(value) && Array.isArray(value.tools)) {
        const tools = exposeList(value.tools, views);
        if (!tools)
          throw new Error(
            'tools/list: a listed tool has no string name; the list is withheld (tool filter fails closed)',
          );
        value = { ...value, tools };
      }
      value = await applyOutbound(locals, value, method, 'result');
    } catch (err) {
      if (ctx.signal.aborted) {
        locals.response = { resultType: 'cancelled' };
        return;
      }
      return sendThrown(reply, err);
    }
    if (ctx.signal.aborted) {
      locals.response = { resultType: 'cancelled' };
      return;
    }
    const encoded = encodeResult(value, { era, method, cache: cache.get(key), serverInfo });
    if (!encoded.ok) {
      logFailure(`dispatch: ${encoded.message}`, undefined, { method: clip(method), reason: encoded.reason });
      return sendRpcError(reply, ErrorCode.InternalError, 'Internal error', undefined, 200);
    }
    let text: string;
    try {
      text = JSON.stringify({ jsonrpc: '2.0', id: mcp.id, result: encoded.result });
    } catch (err) {
      logFailure(`dispatch: the result of ${clip(method)} is not serializable`, err, {
        method: clip(method),
      });
      return sendRpcError(reply, ErrorCode.InternalError, 'Internal error', undefined, 200);
    }
    const record: { resultType: string; toolError?: boolean } = { resultType: encoded.resultType };
    if (key === TOOLS_CALL) record.toolError = encoded.result.isError === true;
    await reply.send(200, text, record);
  }

  async function run(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const mcp = await ensureParsed(req, res, F, body);
    if (!mcp) return;
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
        return write(res, 202, undefined, versionHeader(mcp, undefined));
      case 'notification':
        return handleNotification(req, res, mcp, cls.era);
      case 'request':
        return handleRequest(req, res, mcp, cls.era);
    }
  }

  return function mcpDispatch(req, res, next) {
    if (req.method !== 'POST') return next();
    run(req, res).catch((err: unknown) => sendInternalError(req, res, err, F, logger));
  };
}

export type { CacheHint, Implementation, ServerCapabilities };
