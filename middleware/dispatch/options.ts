/**
 * dispatch()'s options, validated once into a frozen {@link DispatchConfig}: unknown names are refused, every
 * value is checked, and the handlers and capabilities are resolved into the route table the requests use.
 *
 * @see docs/middleware/dispatch.md
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type CacheHint, type Implementation, deepFreeze, isValidCacheHint } from '../../lib/encode.js';
import { LOG_LEVELS, type LogLevel } from '../../lib/meta.js';
import { MIN_STATE_KEY_BYTES } from '../../lib/mrtr.js';
import { CACHEABLE_METHODS, routeKey } from '../../lib/routing.js';
import type { Handlers, ServerCapabilities } from '../../core/contract.js';
import { type CancellationRelay, isCancellationRelay } from '../../core/change-feed.js';
import { type ClassifyRevisionOptions, versionOptions } from '../../core/versions.js';
import { type BodyOptions, resolveBodyOptions } from '../../core/parse-step.js';
import {
  badOption,
  boolOption,
  intOption,
  knownKeys,
  loggerOption,
  movedKeys,
  oneOf,
  optionsObject,
  stringOption,
} from '../../core/options.js';
import { stderrLogger } from '../../core/respond.js';
import type { Logger, Middleware } from '../../core/types.js';
import { type TaskStore, isTaskStore, memoryTaskStore } from '../../core/task-store.js';
import { type Feeds, feedsOf, resolveCapabilities } from './capabilities.js';
import type { TaskSettings } from './tasks.js';
import { type RouteTable, buildTable } from './route-table.js';
import { isJsonObject } from '../../lib/json.js';
import { TASKS_EXTENSION } from '../../lib/tasks.js';

/** The revisions served: the same object `classifyRevision()` and `checkHeaders()` take (`{ ...versions }`). */
export type DispatchVersionOptions = Omit<ClassifyRevisionOptions, 'logger'>;

/** The SSE answers: keep-alive comments, and the `subscriptions/listen` streams one dispatcher holds open. */
export interface DispatchStreamOptions {
  /**
   * Keep-alive comment interval on every SSE answer (a `subscriptions/listen` stream, and a request answered as
   * a stream: progress, log or input messages before its result), in ms; 0 turns it off. A `: keep-alive`
   * comment is written after each interval the stream lasts, so proxies with idle timeouts keep it open.
   * Default 15000.
   */
  keepAliveMs?: number;
  /** Most `subscriptions/listen` streams open at once on this dispatcher; more → 503. 0 refuses all. Default 1000. */
  maxListenStreams?: number;
  /**
   * Most `subscriptions/listen` streams one caller holds open on this dispatcher; more → 429 with
   * `data: {limit: 'listen_streams_per_principal', max}`. A caller is a principal's source and id (the same id
   * from an API key and from a token is two callers); requests without a principal are one caller together.
   * 0: no per-caller cap (only `maxListenStreams`). Default 10.
   */
  maxListenStreamsPerPrincipal?: number;
}

/** Legacy (2025-11-25) sessions: the signed `Mcp-Session-Id` minted at `initialize`. */
export interface DispatchSessionOptions {
  /**
   * How long a session id stays valid, in ms; a request carrying an expired one gets 404 and the client
   * initializes again. Signed with `inputRequests.requestStateKey`. Default 86400000 (24 hours).
   */
  ttlMs?: number;
}

/** Input-required results (MRTR): the signed `requestState` of both eras, and the legacy input rounds. */
export interface DispatchInputRequestOptions {
  /**
   * HMAC-SHA256 key(s) for MRTR `requestState`, each at least 32 bytes (a string is taken as UTF-8). With a list,
   * the first signs and all verify (key rotation). Default: a random key per dispatcher instance, so a state
   * only verifies on the process that issued it: give every replica the same key.
   */
  requestStateKey?: string | Uint8Array | readonly (string | Uint8Array)[];
  /** How long a signed `requestState` stays valid, in ms. Default 600000 (10 minutes). */
  requestStateTtlMs?: number;
  /** Legacy: how long to wait for the client to answer a server-to-client request, in ms. Default 300000. */
  inputTimeoutMs?: number;
  /** Legacy: most input rounds one request may take before it fails. Default 8. */
  maxInputRounds?: number;
}

