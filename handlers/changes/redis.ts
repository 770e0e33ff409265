/**
 * `redisChangeFeed()`: a {@link ChangeFeed} whose announcements reach the listen streams of every replica that
 * uses the same Redis and channel, through Redis pub/sub.
 *
 * An announcement is delivered to this process's listeners at once, then published with this feed's id; each
 * feed delivers what it reads from the channel except its own messages, so every listen stream gets each
 * announcement exactly once. While Redis cannot be reached, announcements still reach this process's listeners;
 * they are not kept for the other replicas (pub/sub keeps nothing), and what other replicas announce meanwhile
 * does not arrive here. The outage is logged once and counted; the subscriber connection reconnects and
 * subscribes again by itself.
 *
 * @see docs/handlers/changes.md
 */
import { randomBytes } from 'node:crypto';
import { errorMeta, log } from '../../core/log.js';
import {
  badOption,
  fnOption,
  knownKeys,
  loggerOption,
  optionsObject,
  stringOption,
} from '../../core/options.js';
import { stderrLogger } from '../../core/respond.js';
import type { Logger } from '../../core/types.js';
import {
  type CancellationMessage,
  type CancellationRelay,
  type ChangeEvent,
  ChangeFeed,
  type SubscriptionMessage,
} from '../../core/change-feed.js';
import {
  type WireDropReason,
  decodeWire,
  encodeCancellation,
  encodeSubscription,
  encodeWire,
} from './wire.js';

const F = 'redisChangeFeed';
/** A channel name: printable ASCII without spaces. */
const CHANNEL = /^[\x21-\x7e]{1,200}$/;

/** The connection the feed subscribes on: what `duplicate()` of an ioredis client returns. */
export interface RedisSubscriberLike {
  readonly status: string;
  subscribe(channel: string): Promise<unknown>;
  on(event: 'message', listener: (channel: string, message: string) => void): unknown;
  on(event: 'ready' | 'close' | 'end', listener: () => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  disconnect(): void;
}

/**
 * The part of a Redis client the feed uses. An ioredis `Redis` instance fits (create it with
 * `redisClientOptions`, as for `limits()`: nothing waits in an offline queue); the feed publishes on it and
 * subscribes on its own `duplicate()`.
 */
export interface RedisPubSubClient {
  /** ioredis connection status; the feed publishes only while it is `ready`. */
  readonly status: string;
  publish(channel: string, message: string): Promise<unknown>;
  duplicate(override?: Record<string, unknown>): RedisSubscriberLike;
  on?(event: 'ready', listener: () => void): unknown;
  off?(event: 'ready', listener: () => void): unknown;
}

export interface RedisChangeFeedOptions {
  /** The client (ioredis). The feed publishes on it and subscribes on `redis.duplicate()`. */
  redis: RedisPubSubClient;
  /** The channel; every replica's feed for the same handler uses the same one, each handler its own. Default `mcpware:changes`. */
  channel?: string;
  /** Where outages and dropped messages are reported. Default: stderr. */
  logger?: Logger;
  /** Observation hooks (metrics); an exception a hook throws is logged and ignored. */
  hooks?: {
    /** Redis became unreachable (once per outage). */
    onOutage?(): void;
    /** A message read from the channel was not a change feed message and was dropped. */
    onDropped?(reason: WireDropReason): void;
  };
}

/** Counts for tests and health checks. */
export interface RedisChangeFeedStats {
  /** Subscribed and able to publish: announcements reach the other replicas. */
  connected: boolean;
  /** Outages since the feed was created. */
  outages: number;
  /** Announcements published to the channel. */
  published: number;
  /** Announcements of other replicas delivered here. */
  received: number;
  /** Messages read from the channel and dropped (not a change feed message). */
  dropped: number;
  /** Announcements delivered here only: Redis was unreachable, or the message would be too large. */
  unsent: number;
  /** Legacy cancellations passed to the other replicas (`cancellation.relay` of dispatch()). */
  cancellationsPublished: number;
  /** Legacy cancellations of other replicas handed to this replica's dispatcher. */
  cancellationsReceived: number;
}

/**
 * A feed shared through Redis; it is also a {@link CancellationRelay}: give it to
 * `dispatch({ cancellation: { relay: feed } })` and a legacy `notifications/cancelled` that lands on one replica
 * stops the call running on another, through the same channel.
 */
export interface RedisChangeFeed extends ChangeFeed, CancellationRelay {
  stats(): RedisChangeFeedStats;
  /** Stop listening on the channel and close the subscriber connection; announcements stay local from now on. */
  close(): Promise<void>;
}

interface Config {
  redis: RedisPubSubClient;
  channel: string;
  logger: Logger;
  onOutage: () => void;
  onDropped: (reason: WireDropReason) => void;
}

function resolveOptions(options: RedisChangeFeedOptions | undefined): Config {
  const o = optionsObject(F, options);
  knownKeys(F, o, ['redis', 'channel', 'logger', 'hooks']);
  const c = o.redis as Partial<RedisPubSubClient> | undefined;
  if (
    !c ||
    typeof c !== 'object' ||
    typeof c.status !== 'string' ||
    typeof c.publish !== 'function' ||
    typeof c.duplicate !== 'function'
  ) {
    throw badOption(F, 'redis', c === undefined ? c : '[object]', 'an ioredis client');
  }
  const channel = stringOption(F, 'channel', o.channel, 'mcpware:changes');
  if (!CHANNEL.test(channel)) {
    throw badOption(F, 'channel', channel, 'at most 200 printable ASCII characters without spaces');
  }
  const logger = loggerOption(F, o.logger, stderrLogger);
  const hooks = optionsObject(F, o.hooks, 'hooks');
  knownKeys(F, hooks, ['onOutage', 'onDropped'], 'hooks.');
  const safe = <A extends unknown[]>(name: 'onOutage' | 'onDropped') => {
    const f = fnOption<(...args: A) => void>(F, `hooks.${name}`, hooks[name]);
    return (...args: A): void => {
      try {
        f?.(...args);
      } catch (e) {
        log(logger, 'error', `${F}: a hook threw`, { error: errorMeta(e) });
      }
    };
  };
  return {
    redis: c as RedisPubSubClient,
    channel,
    logger,
    onOutage: safe<[]>('onOutage'),
    onDropped: safe<[WireDropReason]>('onDropped'),
  };
}

/**
 * A change feed shared through Redis; its options are validated here (see {@link RedisChangeFeedOptions}).
 * @param options - {@link RedisChangeFeedOptions}
 * @see docs/handlers/changes.md
 * @example
 * ```ts
 * import { Redis } from 'ioredis';
 * import { redisChangeFeed } from 'mcpware/changes';
 * import { resources } from 'mcpware/resources';
 *
 * const feed = redisChangeFeed({ redis: new Redis(), channel: 'docs:changes' });
 * const res = resources({ sources: [catalogueSource], changes: feed });
 * feed.updated('docs://guide.md'); // every replica's subscribers hear it
 * ```
 */
export function redisChangeFeed(options: RedisChangeFeedOptions): RedisChangeFeed {
  return new SharedFeed(resolveOptions(options));
}

class SharedFeed extends ChangeFeed implements RedisChangeFeed {
  readonly #c: Config;
  readonly #id = randomBytes(8).toString('hex');
  readonly #sub: RedisSubscriberLike;
  readonly #counts = {
    outages: 0,
    published: 0,
    received: 0,
    dropped: 0,
    unsent: 0,
    cancellationsPublished: 0,
    cancellationsReceived: 0,
  };
  readonly #cancelListeners = new Set<(message: CancellationMessage) => void>();
  readonly #subscriptionListeners = new Set<(message: SubscriptionMessage) => void>();
  #subscribed = false;
  #down = false;
  #closed = false;
  #warnedDrop = false;
  #warnedSize = false;
  readonly #onPublisherReady = (): void => this.#recovered();

