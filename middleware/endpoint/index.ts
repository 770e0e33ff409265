/**
 * `mcpEndpoint(options)`: the recommended stack from one options object, as one middleware. It mounts, in this
 * order: otel (when asked for), audit, metrics, guardOrigin, methodGuard, authentication, the limiter's gate, rejectBatch, parse,
 * limits, classifyRevision, checkHeaders, redact, toolFilter, and dispatch (or a `backend` such as `sdk()` or
 * `proxy()` in its place), so that no order mistake is left to make: redaction
 * applies to what the dispatcher sends, the limiter keys on an authenticated principal (an unauthenticated
 * caller gets 401, never 429), a caller over its minute is refused before its body is read, and the body is
 * read by parse(), under its limit, after authentication.
 *
 * It works wherever `compose()` does: `app.use('/mcp', endpoint)` in Express 4 or 5 and Connect, or
 * `http.createServer(endpoint)` on bare node:http (405 for other methods, 404 for what falls through). Each
 * section of the options goes to its own factory, which checks it and names the option it refuses. The single
 * middlewares stay for those who compose their own stack.
 * @see docs/middleware/endpoint.md
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type AuditMiddleware, type AuditStats, audit } from '../audit/index.js';
import { apiKeyAuth } from '../api-key-auth/index.js';
import { type AuthenticateMiddleware, type Authenticator, authenticate } from '../auth/index.js';
import { type CheckHeadersOptions, checkHeaders } from '../check-headers/index.js';
import { classifyRevision } from '../classify-revision/index.js';
import { type Composed, compose } from '../compose/index.js';
import { type DispatchMiddleware, dispatch } from '../dispatch/index.js';
import { guardOrigin } from '../guard-origin/index.js';
import { chainHooks } from '../../core/limits-hooks.js';
import { log } from '../../core/log.js';
import { isJsonObject } from '../../lib/json.js';
import { type LimitsMiddleware, type LimitsOptions, type LimitsStats, limits } from '../limits/index.js';
import { methodGuard } from '../method-guard/index.js';
import { type MetricsMiddleware, metrics, metricsHandler } from '../metrics/index.js';
import { type OidcAuthMiddleware, oidcAuth } from '../oidc-auth/index.js';
import { parse } from '../parse/index.js';
import {
  type ProtectedResourceMetadataMiddleware,
  protectedResourceMetadata,
} from '../protected-resource-metadata/index.js';
import { type RedactMiddleware, redact } from '../redact/index.js';
import { rejectBatch } from '../reject-batch/index.js';
import { toolFilter } from '../tool-filter/index.js';
import type { Logger, Middleware } from '../../core/types.js';
import { type DrainedBackend, closeDeadline, drainedBackend } from './backend.js';
import {
  type AuthChoice,
  type EndpointConfig,
  FACTORY,
  type McpEndpointOptions,
  type Terminal,
  resolveEndpointOptions,
  withLogger,
} from './options.js';

export type { McpEndpointBackend } from './backend.js';
export type { McpEndpointAuthOptions, McpEndpointDispatchOptions, McpEndpointOptions } from './options.js';

/** The middlewares the endpoint is made of, in the order it runs them; absent when their section is off. */
export interface McpEndpointParts {
  /** `otel()`, when the `otel` option asks for it. */
  readonly otel?: Middleware;
  readonly audit?: AuditMiddleware;
  readonly metrics?: MetricsMiddleware;
  readonly guardOrigin: Middleware;
  readonly methodGuard: Middleware;
  readonly auth?: AuthenticateMiddleware;
  readonly rejectBatch: Middleware;
  readonly parse: Middleware;
  /** Runs twice: its `gate` right after `auth`, itself after `parse`. */
  readonly limits?: LimitsMiddleware;
  readonly classifyRevision: Middleware;
  readonly checkHeaders: Middleware;
  readonly redact?: RedactMiddleware;
  readonly toolFilter?: Middleware;
  /** The dispatcher, unless a `backend` answers in its place. */
  readonly dispatch?: DispatchMiddleware;
  /** The `backend` option (`sdk()`, `proxy()`), when given. */
  readonly backend?: Middleware;
}