/**
 * Legacy (2025-11-25) cancellation: a `notifications/cancelled {requestId}` from the principal (and
 * `Mcp-Session-Id`) of a call in flight stops it. Modern requests are cancelled by closing their stream.
 */
export interface DispatchCancellationOptions {
  /**
   * Most legacy calls in flight a cancellation can reach on this dispatcher; a call beyond it runs on and is
   * stopped only by its client going away. 0 turns legacy cancellation off. Default 10000.
   */
  maxInFlight?: number;
  /**
   * Passes cancellations between replicas: a cancellation naming no call of this replica is published, and one
   * another replica published stops the call it names here. A `redisChangeFeed()` is one (the same channel as
   * its announcements). Default: none (a cancellation reaches this replica's calls only).
   */
  relay?: CancellationRelay;
}

/**
 * Tasks (the `io.modelcontextprotocol/tasks` extension): given, `server/discover` advertises the extension and a
 * modern `tools/call` handler gets `ctx.tasks`; `tasks/get`, `tasks/update` and `tasks/cancel` are answered.
 */
export interface DispatchTaskOptions {
  /**
   * Where tasks live. Default: a `memoryTaskStore()` of this dispatcher (one replica). Give every replica the same
   * `redisTaskStore()` so that any of them answers for a task.
   */
  store?: TaskStore;
  /** How long a task is kept from its creation, in ms (its `ttlMs`); then it is purged. Default 3600000. */
  ttlMs?: number;
  /** The polling interval suggested to clients (`pollIntervalMs`), in ms. Default 1000. */
  pollIntervalMs?: number;
  /**
   * How long a running task's lease holds, in ms. The replica running the work renews it every third of this (and
   * looks for a cancel or answered input then); a task whose lease lapsed (its replica went away) is failed with
   * `task_worker_lost` by the next `tasks/get`. Default 15000.
   */
  leaseMs?: number;
  /** Live tasks (created, not yet purged) per caller; one more `tools/call` task → 429 `task_limit`. Default 100. */
  maxTasksPerPrincipal?: number;
  /**
   * Bytes of JSON of one caller's live tasks (results and input requests included). A task whose result would
   * exceed it ends `failed` (`task_too_large`). Default 4194304 (4 MiB).
   */
  maxBytesPerPrincipal?: number;
}

export interface DispatchOptions {
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
  /**
   * Serve requests that no authentication decided. Default `false`: a request reaches a handler only when an
   * auth middleware mounted before `dispatch()` decided on it (`req.locals.auth.outcome === 'ok'`, or a
   * `req.locals.principal` an authenticator of your own set); any other is refused 500 / -32603
   * `no_auth_decision`, and the misconfiguration is logged once. `true` says the server wants no
   * authentication (development, or a server only a trusted network reaches).
   */
  anonymous?: boolean;
  /** Cache hints per cacheable method (`tools/list`, …, `server/discover`). Default `{ttlMs: 0, cacheScope: 'private'}`. */
  cache?: Readonly<Partial<Record<string, CacheHint>>>;
  /**
   * The lowest level of `notifications/message` sent on legacy (2025-11-25) requests that carry no
   * `_meta["io.modelcontextprotocol/logLevel"]`. A legacy session's `logging/setLevel` cannot be remembered by a
   * stateless server (it is accepted and validated, nothing more), so this server-wide level stands in for it.
   * Default: none (legacy requests get no log notifications). Modern requests always follow their own `_meta`.
   */
  legacyLogLevel?: LogLevel;
  /** Where handler failures (with stacks) and server bugs are logged. Default: stderr. */
  logger?: Logger;
  /** The revisions served: `{ modernVersions, legacyVersions }`. Default: every revision mcpware speaks. */
  versions?: DispatchVersionOptions;
  /** The body's size limit and depth when dispatch() parses the request itself: `{ limit, maxDepth }`. */
  body?: BodyOptions;
  /** SSE answers and listen streams: `{ keepAliveMs, maxListenStreams, maxListenStreamsPerPrincipal }`. */
  streams?: DispatchStreamOptions;
  /** Legacy sessions: `{ ttlMs }`. */
  sessions?: DispatchSessionOptions;
  /** Input-required results: `{ requestStateKey, requestStateTtlMs, inputTimeoutMs, maxInputRounds }`. */
  inputRequests?: DispatchInputRequestOptions;
  /** Legacy `notifications/cancelled`: `{ maxInFlight, relay }`. */
  cancellation?: DispatchCancellationOptions;
  /**
   * Tasks: `{ store, ttlMs, pollIntervalMs, leaseMs, maxTasksPerPrincipal, maxBytesPerPrincipal }`. Default: none
   * (no tasks; the extension is not advertised and `tasks/*` answer -32601).
   */
  tasks?: DispatchTaskOptions;
}

