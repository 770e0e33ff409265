/**
 * The legacy (2025-11-25) session's GET stream: a `GET` with `Accept: text/event-stream` and a verified
 * `Mcp-Session-Id` opens an SSE stream carrying the notifications not tied to a request, from the handler
 * objects' change feeds: `notifications/{tools,prompts,resources}/list_changed` (what the server's
 * capabilities declare `listChanged` for) and `notifications/resources/updated` for the URIs the session
 * subscribed to with `resources/subscribe`. Any replica can serve it: the feeds are every replica's, and the
 * session's subscriptions are recorded in process and passed to the other replicas by `cancellation.relay` when it
 * is also a subscription relay (`redisChangeFeed()` is).
 * No event ids: `Last-Event-ID` replays nothing.
 *
 * Bounded: a stream counts against the listen streams' caps (`streams.maxListenStreams`,
 * `maxListenStreamsPerPrincipal`); the subscriptions of one session are at most
 * {@link MAX_SESSION_SUBSCRIPTIONS} URIs of at most {@link MAX_SUBSCRIPTION_URI_LENGTH} characters each and 128 KiB of
 * characters in all (a listen stream's filter bound), the sessions
 * holding subscriptions at most `streams.maxListenStreams` (a caller's oldest gives way beyond
 * `maxListenStreamsPerPrincipal`), each entry kept until its session expires.
 *
 * @see docs/middleware/dispatch.md#the-legacy-get-stream
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ErrorCode, McpError, refusal } from '../../lib/errors.js';
import type { JsonObject } from '../../lib/jsonrpc.js';
import type { McpRequest } from '../../lib/request.js';
import { principalKey } from '../../lib/principal.js';
import { isModernClaim } from '../../lib/revisions.js';
import { hasCapability } from '../../lib/routing.js';
import { isSubscriptionRelay } from '../../core/change-feed.js';
import { errorMeta, log } from '../../core/log.js';
import { refuseMethod } from '../../core/post-only.js';
import { localsOf, sendRefusal } from '../../core/respond.js';
import {
  type ListenRouter,
  MAX_SUBSCRIPTION_FILTER_LENGTH,
  MAX_SUBSCRIPTION_URI_LENGTH,
  honouredOf,
  subscribe,
} from './listen.js';
import { DISPATCH, type DispatchConfig } from './options.js';
import type { RpcError } from './rpc-errors.js';
import { Reply } from './reply.js';
import { type SessionCodec, verifiedSessionOf } from './session.js';

/** Most URIs one legacy session is subscribed to (the listen streams' bound). */
export const MAX_SESSION_SUBSCRIPTIONS = 1000;
/** Longest a timer may wait (setTimeout's limit); a session expiring later is checked again then. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** A session's subscriptions: the URIs (and their length in all), whose caller, until when. */
interface Entry {
  readonly uris: Set<string>;
  chars: number;
  readonly caller: string;
  readonly expiresAt: number;
}

/**
 * The URIs each legacy session subscribed to, bounded: at most `maxSessions` sessions (expired ones purged when
 * it is full), at most `maxPerCaller` per caller (its oldest gives way), each entry until its session expires.
 */
export class SessionSubscriptions {
  readonly #entries = new Map<string, Entry>();
  readonly #perCaller = new Map<string, number>();

  constructor(
    private readonly maxSessions: number,
    private readonly maxPerCaller: number,
  ) {}

  get size(): number {
    return this.#entries.size;
  }

  /** Whether `session` (unexpired) is subscribed to `uri`. */
  has(session: string, uri: string, now = Date.now()): boolean {
    const e = this.#entries.get(session);
    if (e === undefined) return false;
    if (e.expiresAt <= now) {
      this.#delete(session);
      return false;
    }
    return e.uris.has(uri);
  }

  /**
   * Record `uri` for `session`; throws the refusal when a bound is reached (too many URIs for the session, or too
   * many sessions on this dispatcher).
   */
  add(session: string, caller: string, expiresAt: number, uri: string, now = Date.now()): void {
    let e = this.#entries.get(session);
    if (e !== undefined && e.expiresAt <= now) {
      this.#delete(session);
      e = undefined;
    }
    if (e === undefined) {
      this.#makeRoom(caller, now);
      e = { uris: new Set(), chars: 0, caller, expiresAt };
      this.#entries.set(session, e);
      this.#perCaller.set(caller, (this.#perCaller.get(caller) ?? 0) + 1);
    }
    if (e.uris.has(uri)) return;
    if (e.uris.size >= MAX_SESSION_SUBSCRIPTIONS) {
      const r = refusal('subscription_too_large', {
        data: { limit: 'session_subscriptions', max: MAX_SESSION_SUBSCRIPTIONS },
      });
      throw new McpError(r.code, r.message, r.data);
    }
    // The URIs' length in all is bounded as one listen stream's filter is.
    if (e.chars + uri.length > MAX_SUBSCRIPTION_FILTER_LENGTH) {
      const r = refusal('subscription_too_large', {
        data: { limit: 'session_subscription_chars', max: MAX_SUBSCRIPTION_FILTER_LENGTH },
      });
      throw new McpError(r.code, r.message, r.data);
    }
    e.uris.add(uri);
    e.chars += uri.length;
  }

