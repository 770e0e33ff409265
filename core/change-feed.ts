/**
 * The in-process change feed, and how a handler object carries one: the part of change feeds that `dispatch()`
 * and the handler objects share (handlers/changes/index.ts tells the whole story; the Redis feed lives there).
 */
/** What changed. */
export type ChangeEvent = { type: 'listChanged' } | { type: 'updated'; uri: string };
export type ChangeListener = (event: ChangeEvent) => void;

/** Longest request id a cancellation names, in characters (a longer one names no call). */
export const MAX_CANCEL_REQUEST_ID_LENGTH = 256;
/** Longest `Mcp-Session-Id` a cancellation is matched on, in characters (a longer one names no call). */
export const MAX_CANCEL_SESSION_LENGTH = 4096;
/** Longest principal key a cancellation carries between replicas, in characters. */
export const MAX_CANCEL_PRINCIPAL_LENGTH = 2048;

/**
 * A legacy `notifications/cancelled` passed from the replica it landed on to the others: the principal key of
 * whoever sent it, the raw `Mcp-Session-Id` it carried (null without one), and the request id it names. A
 * replica running that call (same principal, same session, same id) stops it.
 */
export interface CancellationMessage {
  readonly principal: string;
  readonly session: string | null;
  readonly requestId: string | number;
}

/**
 * How `dispatch({ cancellation: { relay } })` passes cancellations between replicas; `redisChangeFeed()`
 * implements it on its channel. Publishing never throws; while the relay cannot reach the others, cancellations
 * stay on the replica they landed on.
 */
export interface CancellationRelay {
  /** Pass a cancellation to the other replicas (not to this one's listeners). */
  publishCancellation(message: CancellationMessage): void;
  /** Receive the other replicas' cancellations; returns the function that stops receiving. */
  onCancellation(listener: (message: CancellationMessage) => void): () => void;
}

/** True for something shaped like a {@link CancellationRelay}. */
export function isCancellationRelay(v: unknown): v is CancellationRelay {
  return (
    v !== null &&
    typeof v === 'object' &&
    typeof (v as CancellationRelay).publishCancellation === 'function' &&
    typeof (v as CancellationRelay).onCancellation === 'function'
  );
}

/** Longest `Mcp-Session-Id` a subscription carries between replicas, in characters (a session's own bound). */
export const MAX_RELAYED_SESSION_LENGTH = 1024;
/** Longest URI a subscription carries between replicas, in characters (the listen streams' bound). */
export const MAX_RELAYED_URI_LENGTH = 2048;

/**
 * A legacy session's `resources/subscribe` (or `unsubscribe`) passed from the replica that answered it to the
 * others, so that the session's GET stream knows it wherever it is open: the session id, the principal key it
 * was verified for, its expiry (ms since the epoch), the URI, and whether it is now subscribed.
 */
export interface SubscriptionMessage {
  readonly session: string;
  readonly principal: string;
  readonly expiresAt: number;
  readonly uri: string;
  readonly subscribed: boolean;
}

/**
 * How a relay also passes legacy sessions' subscriptions between replicas; `redisChangeFeed()` implements it on
 * its channel, and `dispatch({ cancellation: { relay } })` uses it when the relay has it. Publishing never throws.
 */
export interface SubscriptionRelay {
  /** Pass a subscription change to the other replicas (not to this one's listeners). */
  publishSubscription(message: SubscriptionMessage): void;
  /** Receive the other replicas' subscription changes; returns the function that stops receiving. */
  onSubscription(listener: (message: SubscriptionMessage) => void): () => void;
}

/** True for something shaped like a {@link SubscriptionRelay}. */
export function isSubscriptionRelay(v: unknown): v is SubscriptionRelay {
  return (
    v !== null &&
    typeof v === 'object' &&
    typeof (v as SubscriptionRelay).publishSubscription === 'function' &&
    typeof (v as SubscriptionRelay).onSubscription === 'function'
  );
}

/** Where a handler object keeps its change feed (a symbol: never routable). */
export const CHANGES = Symbol.for('mcpware.changes');

/**
 * A synchronous, in-process event feed. Listener errors are swallowed: one bad listener cannot stop the rest.
 * @see docs/handlers/changes.md
 * @example
 * ```ts
 * import { ChangeFeed } from 'mcpware/changes';
 * import { resources } from 'mcpware/resources';
 *
 * const feed = new ChangeFeed();
 * const res = resources({ sources: [catalogueSource], changes: feed });
 * watcher.on('change', (path) => feed.updated(`docs://${path}`)); // notifications/resources/updated
 * ```
 */
export class ChangeFeed {
  readonly #listeners = new Set<ChangeListener>();

  /** Announce that the list changed (tools, prompts or resources, whichever this feed belongs to). */
  listChanged(): void {
    this.#emit({ type: 'listChanged' });
  }

  /** Announce that the resource at `uri` was updated (resources feeds only). */
  updated(uri: string): void {
    if (typeof uri !== 'string' || uri === '')
      throw new TypeError('ChangeFeed.updated(): uri must be a non-empty string');
    this.#emit({ type: 'updated', uri });
  }

  /** Listen; returns the function that stops listening. */
  subscribe(listener: ChangeListener): () => void {
    if (typeof listener !== 'function')
      throw new TypeError('ChangeFeed.subscribe(): listener must be a function');
    // A wrapper per subscription, so subscribing the same function twice gives two independent subscriptions.
    const entry: ChangeListener = (e) => listener(e);
    this.#listeners.add(entry);
    return () => {
      this.#listeners.delete(entry);
    };
  }

  /** Number of listeners (open listen streams per feed, for tests and health checks). */
  get listeners(): number {
    return this.#listeners.size;
  }

  #emit(event: ChangeEvent): void {
    for (const l of [...this.#listeners]) {
      try {
        l(event);
      } catch {
        // Listeners are the dispatcher's stream writers; a failing one must not break the registry's caller.
      }
    }
  }
}

/**
 * True for something shaped like a ChangeFeed (works across two copies of the package, CJS and ESM).
 * @example
 * ```ts
 * import { ChangeFeed, isChangeFeed } from 'mcpware/changes';
 *
 * console.log(isChangeFeed(new ChangeFeed()), isChangeFeed({})); // true false
 * ```
 */
export function isChangeFeed(v: unknown): v is ChangeFeed {
  return (
    v instanceof ChangeFeed ||
    (v !== null &&
      typeof v === 'object' &&
      typeof (v as ChangeFeed).subscribe === 'function' &&
      typeof (v as ChangeFeed).listChanged === 'function')
  );
}

/**
 * The change feed a handler object exposes under {@link CHANGES}, if any.
 * @example
 * ```ts
 * import { ChangeFeed, changesOf } from 'mcpware/changes';
 * import { resources } from 'mcpware/resources';
 *
 * const res = resources({ sources: [catalogueSource], changes: new ChangeFeed() });
 * changesOf(res)?.listChanged(); // notifications/resources/list_changed
 * ```
 */
export function changesOf(handler: unknown): ChangeFeed | undefined {
  if (handler === null || typeof handler !== 'object') return undefined;
  const f = (handler as { [CHANGES]?: unknown })[CHANGES];
  return isChangeFeed(f) ? f : undefined;
}