/** The dispatcher middleware, with the controls a server needs at shutdown. */
export type DispatchMiddleware = Middleware & {
  /**
   * Graceful end (drain): readiness answers 503 from now on, new requests get 503 with `Retry-After`, and every
   * open `subscriptions/listen` stream gets its completion result and is closed. The calls in flight run on
   * (a legacy call's posted input answers still reach it) until they answer or `deadlineMs` (default 10000)
   * passes; then the calls still running are cancelled and answered 503, and pending legacy input requests
   * fail. Resolves when that is done; a second call returns the same drain.
   */
  close(options?: { deadlineMs?: number }): Promise<void>;
  /**
   * A readiness handler for the load balancer (`app.get('/readyz', mcp.readiness)`): 200
   * `{"status":"ready"}`, or 503 `{"status":"draining"}` once `close()` was called.
   */
  readiness(req: IncomingMessage, res: ServerResponse): void;
  /**
   * Open listen streams, the callers holding them, legacy input requests awaiting the client, calls in flight
   * and whether the dispatcher drains (for tests and health checks).
   */
  stats(): {
    listenStreams: number;
    listenPrincipals: number;
    pendingInputs: number;
    inFlight: number;
    draining: boolean;
    /** Task works running on this replica. */
    tasksRunning: number;
    /** Task ids the listen streams of this replica watch (`notifications.taskIds`). */
    listenTaskIds: number;
  };
};

/** The validated options of one dispatcher. */
export interface DispatchConfig {
  readonly modernVersions: readonly string[];
  readonly legacyVersions: readonly string[];
  /** Every revision spoken, modern first. */
  readonly supportedVersions: readonly string[];
  readonly body: ReturnType<typeof resolveBodyOptions>;
  readonly logger: Logger;
  /** A private frozen copy. */
  readonly serverInfo: Readonly<Implementation>;
  readonly instructions: string | undefined;
  /** Configured cache hints by route key. */
  readonly cache: ReadonlyMap<string, CacheHint>;
  readonly legacyLogLevel: LogLevel | undefined;
  /** The first signs, all verify. */
  readonly stateKeys: readonly Uint8Array[];
  readonly stateTtlMs: number;
  /** How long a legacy session id stays valid. */
  readonly sessionTtlMs: number;
  readonly keepAliveMs: number;
  /** Serve requests no authentication decided (see the option). */
  readonly anonymous: boolean;
  readonly maxListenStreams: number;
  readonly maxListenStreamsPerPrincipal: number;
  readonly inputTimeoutMs: number;
  readonly maxInputRounds: number;
  /** Legacy calls a cancellation can reach (0: off). */
  readonly maxCancellable: number;
  readonly cancelRelay: CancellationRelay | undefined;
  readonly routes: RouteTable;
  /** The change feeds of the list-bearing handler objects. */
  readonly feeds: Feeds;
  /** What the server declares (a private copy). */
  readonly capabilities: ServerCapabilities;
  /** Tasks, when configured. */
  readonly tasks: TaskSettings | undefined;
}