/** What {@link McpEndpoint.stats} reports: the parts' own counts. */
export interface McpEndpointStats {
  /** The dispatcher's counts (absent with a `backend`). */
  dispatch?: ReturnType<DispatchMiddleware['stats']>;
  /** With a `backend`: the requests it is answering now. */
  backend?: { inFlight: number };
  limits?: LimitsStats;
  audit?: AuditStats;
}

/** The endpoint: a middleware (and node:http listener) with what its parts expose. */
export type McpEndpoint = Composed & {
  /** Settles when authentication can decide (OIDC discovery and keys); rejects when it failed to start. */
  readonly ready: Promise<void>;
  /**
   * Graceful end, the dispatcher's drain (`dispatch().close()`): readiness answers 503, new requests get 503,
   * listen streams complete, calls in flight answer up to `deadlineMs` (default 10000); OIDC start-up retries
   * stop. With a `backend`: readiness 503 and new requests 503 as well, the requests in flight are given up to
   * `deadlineMs`, then the backend's `close()` aborts what still runs.
   */
  close(options?: { deadlineMs?: number }): Promise<void>;
  /** The readiness handler for the load balancer (`app.get('/readyz', endpoint.readiness)`). */
  readonly readiness: DispatchMiddleware['readiness'];
  /** The dispatcher's, the limiter's and the audit's counts. */
  stats(): McpEndpointStats;
  /** `GET /metrics` for the metrics' registry, when metrics are on: mount it where the scraper looks. */
  readonly metricsHandler?: (
    req: IncomingMessage,
    res: ServerResponse,
    next?: (err?: unknown) => void,
  ) => void;
  /** The RFC 9728 document, when `auth.resourceMetadata` is given: mount it at the app's root. */
  readonly resourceMetadata?: ProtectedResourceMetadataMiddleware;
  readonly parts: McpEndpointParts;
};

/** The limits' hooks with the metrics' hooks in front of the application's own (both run). */
function limitsOptions(l: LimitsOptions, m: MetricsMiddleware | undefined): LimitsOptions {
  if (m === undefined) return l;
  const theirs: unknown = l.hooks;
  // Not an object: limits() refuses it, naming the option.
  if (theirs !== undefined && !isJsonObject(theirs)) return l;
  return { ...l, hooks: chainHooks(m.limiterHooks(), l.hooks ?? {}) };
}

/**
 * checkHeaders()'s `Mcp-Param-*` lookup: the tools handler's own (a ToolRegistry has one), if any. A backend's
 * server checks its own tools' headers.
 */
function paramHeadersOf(t: Terminal): Pick<CheckHeadersOptions, 'paramHeaders'> {
  if (t.kind !== 'dispatch') return {};
  const handlers = t.handlers;
  const tools = Object.hasOwn(handlers, 'tools') ? (handlers.tools as { paramHeaders?: unknown }) : undefined;
  const find = tools?.paramHeaders;
  if (typeof find !== 'function') return {};
  return {
    paramHeaders: (name, req) =>
      find.call(tools, name, req) as ReturnType<Required<CheckHeadersOptions>['paramHeaders']>,
  };
}

/** The dispatch section's versions, which classifyRevision() and checkHeaders() must share. */
function versionsOf(t: Terminal): { modernVersions?: string[]; legacyVersions?: string[] } {
  const out: { modernVersions?: string[]; legacyVersions?: string[] } = {};
  if (t.kind !== 'dispatch') return out;
  const v = t.dispatch.versions ?? {};
  if (v.modernVersions !== undefined) out.modernVersions = v.modernVersions as string[];
  if (v.legacyVersions !== undefined) out.legacyVersions = v.legacyVersions as string[];
  return out;
}

