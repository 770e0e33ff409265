/**
 * `subscriptions/listen` (2026-07-28): a long-lived SSE answer carrying list-changed and resource-updated
 * notifications from the handlers' change feeds. The rules it keeps:
 *
 * - Only what the client asked for and the server has a feed and a capability for is honoured, and the
 *   acknowledgement naming that subset is always the first message of the stream.
 * - Every notification carries the subscription id (the listen request's id) in `_meta`.
 * - Bursts become one list_changed per type per tick; a client that stops reading is dropped.
 * - `closeAll()` ends every stream gracefully with its completion result, and refuses new ones (503).
 *
 * @see docs/guides/subscriptions.md
 */
import { ErrorCode } from '../../lib/errors.js';
import type { JsonObject } from '../../lib/jsonrpc.js';
import { META } from '../../lib/meta.js';
import { encodeResult } from '../../lib/encode.js';
import { hasCapability } from '../../lib/routing.js';
import type { ServerCapabilities } from '../../handlers/contract.js';
import type { ChangeEvent, ChangeFeed } from '../../handlers/changes/index.js';
import { errorMeta, log } from '../internal/log.js';
import type { Logger } from '../types.js';
import type { Feeds } from './capabilities.js';
import { applyOutbound } from './outbound.js';
import type { Reply } from './reply.js';
import { type RpcError, sendRpcError } from './rpc-errors.js';
import type { DispatchConfig } from './options.js';

export interface ListenRouterOptions {
  feeds: Feeds;
  capabilities: ServerCapabilities;
  keepAliveMs: number;
  maxStreams: number;
  logger: Logger;
  serverInfo: DispatchConfig['serverInfo'];
}

export interface ListenRouter {
  /** Answer one `subscriptions/listen` request. */
  serve(reply: Reply, params: JsonObject): void | Promise<void>;
  /** End every open stream with its completion result; refuse new ones from now on. */
  closeAll(): Promise<void>;
  readonly openCount: number;
}

/** A listen stream whose client reads slower than this many buffered bytes is dropped. */
const MAX_LISTEN_BUFFER = 1024 * 1024;
/** Most URIs one listen request may subscribe to. */
const MAX_RESOURCE_SUBSCRIPTIONS = 1000;

const isObj = (v: unknown): v is JsonObject => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The honoured subset of a subscription filter: what the client asked for that the server can deliver. */
function honouredOf(
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
  const { maxStreams, logger } = options;
  /** Each open stream's graceful end. */
  const open = new Set<() => Promise<void>>();
  let shuttingDown = false;
  return {
    serve(reply, params) {
      const unavailable = shuttingDown
        ? 'The server is shutting down'
        : open.size >= maxStreams
          ? 'Too many subscriptions are open; retry later'
          : undefined;
      const refused = refusalOf(reply, params, unavailable);
      if (refused) return sendRpcError(reply, refused, logger);
      openStream(options, reply, params, open);
    },
    async closeAll() {
      shuttingDown = true;
      await Promise.all([...open].map((end) => end()));
    },
    get openCount() {
      return open.size;
    },
  };
}

/** Why a listen request cannot be served, if it cannot. */
function refusalOf(reply: Reply, params: JsonObject, unavailable: string | undefined): RpcError | undefined {
  if (!isObj(params.notifications)) {
    return {
      code: ErrorCode.InvalidParams,
      message: 'Invalid params: "notifications" must be an object (a subscription filter)',
      status: 200,
    };
  }
  if (!reply.canStream()) {
    return {
      code: ErrorCode.InvalidRequest,
      message: 'subscriptions/listen answers with a text/event-stream; the request must accept it',
      status: 400,
    };
  }
  if (unavailable !== undefined) return { code: ErrorCode.Unavailable, message: unavailable, status: 503 };
  return undefined;
}

/** Open one stream: the acknowledgement, the feeds, the keep-alive; `open` holds its graceful end while it lasts. */
function openStream(
  options: ListenRouterOptions,
  reply: Reply,
  params: JsonObject,
  open: Set<() => Promise<void>>,
): void {
  const { feeds, capabilities, keepAliveMs, logger, serverInfo } = options;
  const { res, mcp, locals } = reply;
  const id = mcp.id!;
  const { honoured, uris } = honouredOf(params.notifications as JsonObject, feeds, capabilities);
  const tag = (p: JsonObject = {}): JsonObject => ({ ...p, _meta: { [META.subscriptionId]: id } });
  locals.response = { resultType: 'stream' };
  // An open subscription is waiting, not work: nothing is charged to the caller's budget for its lifetime
  // (limits() would otherwise charge the stream's wall-clock time when it closes).
  locals.chargedMs ??= 0;
  // Queued before any feed is subscribed to: the acknowledgement is always the first message of the stream.
  reply.push(
    {
      jsonrpc: '2.0',
      method: 'notifications/subscriptions/acknowledged',
      params: tag({ notifications: honoured }),
    },
    true,
  );
  const unsubscribe = subscribe(reply, feeds, logger, honoured, uris, tag);
  const keepAlive = keepAliveMs > 0 ? setInterval(() => reply.comment('keep-alive'), keepAliveMs) : undefined;
  keepAlive?.unref?.();

  let ended = false;
  const stop = (): void => {
    if (ended) return;
    ended = true;
    for (const u of unsubscribe) u();
    if (keepAlive) clearInterval(keepAlive);
    open.delete(end);
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
  open.add(end);
  res.once('close', stop);
  if (res.destroyed) stop();
}

/** Subscribe the stream to the feeds it honours; returns the unsubscribe functions. */
function subscribe(
  reply: Reply,
  feeds: Feeds,
  logger: Logger,
  honoured: JsonObject,
  uris: ReadonlySet<string>,
  tag: (p?: JsonObject) => JsonObject,
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
  return unsubscribe;
}