export const DISPATCH = 'dispatch';

const KNOWN: readonly (keyof DispatchOptions)[] = [
  'handlers',
  'serverInfo',
  'capabilities',
  'instructions',
  'anonymous',
  'cache',
  'legacyLogLevel',
  'logger',
  'versions',
  'body',
  'streams',
  'sessions',
  'inputRequests',
  'cancellation',
  'tasks',
];
const VERSIONS: readonly (keyof DispatchVersionOptions)[] = ['modernVersions', 'legacyVersions'];
const BODY: readonly (keyof BodyOptions)[] = ['limit', 'maxDepth'];
const STREAMS: readonly (keyof DispatchStreamOptions)[] = [
  'keepAliveMs',
  'maxListenStreams',
  'maxListenStreamsPerPrincipal',
];
const SESSIONS: readonly (keyof DispatchSessionOptions)[] = ['ttlMs'];
const INPUT_REQUESTS: readonly (keyof DispatchInputRequestOptions)[] = [
  'requestStateKey',
  'requestStateTtlMs',
  'inputTimeoutMs',
  'maxInputRounds',
];
const CANCELLATION: readonly (keyof DispatchCancellationOptions)[] = ['maxInFlight', 'relay'];
const TASKS: readonly (keyof DispatchTaskOptions)[] = [
  'store',
  'ttlMs',
  'pollIntervalMs',
  'leaseMs',
  'maxTasksPerPrincipal',
  'maxBytesPerPrincipal',
];

/** The flat names of the options that now sit in a group, and where each is given. */
export const MOVED: ReadonlyMap<string, string> = new Map([
  ...VERSIONS.map((k) => [k, `versions.${k}`] as const),
  ...BODY.map((k) => [k, `body.${k}`] as const),
  ...STREAMS.map((k) => [k, `streams.${k}`] as const),
  ['listenKeepAliveMs', 'streams.keepAliveMs'],
  ...INPUT_REQUESTS.map((k) => [k, `inputRequests.${k}`] as const),
]);

/** One group of options: an object when given (`{}` when not), with no name outside `known`. */
function group<T extends object>(value: T | undefined, name: string, known: readonly string[]): T {
  const g = optionsObject(DISPATCH, value, `option "${name}"`);
  knownKeys(DISPATCH, g, known, `${name}.`);
  return g;
}

