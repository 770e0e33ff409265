/**
 * `subscriptions/listen` (2026-07-28): a long-lived SSE answer carrying list-changed and resource-updated
 * notifications from the handlers' change feeds. The rules it keeps:
 *
 * - Only what the client asked for and the server has a feed and a capability for is honoured, and the
 *   acknowledgement naming that subset is always the first message of the stream.
 * - Every notification carries the subscription id (the listen request's id) in `_meta`.
 * - Bursts become one list_changed per type per tick; a client that stops reading is dropped.
 * - One caller (by principal source and id; every anonymous caller together) holds at most `maxPerPrincipal`
 *   streams (429), so the server-wide cap (503) is never one caller's to fill.
 * - `closeAll()` ends every stream gracefully with its completion result, and refuses new ones (503).
 * - With tasks, `taskIds` are watched for the caller's own tasks only (task-notify.ts), and the acknowledgement
 *   waits for their lookup.
 *
 * @see docs/guides/subscriptions.md
 */
import { ErrorCode, refusal } from '../../lib/errors.js';
import type { JsonObject } from '../../lib/jsonrpc.js';
import { META } from '../../lib/meta.js';
import { encodeResult } from '../../lib/encode.js';
import { hasCapability } from '../../lib/routing.js';
import type { ServerCapabilities } from '../../core/contract.js';
import type { ChangeEvent, ChangeFeed } from '../../core/change-feed.js';
import { errorMeta, log } from '../../core/log.js';
import { releaseParsed } from '../../core/parse-step.js';
import { principalKey } from '../../lib/principal.js';
import { type RequestTrace, traceOf } from '../../core/trace.js';
import type { Logger } from '../../core/types.js';
import type { Feeds } from './capabilities.js';
import { applyOutbound } from '../../core/outbound.js';
import type { Reply } from './reply.js';
import { type RpcError, internalError, sendRpcError } from './rpc-errors.js';
import { DISPATCH, type DispatchConfig } from './options.js';
import { isJsonObject } from '../../lib/json.js';
import { type TaskNotifier, type TaskWatch, requestedTaskIds, taskIdsRefusal } from './task-notify.js';

export interface ListenRouterOptions {
  feeds: Feeds;
  capabilities: ServerCapabilities;
  maxStreams: number;
  /** Most open streams of one caller (see `principalKey`); 0: no per-caller cap. */
  maxPerPrincipal: number;
  logger: Logger;
  serverInfo: DispatchConfig['serverInfo'];
  /** The tasks' status notifications, when the dispatcher has tasks (`notifications.taskIds`). */
  tasks?: TaskNotifier | undefined;
}

export interface ListenRouter {
  /** Answer one `subscriptions/listen` request. */
  serve(reply: Reply, params: JsonObject): void | Promise<void>;
  /** End every open stream with its completion result; refuse new ones from now on. */
  closeAll(): Promise<void>;
  /**
   * Count another stream of `caller` (a legacy session's GET stream) against the same caps, ended by `end` at
   * `closeAll()`: the refusal when there is no room, else the function that releases it.
   */
  hold(caller: string, end: () => Promise<void>): RpcError | (() => void);
  readonly openCount: number;
  /** Callers holding at least one open stream. */
  readonly principalCount: number;
}

/** `data.limit` of the 429 for a caller at its own cap, and the refusal's detail for audit. */
const PER_PRINCIPAL_LIMIT = 'listen_streams_per_principal';
/** A listen stream whose client reads slower than this many buffered bytes is dropped. */
const MAX_LISTEN_BUFFER = 1024 * 1024;
/** Most URIs one listen request may subscribe to. */
const MAX_RESOURCE_SUBSCRIPTIONS = 1000;
/** Longest URI in `resourceSubscriptions`, in UTF-16 code units; a longer one refuses the request. */
export const MAX_SUBSCRIPTION_URI_LENGTH = 2048;
/** Most UTF-16 code units of all the `resourceSubscriptions` URIs together; more refuses the request. */
export const MAX_SUBSCRIPTION_FILTER_LENGTH = 128 * 1024;
/** Longest string id of a listen request (the subscription id every notification carries). */
export const MAX_SUBSCRIPTION_ID_LENGTH = 1024;
/** Notifications of one stream recorded as events of its span; the rest are counted only. */
export const MAX_NOTIFICATION_EVENTS = 128;