interface Auth {
  readonly middleware: AuthenticateMiddleware | undefined;
  readonly oidc: readonly OidcAuthMiddleware[];
  readonly resourceMetadata: ProtectedResourceMetadataMiddleware | undefined;
}

/**
 * The authentication chain. Built last of all parts: an OIDC authenticator starts its discovery when it is
 * made, so nothing after it may throw; if the chain itself cannot be made, the authenticators made are closed.
 */
function buildAuth(choice: AuthChoice, logger: Logger): Auth {
  const prm = choice.resourceMetadata && protectedResourceMetadata(choice.resourceMetadata);
  const challenge = { ...choice.challenge };
  const servers = choice.resourceMetadata?.authorizationServers ?? [];
  if (prm !== undefined && servers.length > 0 && challenge.resourceMetadataUrl === undefined) {
    challenge.resourceMetadataUrl = prm.url;
  }
  if (choice.insecure) {
    log(logger, 'warn', `${FACTORY}: no authentication (auth.insecureNoAuth): every request is served`, {});
    return { middleware: undefined, oidc: [], resourceMetadata: prm };
  }
  const members: Authenticator[] = [];
  if (choice.apiKeys !== undefined) members.push(apiKeyAuth(withLogger(choice.apiKeys, logger)));
  const oidc: OidcAuthMiddleware[] = [];
  try {
    for (const o of choice.oidc) oidc.push(oidcAuth(withLogger(o, logger)));
    members.push(...oidc);
    const middleware = authenticate(members, { ...challenge, logger });
    return { middleware, oidc, resourceMetadata: prm };
  } catch (e) {
    for (const o of oidc) o.close();
    throw e;
  }
}

/** The terminal part: the dispatcher over the handlers, or the backend behind its drain. */
function buildTerminal(
  c: EndpointConfig,
): { dispatch: DispatchMiddleware; backend?: undefined } | { dispatch?: undefined; backend: DrainedBackend } {
  const t = c.terminal;
  if (t.kind === 'backend') return { backend: drainedBackend(t.backend) };
  const { logger, body } = c;
  // Without authentication (auth.insecureNoAuth) the dispatcher is told so; else it refuses what auth did not decide.
  const anonymous = c.auth.insecure;
  return { dispatch: dispatch({ ...t.dispatch, body, handlers: t.handlers, logger, anonymous }) };
}

/** Every part, made from its section, in the order they run (authentication made last: see buildAuth). */
function buildParts(c: EndpointConfig): { parts: McpEndpointParts; auth: Auth; backend?: DrainedBackend } {
  const { logger, body } = c;
  const tracing = c.otel;
  const auditMw = c.audit && audit(c.audit);
  const metricsMw = c.metrics && metrics(c.metrics);
  const origin = guardOrigin(withLogger(c.origin, logger));
  const methods = methodGuard();
  const limiter = c.limits && limits(withLogger(limitsOptions(c.limits, metricsMw), logger));
  const redactor = c.redact && redact(c.redact);
  const batches = rejectBatch({ ...body, logger });
  const parser = parse({ ...body, logger });
  const filter = c.toolFilter && toolFilter(withLogger(c.toolFilter, logger));
  const terminal = buildTerminal(c);
  const versions = versionsOf(c.terminal);
  const parts = {
    otel: tracing,
    audit: auditMw,
    metrics: metricsMw,
    guardOrigin: origin,
    methodGuard: methods,
    auth: undefined as AuthenticateMiddleware | undefined,
    rejectBatch: batches,
    parse: parser,
    limits: limiter,
    classifyRevision: classifyRevision({ ...versions, logger }),
    checkHeaders: checkHeaders({ ...versions, ...paramHeadersOf(c.terminal), logger }),
    redact: redactor,
    toolFilter: filter,
    dispatch: terminal.dispatch,
    backend: terminal.backend?.middleware,
  };
  const auth = buildAuth(c.auth, logger);
  parts.auth = auth.middleware;
  return { parts, auth, backend: terminal.backend };
}