/** Validate every option of dispatch(); throws a TypeError naming the option. */
export function resolveDispatchOptions(options: DispatchOptions): DispatchConfig {
  const o = optionsObject(DISPATCH, options);
  movedKeys(DISPATCH, o, MOVED);
  knownKeys(DISPATCH, o, KNOWN);
  const versions = versionsOf(o.versions);
  const streams = group(o.streams, 'streams', STREAMS);
  const inputs = group(o.inputRequests, 'inputRequests', INPUT_REQUESTS);
  const sessions = group(o.sessions, 'sessions', SESSIONS);
  const body = resolveBodyOptions(DISPATCH, group(o.body, 'body', BODY));
  const cancellation = group(o.cancellation, 'cancellation', CANCELLATION);
  if (cancellation.relay !== undefined && !isCancellationRelay(cancellation.relay))
    throw badOption(
      DISPATCH,
      'cancellation.relay',
      typeof cancellation.relay === 'object' ? '[object]' : cancellation.relay,
      'a cancellation relay ({ publishCancellation, onCancellation }), e.g. a redisChangeFeed()',
    );
  const logger = loggerOption(DISPATCH, o.logger, stderrLogger);
  const serverInfo = checkServerInfo(o.serverInfo);
  const instructions = stringOption(DISPATCH, 'instructions', o.instructions, undefined, true);
  const cache = checkCacheOption(o.cache);
  const legacyLogLevel =
    o.legacyLogLevel === undefined
      ? undefined
      : oneOf(DISPATCH, 'legacyLogLevel', o.legacyLogLevel, LOG_LEVELS, 'info');
  const stateKeys = checkStateKeys(inputs.requestStateKey);
  const int = <G extends object>(
    g: G,
    name: string,
    key: keyof G & string,
    d: number,
    min: number,
    max: number,
  ) => intOption(DISPATCH, `${name}.${key}`, g[key], d, min, max);
  const config: DispatchConfig = {
    ...versions,
    supportedVersions: [...versions.modernVersions, ...versions.legacyVersions],
    body,
    logger,
    serverInfo,
    instructions,
    cache,
    legacyLogLevel,
    stateKeys,
    stateTtlMs: int(inputs, 'inputRequests', 'requestStateTtlMs', 600_000, 1_000, 7 * 86_400_000),
    sessionTtlMs: int(sessions, 'sessions', 'ttlMs', 86_400_000, 1, 30 * 86_400_000),
    keepAliveMs: int(streams, 'streams', 'keepAliveMs', 15_000, 0, 3_600_000),
    anonymous: boolOption(DISPATCH, 'anonymous', o.anonymous, false),
    maxListenStreams: int(streams, 'streams', 'maxListenStreams', 1000, 0, 1_000_000),
    maxListenStreamsPerPrincipal: int(streams, 'streams', 'maxListenStreamsPerPrincipal', 10, 0, 1_000_000),
    inputTimeoutMs: int(inputs, 'inputRequests', 'inputTimeoutMs', 300_000, 1, 86_400_000),
    maxInputRounds: int(inputs, 'inputRequests', 'maxInputRounds', 8, 1, 1000),
    maxCancellable: int(cancellation, 'cancellation', 'maxInFlight', 10_000, 0, 1_000_000),
    cancelRelay: cancellation.relay,
    ...routesOf(o),
    tasks: tasksOf(o.tasks, logger),
  };
  const ext = config.capabilities.extensions;
  if (config.tasks === undefined && isJsonObject(ext) && Object.hasOwn(ext, TASKS_EXTENSION))
    // Declaring the extension is a promise to answer tasks/get, update and cancel: only the tasks option keeps it.
    throw badOption(
      DISPATCH,
      'capabilities.extensions',
      TASKS_EXTENSION,
      'without the tasks extension unless the tasks option is given (which advertises it)',
    );
  return Object.freeze(config);
}

/** The `tasks` group, validated; undefined when not given. */
function tasksOf(value: DispatchTaskOptions | undefined, logger: Logger): TaskSettings | undefined {
  if (value === undefined) return undefined;
  const g = group(value, 'tasks', TASKS);
  if (g.store !== undefined && !isTaskStore(g.store))
    throw badOption(
      DISPATCH,
      'tasks.store',
      typeof g.store === 'object' ? '[object]' : g.store,
      'a task store ({ create, get, replace }), e.g. memoryTaskStore() or redisTaskStore()',
    );
  const int = (key: keyof DispatchTaskOptions & string, d: number, min: number, max: number): number =>
    intOption(DISPATCH, `tasks.${key}`, g[key], d, min, max);
  const ttlMs = int('ttlMs', 3_600_000, 1_000, 30 * 86_400_000);
  const pollIntervalMs = int('pollIntervalMs', 1000, 1, 3_600_000);
  const leaseMs = int('leaseMs', 15_000, 30, 3_600_000);
  const maxTasks = int('maxTasksPerPrincipal', 100, 1, 1_000_000);
  const maxBytes = int('maxBytesPerPrincipal', 4 * 1024 * 1024, 1024, 1024 * 1024 * 1024);
  return Object.freeze({
    store: g.store ?? memoryTaskStore(),
    ownStore: g.store === undefined,
    ttlMs,
    pollIntervalMs,
    leaseMs,
    bounds: Object.freeze({ maxTasks, maxBytes }),
    logger,
  });
}