  /** Forget `uri` for `session` (the entry goes with its last URI). */
  remove(session: string, uri: string): void {
    const e = this.#entries.get(session);
    if (e === undefined) return;
    if (e.uris.delete(uri)) e.chars -= uri.length;
    if (e.uris.size === 0) this.#delete(session);
  }

  #makeRoom(caller: string, now: number): void {
    if (this.maxPerCaller > 0 && (this.#perCaller.get(caller) ?? 0) >= this.maxPerCaller) {
      // The caller's oldest session gives way: one caller cannot hold more than its share.
      for (const [id, e] of this.#entries) {
        if (e.caller === caller) {
          this.#delete(id);
          break;
        }
      }
    }
    if (this.#entries.size < this.maxSessions) return;
    for (const [id, e] of this.#entries) if (e.expiresAt <= now) this.#delete(id);
    if (this.#entries.size < this.maxSessions) return;
    throw new McpError(
      ErrorCode.Unavailable,
      'Too many sessions hold subscriptions; retry later',
      undefined,
      503,
    );
  }

  #delete(session: string): void {
    const e = this.#entries.get(session);
    if (e === undefined) return;
    this.#entries.delete(session);
    const left = (this.#perCaller.get(e.caller) ?? 1) - 1;
    if (left > 0) this.#perCaller.set(e.caller, left);
    else this.#perCaller.delete(e.caller);
  }
}

/** The legacy GET streams of one dispatcher, and the subscriptions they deliver. */
export interface LegacyStreams {
  /** Answer a GET carrying `Mcp-Session-Id` (authentication decided): the stream, 404, 405 or a cap's refusal. */
  serve(req: IncomingMessage, res: ServerResponse): void;
  /** A legacy `resources/subscribe` from a verified session (no session: nothing to record). */
  subscribe(req: IncomingMessage, uri: string): void;
  /** A legacy `resources/unsubscribe`. */
  unsubscribe(req: IncomingMessage, uri: string): void;
  /** Sessions holding subscriptions. */
  readonly subscribedSessions: number;
  /** Stop receiving the relay's subscriptions. */
  close(): void;
}

/** The notifications of a legacy stream carry no subscription id. */
const untagged = (p: JsonObject = {}): JsonObject => p;

/** What a GET reads as: no body, its headers mirrored, method ''. */
function getRequest(req: IncomingMessage): McpRequest {
  const h = req.headers['mcp-protocol-version'];
  return {
    kind: 'notification',
    headers: { protocolVersion: Array.isArray(h) ? h.join(', ') : h },
    bytes: 0,
    message: { kind: 'notification', method: '' } as McpRequest['message'],
  };
}

/** What a session's stream is served with. */
interface StreamEnv {
  readonly config: DispatchConfig;
  readonly sessions: SessionCodec;
  readonly listen: ListenRouter;
  readonly subs: SessionSubscriptions;
  /** The list_changed notifications every stream carries. */
  readonly honoured: JsonObject;
  /** Whether resource updates are delivered (a resources feed, `resources.subscribe` declared). */
  readonly updates: boolean;
}

/** The capacity refusal of a stream (429 for the caller's cap, 503 otherwise), without id. */
function refuseCapacity(req: IncomingMessage, res: ServerResponse, held: RpcError): void {
  const perCaller = held.status === 429;
  const r = refusal(perCaller ? 'rate_limited' : 'unavailable');
  const { code, message, data, status } = held;
  sendRefusal(req, res, { ...r, code, message, data, status }, DISPATCH, {
    id: undefined,
    detail: perCaller ? 'listen_streams_per_principal' : 'listen_streams',
  });
}

/** Answer a GET carrying a session: the stream, or why not. */
function serveStream(env: StreamEnv, req: IncomingMessage, res: ServerResponse): void {
  const { config, sessions, listen, subs, honoured, updates } = env;
  const h = req.headers['mcp-protocol-version'];
  const version = Array.isArray(h) ? h.join(', ') : h;
  // A modern client has no GET stream; nor has a server that speaks no legacy revision.
  if (config.legacyVersions.length === 0 || (version !== undefined && isModernClaim(version)))
    return refuseMethod(req, res, DISPATCH);
  if (!sessions.admitStream(req, res)) return;
  const session = verifiedSessionOf(req)!;
  const mcp = getRequest(req);
  const reply = new Reply(config, req, res, mcp, 'legacy');
  if (!reply.canStream()) return refuseMethod(req, res, DISPATCH);
  const caller = principalKey(localsOf(req).principal);
  let release: (() => void) | undefined;
  let unsubscribe: (() => void)[] = [];
  let timer: NodeJS.Timeout | undefined;
  const stop = (): void => {
    if (timer !== undefined) clearTimeout(timer);
    for (const u of unsubscribe) u();
    unsubscribe = [];
    release?.();
    release = undefined;
  };
  const end = async (): Promise<void> => {
    stop();
    if (!res.writableEnded && !res.destroyed) res.end();
  };
  const held = listen.hold(caller, end);
  if (typeof held !== 'function') return refuseCapacity(req, res, held);
  release = held;
  const locals = localsOf(req);
  locals.response = { resultType: 'stream' };
  // An open stream is waiting, not work: nothing is charged to the caller's budget for its lifetime.
  locals.chargedMs ??= 0;
  reply.openStream();
  const watched = updates ? (uri: string) => subs.has(session.id, uri) : undefined;
  unsubscribe = subscribe(reply, config.feeds, config.logger, honoured, watched, untagged);
  // The stream ends with its session: the client initializes again and opens a new one.
  const expire = (): void => {
    const left = session.expiresAt - Date.now();
    if (left <= 0) return void end();
    timer = setTimeout(expire, Math.min(left, MAX_TIMER_MS));
    timer.unref?.();
  };
  expire();
  res.once('close', stop);
  if (res.destroyed) stop();
}

export function createLegacyStreams(
  config: DispatchConfig,
  sessions: SessionCodec,
  listen: ListenRouter,
): LegacyStreams {
  const { feeds, capabilities, logger } = config;
  const subs = new SessionSubscriptions(config.maxListenStreams, config.maxListenStreamsPerPrincipal);
  // What a session's stream carries: every list_changed the server declares, and the updates of its URIs.
  const { honoured } = honouredOf(
    { toolsListChanged: true, promptsListChanged: true, resourcesListChanged: true },
    feeds,
    capabilities,
  );
  const updates = feeds.resources !== undefined && hasCapability(capabilities, 'resources.subscribe');
  // The other replicas' subscriptions, when the cancellation relay passes them too (redisChangeFeed() does).
  const relay = isSubscriptionRelay(config.cancelRelay) ? config.cancelRelay : undefined;
  const stopRelay = relay?.onSubscription((m) => {
    try {
      if (!updates) return;
      if (m.subscribed) subs.add(m.session, m.principal, m.expiresAt, m.uri);
      else subs.remove(m.session, m.uri);
    } catch {
      // Over a bound here: the replica that answered the subscribe holds it.
    }
  });
  const publish = (req: IncomingMessage, uri: string, subscribed: boolean): void => {
    const session = verifiedSessionOf(req);
    if (relay === undefined || session === undefined) return;
    const principal = principalKey(localsOf(req).principal);
    try {
      relay.publishSubscription({
        session: session.id,
        principal,
        expiresAt: session.expiresAt,
        uri,
        subscribed,
      });
    } catch (err) {
      log(logger, 'error', 'dispatch: the subscription relay threw', { error: errorMeta(err) });
    }
  };

  const env: StreamEnv = { config, sessions, listen, subs, honoured, updates };
  const serve = (req: IncomingMessage, res: ServerResponse): void => serveStream(env, req, res);

  return {
    serve,
    subscribe(req, uri) {
      const session = verifiedSessionOf(req);
      if (session === undefined || !updates) return;
      if (uri.length > MAX_SUBSCRIPTION_URI_LENGTH) {
        const r = refusal('subscription_too_large', {
          data: { limit: 'uri_length', max: MAX_SUBSCRIPTION_URI_LENGTH },
        });
        throw new McpError(r.code, r.message, r.data);
      }
      subs.add(session.id, principalKey(localsOf(req).principal), session.expiresAt, uri);
      publish(req, uri, true);
    },
    unsubscribe(req, uri) {
      const session = verifiedSessionOf(req);
      if (session === undefined || !updates) return;
      subs.remove(session.id, uri);
      publish(req, uri, false);
    },
    close() {
      stopRelay?.();
    },
    get subscribedSessions() {
      return subs.size;
    },
  };
}