  constructor(config: Config) {
    super();
    this.#c = config;
    // A connection of its own: one that subscribes can send nothing else. It subscribes again on every
    // reconnection itself (ioredis' own resubscription is off), and the outage ends once that succeeds.
    const sub = config.redis.duplicate({ autoResubscribe: false, lazyConnect: false });
    this.#sub = sub;
    sub.on('error', () => {}); // reported as an outage on 'close'
    sub.on('ready', () => this.#subscribe());
    sub.on('close', () => {
      this.#subscribed = false;
      if (!this.#closed) this.#outage('the subscriber connection closed');
    });
    sub.on('message', (channel, message) => {
      if (channel === config.channel && !this.#closed) this.#receive(message);
    });
    config.redis.on?.('ready', this.#onPublisherReady);
    if (sub.status === 'ready') this.#subscribe();
  }

  override listChanged(): void {
    super.listChanged();
    this.#publish({ type: 'listChanged' });
  }

  override updated(uri: string): void {
    super.updated(uri);
    this.#publish({ type: 'updated', uri });
  }

  publishCancellation(message: CancellationMessage): void {
    if (this.#closed) return;
    const encoded = encodeCancellation(this.#id, message);
    // Out of bounds: the call it names cannot run on any replica (dispatch() registers none such).
    if (!encoded.ok) return;
    this.#send(
      encoded.message,
      () => void this.#counts.cancellationsPublished++,
      () => {},
    );
  }

  onCancellation(listener: (message: CancellationMessage) => void): () => void {
    if (typeof listener !== 'function')
      throw new TypeError('redisChangeFeed.onCancellation(): listener must be a function');
    const entry = (m: CancellationMessage): void => listener(m);
    this.#cancelListeners.add(entry);
    return () => {
      this.#cancelListeners.delete(entry);
    };
  }

  /**
   * Pass a legacy session's subscription change to the other replicas (dispatch()'s `cancellation.relay` does,
   * so that the session's GET stream knows it wherever it is open).
   */
  publishSubscription(message: SubscriptionMessage): void {
    if (this.#closed) return;
    const encoded = encodeSubscription(this.#id, message);
    if (!encoded.ok) return;
    this.#send(
      encoded.message,
      () => {},
      () => {},
    );
  }

  /** Receive the other replicas' subscription changes; returns the function that stops receiving. */
  onSubscription(listener: (message: SubscriptionMessage) => void): () => void {
    if (typeof listener !== 'function')
      throw new TypeError('redisChangeFeed.onSubscription(): listener must be a function');
    const entry = (m: SubscriptionMessage): void => listener(m);
    this.#subscriptionListeners.add(entry);
    return () => {
      this.#subscriptionListeners.delete(entry);
    };
  }

  stats(): RedisChangeFeedStats {
    return { connected: this.#connected(), ...this.#counts };
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#subscribed = false;
    this.#c.redis.off?.('ready', this.#onPublisherReady);
    this.#sub.disconnect();
  }

  #connected(): boolean {
    return !this.#closed && this.#subscribed && this.#c.redis.status === 'ready';
  }

  #subscribe(): void {
    if (this.#closed) return;
    this.#sub.subscribe(this.#c.channel).then(
      () => {
        this.#subscribed = true;
        this.#recovered();
      },
      () => this.#outage('subscribing to the channel failed'),
    );
  }

  #publish(event: ChangeEvent): void {
    if (this.#closed) return void this.#counts.unsent++;
    const encoded = encodeWire(this.#id, event);
    if (!encoded.ok) {
      this.#counts.unsent++;
      if (!this.#warnedSize) {
        this.#warnedSize = true;
        log(
          this.#c.logger,
          'warn',
          `${F}: an announcement too large for the channel reached this replica only`,
        );
      }
      return;
    }
    this.#send(
      encoded.message,
      () => void this.#counts.published++,
      () => void this.#counts.unsent++,
    );
  }

  /** Publish one message: `sent` once Redis took it, `unsent` when it could not (the outage is reported). */
  #send(message: string, sent: () => void, unsent: () => void): void {
    if (this.#c.redis.status !== 'ready') {
      unsent();
      return this.#outage('the publishing connection is not ready');
    }
    try {
      this.#c.redis.publish(this.#c.channel, message).then(sent, () => {
        unsent();
        this.#outage('publishing failed');
      });
    } catch {
      unsent();
      this.#outage('publishing failed');
    }
  }

  #receive(message: string): void {
    const decoded = decodeWire(message);
    if (!decoded.ok) {
      this.#counts.dropped++;
      this.#c.onDropped(decoded.reason);
      if (!this.#warnedDrop) {
        this.#warnedDrop = true;
        log(this.#c.logger, 'warn', `${F}: dropped a message that is not a change feed message`, {
          channel: this.#c.channel,
          reason: decoded.reason,
        });
      }
      return;
    }
    if (decoded.from === this.#id) return; // this feed's own announcement, delivered when it was made
    if (decoded.cancellation !== undefined) return this.#cancelled(decoded.cancellation);
    if (decoded.subscription !== undefined) return this.#relayedSubscription(decoded.subscription);
    this.#counts.received++;
    const e = decoded.event;
    if (e.type === 'listChanged') super.listChanged();
    else super.updated(e.uri);
  }

  /** Another replica's cancellation, handed to this replica's dispatcher(s). */
  #cancelled(message: CancellationMessage): void {
    this.#counts.cancellationsReceived++;
    for (const l of [...this.#cancelListeners]) {
      try {
        l(message);
      } catch (e) {
        log(this.#c.logger, 'error', `${F}: a cancellation listener threw`, { error: errorMeta(e) });
      }
    }
  }

  /** Another replica's subscription change, handed to this replica's dispatcher(s). */
  #relayedSubscription(message: SubscriptionMessage): void {
    for (const l of [...this.#subscriptionListeners]) {
      try {
        l(message);
      } catch (e) {
        log(this.#c.logger, 'error', `${F}: a subscription listener threw`, { error: errorMeta(e) });
      }
    }
  }

  #outage(why: string): void {
    if (this.#down || this.#closed) return;
    this.#down = true;
    this.#counts.outages++;
    log(
      this.#c.logger,
      'error',
      `${F}: Redis unavailable, announcements reach this replica's listen streams only (and cancellations this replica's calls)`,
      { channel: this.#c.channel, why },
    );
    this.#c.onOutage();
  }

  #recovered(): void {
    if (!this.#down || !this.#connected()) return;
    this.#down = false;
    log(this.#c.logger, 'warn', `${F}: Redis available again, announcements reach every replica`, {
      channel: this.#c.channel,
    });
  }
}