/** The honoured subset of a subscription filter: what the client asked for that the server can deliver. */
export function honouredOf(
  filter: JsonObject,
  feeds: Feeds,
  capabilities: ServerCapabilities,
): { honoured: JsonObject; uris: Set<string> } {
  const honoured: JsonObject = {};
  for (const kind of ['tools', 'prompts', 'resources'] as const) {
    const flag = `${kind}ListChanged`;
    if (filter[flag] === true && feeds[kind] && hasCapability(capabilities, `${kind}.listChanged`))
      honoured[flag] = true;
  }
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
  return { honoured, uris };
}

export function createListenRouter(options: ListenRouterOptions): ListenRouter {
  const { logger } = options;
  const open = new OpenStreams();
  let shuttingDown = false;
  const refuse = (reply: Reply, refused: RpcError): void | Promise<void> => {
    if (refused.status === 429) {
      reply.locals.refusal = {
        reason: 'rate_limited',
        code: refused.code,
        status: refused.status,
        by: DISPATCH,
        detail: PER_PRINCIPAL_LIMIT,
      };
    }
    return sendRpcError(reply, refused, logger);
  };
  /** Look the task ids up first: the acknowledgement names the ones watched. */
  const watchThenOpen = async (reply: Reply, params: JsonObject, caller: string, ids: string[]) => {
    const watch = options.tasks!.watch(caller, ids);
    let acked: string[];
    try {
      acked = await watch.acked;
    } catch (err) {
      watch.stop();
      log(logger, 'error', 'dispatch: the task store failed while a listen stream looked its tasks up', {
        error: errorMeta(err),
      });
      return sendRpcError(reply, internalError(), logger);
    }
    // The client may have gone, or the room or the server too, while the lookup ran.
    const refused = reply.res.destroyed ? undefined : capacityRefusal(options, open, caller, shuttingDown);
    if (reply.res.destroyed || refused) {
      watch.stop();
      return refused && refuse(reply, refused);
    }
    openStream(options, reply, params, open, caller, { watch, acked });
  };
  return {
    serve(reply, params) {
      const caller = principalKey(reply.locals.principal);
      const refused =
        refusalOf(reply, params, options.tasks !== undefined) ??
        capacityRefusal(options, open, caller, shuttingDown);
      if (refused) return refuse(reply, refused);
      const ids = options.tasks && requestedTaskIds(params.notifications as JsonObject);
      if (ids !== undefined) return watchThenOpen(reply, params, caller, ids);
      openStream(options, reply, params, open, caller);
    },
    hold(caller, end) {
      const refused = capacityRefusal(options, open, caller, shuttingDown);
      if (refused) return refused;
      open.add(caller, end);
      return () => open.delete(caller, end);
    },
    async closeAll() {
      shuttingDown = true;
      await Promise.all([...open.ends].map((end) => end()));
    },
    get openCount() {
      return open.ends.size;
    },
    get principalCount() {
      return open.callers;
    },
  };
}

/**
 * The open streams: each one's graceful end, and how many each caller holds. A caller has an entry only while it
 * holds a stream, so the map never outgrows the open streams.
 */
class OpenStreams {
  readonly ends = new Set<() => Promise<void>>();
  private readonly perCaller = new Map<string, number>();

  held(caller: string): number {
    return this.perCaller.get(caller) ?? 0;
  }

  get callers(): number {
    return this.perCaller.size;
  }

  add(caller: string, end: () => Promise<void>): void {
    this.ends.add(end);
    this.perCaller.set(caller, this.held(caller) + 1);
  }

  delete(caller: string, end: () => Promise<void>): void {
    if (!this.ends.delete(end)) return;
    const left = this.held(caller) - 1;
    if (left > 0) this.perCaller.set(caller, left);
    else this.perCaller.delete(caller);
  }
}

/**
 * Why there is no room for one more stream of `caller`: shutting down or the server-wide cap (503), or the
 * caller's own cap (429, the cap in `data`), checked before the server-wide one so that a caller at its cap is
 * told so even when the server is full.
 */