/** The `versions` group: both lists, validated, and at least one revision between them. */
function versionsOf(value: DispatchVersionOptions | undefined): {
  modernVersions: readonly string[];
  legacyVersions: readonly string[];
} {
  const { modernVersions, legacyVersions } = versionOptions(
    `${DISPATCH}`,
    group(value, 'versions', VERSIONS),
    'versions.',
  );
  if (modernVersions!.length + legacyVersions!.length === 0) {
    throw badOption(
      DISPATCH,
      'versions.modernVersions',
      modernVersions,
      'non-empty (or versions.legacyVersions non-empty): the server must speak some revision',
    );
  }
  return { modernVersions: modernVersions!, legacyVersions: legacyVersions! };
}

/** The route table, the change feeds and the capabilities they allow. */
function routesOf(o: DispatchOptions): Pick<DispatchConfig, 'routes' | 'feeds' | 'capabilities'> {
  const routes = buildTable(o.handlers);
  const feeds = feedsOf(o.handlers);
  const capabilities = resolveCapabilities(o.capabilities, (ns, m) => routes.has(ns, m), feeds);
  return { routes, feeds, capabilities };
}

function checkStateKeys(v: unknown): Uint8Array[] {
  if (v === undefined) return [randomBytes(32)];
  const list = Array.isArray(v) ? (v as unknown[]) : [v];
  if (list.length === 0)
    throw badOption(DISPATCH, 'inputRequests.requestStateKey', v, 'a key or a non-empty list of keys');
  return list.map((k, i) => {
    const bytes =
      typeof k === 'string' ? Buffer.from(k, 'utf8') : k instanceof Uint8Array ? Buffer.from(k) : undefined;
    if (!bytes || bytes.length < MIN_STATE_KEY_BYTES) {
      throw badOption(
        DISPATCH,
        Array.isArray(v) ? `inputRequests.requestStateKey[${i}]` : 'inputRequests.requestStateKey',
        // Never echo key material into an error message: describe it.
        `(a ${typeof k === 'string' ? 'string' : k instanceof Uint8Array ? 'Uint8Array' : typeof k} of ${bytes?.length ?? 0} bytes)`,
        `a string or Uint8Array of at least ${MIN_STATE_KEY_BYTES} bytes`,
      );
    }
    return bytes;
  });
}

function checkServerInfo(v: unknown): Readonly<Implementation> {
  if (
    !isJsonObject(v) ||
    typeof v.name !== 'string' ||
    v.name === '' ||
    typeof v.version !== 'string' ||
    v.version === ''
  ) {
    throw badOption(DISPATCH, 'serverInfo', v, 'an object with non-empty string name and version');
  }
  try {
    return deepFreeze(structuredClone(v)) as Implementation;
  } catch {
    throw badOption(DISPATCH, 'serverInfo', v, 'plain JSON data');
  }
}

function checkCacheOption(v: unknown): Map<string, CacheHint> {
  const out = new Map<string, CacheHint>();
  if (v === undefined) return out;
  if (!isJsonObject(v))
    throw badOption(DISPATCH, 'cache', v, 'an object mapping cacheable methods to { ttlMs, cacheScope }');
  for (const method of Object.keys(v)) {
    if (!CACHEABLE_METHODS.includes(method)) {
      throw badOption(
        DISPATCH,
        'cache',
        method,
        `keyed by cacheable methods (${CACHEABLE_METHODS.join(', ')})`,
      );
    }
    const h = v[method];
    if (!isJsonObject(h) || !isValidCacheHint(h.ttlMs, h.cacheScope)) {
      throw badOption(
        DISPATCH,
        `cache.${method}`,
        h,
        "{ ttlMs: integer ≥ 0, cacheScope: 'public' | 'private' }",
      );
    }
    out.set(routeKey(method), {
      ttlMs: h.ttlMs as number,
      cacheScope: h.cacheScope as CacheHint['cacheScope'],
    });
  }
  return out;
}