/**
 * A legacy session's GET stream, which dispatch() serves, goes through the parts that read no body: otel, audit,
 * metrics, Origin/Host, authentication, the limiter (a request of the minute, no slot), redaction, dispatch.
 */
function withSessionStreams(all: Composed, parts: McpEndpointParts, logger: Logger): Composed {
  const {
    otel: t,
    audit: a,
    metrics: m,
    guardOrigin: o,
    auth: au,
    limits: l,
    redact: r,
    dispatch: d,
  } = parts;
  const stream = compose(
    [t, a, m, o, au, l, r, d].filter((x): x is Middleware => x !== undefined),
    { logger },
  );
  return (req, res, next) =>
    (req.method === 'GET' && req.headers['mcp-session-id'] !== undefined ? stream : all)(req, res, next);
}

/**
 * The recommended stack as one middleware: otel (when asked for), audit, metrics, Origin/Host, method,
 * authentication, limits,
 * batch rejection, parse, revision and header checks, redaction and dispatch, in that order, each configured
 * from its section of the options. It is also a request listener for bare `node:http`; `parts` holds each
 * piece.
 * @param options - {@link McpEndpointOptions}
 * @see docs/middleware/endpoint.md
 * @example
 * ```ts
 * import { hashKey, mcpEndpoint } from 'mcpware';
 * import { ToolRegistry, ok } from 'mcpware/tools';
 *
 * const tools = new ToolRegistry({
 *   tools: [{ name: 'ping', inputSchema: { type: 'object' }, call: () => ok({ pong: true }) }],
 * });
 * const mcp = mcpEndpoint({
 *   auth: { apiKeys: { keys: [{ userId: 'dev', hash: hashKey('dev-key-change-me') }] } },
 *   handlers: { tools },
 *   dispatch: { serverInfo: { name: 'my-server', version: '1.0.0' } },
 *   origin: { allowedOrigins: [], allowedHosts: ['localhost:3000'] },
 * });
 * app.use('/mcp', mcp); // before any app-wide express.json()
 * ```
 */
export function mcpEndpoint(options: McpEndpointOptions): McpEndpoint {
  const config = resolveEndpointOptions(options);
  const { parts, auth, backend } = buildParts(config);
  const chain = [
    parts.otel,
    parts.audit,
    parts.metrics,
    parts.guardOrigin,
    parts.methodGuard,
    parts.auth,
    parts.limits?.gate,
    parts.rejectBatch,
    parts.parse,
    parts.limits,
    parts.classifyRevision,
    parts.checkHeaders,
    parts.redact,
    parts.toolFilter,
    parts.dispatch ?? parts.backend,
  ].filter((m): m is Middleware => m !== undefined);
  const all = compose(chain, { logger: config.logger });
  const composed = parts.dispatch ? withSessionStreams(all, parts, config.logger) : all;
  const exposed = {
    ready: parts.auth?.ready ?? Promise.resolve(),
    async close(options?: { deadlineMs?: number }): Promise<void> {
      const deadlineMs = backend === undefined ? undefined : closeDeadline(options);
      for (const o of auth.oidc) o.close();
      if (backend !== undefined) await backend.close(deadlineMs!);
      else await parts.dispatch!.close(options);
    },
    readiness: backend?.readiness ?? parts.dispatch!.readiness,
    stats(): McpEndpointStats {
      const s: McpEndpointStats = backend
        ? { backend: { inFlight: backend.inFlight } }
        : { dispatch: parts.dispatch!.stats() };
      if (parts.limits) s.limits = parts.limits.stats();
      if (parts.audit) s.audit = parts.audit.stats();
      return s;
    },
    parts: Object.freeze(parts),
    ...(parts.metrics ? { metricsHandler: metricsHandler(parts.metrics.registry) } : {}),
    ...(auth.resourceMetadata ? { resourceMetadata: auth.resourceMetadata } : {}),
  };
  return Object.assign(composed, exposed);
}