function capacityRefusal(
  options: ListenRouterOptions,
  open: OpenStreams,
  caller: string,
  shuttingDown: boolean,
): RpcError | undefined {
  const { maxStreams, maxPerPrincipal } = options;
  if (shuttingDown)
    return { code: ErrorCode.Unavailable, message: 'The server is shutting down', status: 503 };
  if (maxPerPrincipal > 0 && open.held(caller) >= maxPerPrincipal) {
    const r = refusal('rate_limited', {
      message: 'Too many subscriptions are open for this caller; close one first',
      data: { limit: PER_PRINCIPAL_LIMIT, max: maxPerPrincipal },
    });
    return { code: r.code, message: r.message, data: r.data, status: r.status };
  }
  if (open.ends.size >= maxStreams) {
    return {
      code: ErrorCode.Unavailable,
      message: 'Too many subscriptions are open; retry later',
      status: 503,
    };
  }
  return undefined;
}

/** Why a listen request cannot be served, if it cannot (`tasks`: the dispatcher has tasks, `taskIds` count). */
function refusalOf(reply: Reply, params: JsonObject, tasks: boolean): RpcError | undefined {
  if (!isJsonObject(params.notifications)) {
    return {
      code: ErrorCode.InvalidParams,
      message: 'Invalid params: "notifications" must be an object (a subscription filter)',
      status: 200,
    };
  }
  if (tasks) {
    const caps = reply.mcp.meta?.[META.clientCapabilities];
    const refused = taskIdsRefusal(params.notifications, isJsonObject(caps) ? caps : {});
    if (refused) return refused;
  }
  const tooLarge = boundRefusal(reply.mcp.id, params.notifications);
  if (tooLarge) {
    const { code, status, data } = tooLarge;
    const detail = (data as { limit: string }).limit;
    reply.locals.refusal = { reason: 'subscription_too_large', code, status, by: DISPATCH, detail };
    return tooLarge;
  }
  if (!reply.canStream()) {
    return {
      code: ErrorCode.InvalidRequest,
      message: 'subscriptions/listen answers with a text/event-stream; the request must accept it',
      status: 400,
    };
  }
  return undefined;
}

/**
 * What a stream keeps for its lifetime is bounded: each URI, all the URIs together and the id (which every
 * notification carries). Over a bound → -32602 `subscription_too_large`, the bound in `data`.
 */
function boundRefusal(id: unknown, filter: JsonObject): RpcError | undefined {
  const over = (limit: string, max: number): RpcError => {
    const r = refusal('subscription_too_large', { data: { limit, max } });
    return { code: r.code, message: r.message, data: r.data, status: r.status };
  };
  if (typeof id === 'string' && id.length > MAX_SUBSCRIPTION_ID_LENGTH)
    return over('subscription_id_length', MAX_SUBSCRIPTION_ID_LENGTH);
  const list = filter.resourceSubscriptions;
  if (!Array.isArray(list)) return undefined;
  let total = 0;
  for (const u of list) {
    if (typeof u !== 'string') continue;
    if (u.length > MAX_SUBSCRIPTION_URI_LENGTH) return over('uri_length', MAX_SUBSCRIPTION_URI_LENGTH);
    total += u.length;
    if (total > MAX_SUBSCRIPTION_FILTER_LENGTH) return over('filter_length', MAX_SUBSCRIPTION_FILTER_LENGTH);
  }
  return undefined;
}

/**
 * Open one stream: the acknowledgement, the feeds, the watched tasks (`tasks`: their watch and the ids it
 * acknowledges); `open` holds its graceful end, counted for `caller`, while it lasts.
 */
function openStream(
  options: ListenRouterOptions,
  reply: Reply,
  params: JsonObject,
  open: OpenStreams,
  caller: string,
  tasks?: { watch: TaskWatch; acked: string[] },
): void {
  const { feeds, capabilities, logger, serverInfo } = options;
  const { res, mcp, locals } = reply;
  const id = mcp.id!;
  const trace = traceOf(locals);
  const sent = trace === undefined ? undefined : notificationEvents(trace);
  const { honoured, uris } = honouredOf(params.notifications as JsonObject, feeds, capabilities);
  if (tasks) honoured.taskIds = tasks.acked;
  const tag = (p: JsonObject = {}): JsonObject => ({ ...p, _meta: { [META.subscriptionId]: id } });
  locals.response = { resultType: 'stream' };
  // An open subscription is waiting, not work: nothing is charged to the caller's budget for its lifetime
  // (limits() would otherwise charge the stream's wall-clock time when it closes).
  locals.chargedMs ??= 0;
  // Queued before any feed is subscribed to: the acknowledgement is always the first message of the stream.
  const ACK = 'notifications/subscriptions/acknowledged';
  if (reply.push({ jsonrpc: '2.0', method: ACK, params: tag({ notifications: honoured }) }, true))
    sent?.(ACK);
  // The stream's keep-alive comments are the Reply's, as on every SSE answer (the `keepAliveMs` option).
  const unsubscribe = subscribe(
    reply,
    feeds,
    logger,
    honoured,
    uris.size > 0 ? (u) => uris.has(u) : undefined,
    tag,
    sent,
  );
  tasks?.watch.start((task) => {
    if (reply.buffered() > MAX_LISTEN_BUFFER) return void reply.res.destroy();
    if (reply.notify('notifications/tasks', tag(task))) sent?.('notifications/tasks');
  });
  if (tasks) unsubscribe.push(() => tasks.watch.stop());

  let ended = false;
  const stop = (): void => {
    if (ended) return;
    ended = true;
    for (const u of unsubscribe) u();
    open.delete(caller, end);
  };
  // Graceful end (2026-07-28 subscriptions): the completion result, then the stream closes.
  const end = async (): Promise<void> => {
    if (ended) return;
    stop();
    const encoded = encodeResult(
      { _meta: { [META.subscriptionId]: id } },
      {
        era: 'modern',
        method: mcp.method ?? '',
        serverInfo,
      },
    );
    if (!encoded.ok) return void res.end();
    let value: unknown = encoded.result;
    try {
      value = await applyOutbound(locals, value, mcp.method ?? '', 'result');
    } catch (err) {
      log(logger, 'error', 'dispatch: the subscriptions/listen result could not be transformed', {
        error: errorMeta(err),
      });
    }
    await reply.send(200, JSON.stringify({ jsonrpc: '2.0', id, result: value }), {
      resultType: 'complete',
    });
  };
  open.add(caller, end);
  res.once('close', stop);
  if (res.destroyed) stop();
  // From here on the stream needs its bounded filter only, never the request's body or parsed message.
  releaseParsed(reply.req);
}

/**
 * The notifications of a listen stream on its request's span, which lasts as long as the stream: the first
 * {@link MAX_NOTIFICATION_EVENTS} as `mcpware.notification` events (their method), and how many were sent in all as
 * `mcpware.notification.count`, so that a long stream's span stays bounded.
 */
function notificationEvents(trace: RequestTrace): (method: string) => void {
  let count = 0;
  return (method) => {
    count++;
    if (count <= MAX_NOTIFICATION_EVENTS) trace.event('mcpware.notification', { method });
    trace.set({ 'mcpware.notification.count': count });
  };
}

/**
 * Subscribe a stream to the feeds it honours, and to the updates of the URIs `watched` accepts (read at each
 * update; none when undefined); returns the unsubscribe functions. `sent` hears the method of each notification
 * queued on the stream.
 */
export function subscribe(
  reply: Reply,
  feeds: Feeds,
  logger: Logger,
  honoured: JsonObject,
  watched: ((uri: string) => boolean) | undefined,
  tag: (p?: JsonObject) => JsonObject,
  sent?: (method: string) => void,
): (() => void)[] {
  const guard = (): void => {
    if (reply.buffered() > MAX_LISTEN_BUFFER) {
      // A client that does not read is dropped rather than buffered without bound.
      log(
        logger,
        'warn',
        'dispatch: a subscriptions/listen client stopped reading; its stream was closed',
        {},
      );
      reply.res.destroy();
    }
  };
  const due = new Set<string>();
  let scheduled = false;
  const flush = (): void => {
    scheduled = false;
    for (const method of due) if (reply.notify(method, tag())) sent?.(method);
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
  if (honoured.resourcesListChanged || watched) {
    on(feeds.resources, (e) => {
      if (e.type === 'listChanged') {
        if (honoured.resourcesListChanged) listChanged('notifications/resources/list_changed');
      } else if (watched?.(e.uri)) {
        if (reply.notify('notifications/resources/updated', tag({ uri: e.uri })))
          sent?.('notifications/resources/updated');
        guard();
      }
    });
  }
  return unsubscribe;
}
