/**
 * The limits store in Redis, shared by every replica that uses the same Redis and key prefix.
 * @see docs/middleware/limits.md
 */
import { McpwareError } from '../../lib/errors.js';
import type { RateLimiterRedis } from 'rate-limiter-flexible';
import type { InflightScope } from '../../lib/limits.js';
import { log } from '../internal/log.js';
import type { Logger } from '../types.js';
import { ACQUIRE, RENEW, type Script, runScript } from './redis-scripts.js';
import type { BudgetUse, LimitsStore, RpmResult, StoreWindows } from './store.js';

/**
 * The part of a Redis client the limiter uses. An ioredis `Redis` instance fits (create it with
 * `redisClientOptions`); rate-limiter-flexible also calls `defineCommand`, `multi` and `del` on it.
 */
export interface RedisClientLike {
  /** ioredis connection status; commands are sent only while it is `ready`. */
  readonly status: string;
  eval(script: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>;
  evalsha(sha: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>;
  zrem(key: string, ...members: string[]): Promise<number>;
}

export interface RedisStoreOptions {
  client: RedisClientLike;
  keyPrefix: string;
  windows: StoreWindows;
  /** Lifetime of a concurrency slot, renewed every third of it while the slot is held. */
  leaseMs: number;
  /** A renewal failed (the slots it covered may lapse). */
  onRenewError(error: Error): void;
  logger: Logger;
}

export interface RedisStore extends LimitsStore {
  readonly name: 'redis';
  budgetUsed(key: string): Promise<BudgetUse | null>;
  chargeBudget(key: string, ms: number): Promise<void>;
  takeRpm(key: string): Promise<RpmResult>;
  acquire(scope: InflightScope, key: string, limit: number, token: string): Promise<boolean>;
  release(scope: InflightScope, key: string, token: string): Promise<void>;
  /** Slots this process holds in Redis (and renews). */
  readonly slotCount: number;
}

class RedisNotReadyError extends McpwareError<'ERR_LIMITS_REDIS_NOT_READY'> {
  constructor() {
    super('ERR_LIMITS_REDIS_NOT_READY', 'Redis connection is not ready');
  }
}

/** The windows, built once rate-limiter-flexible has loaded. */
interface RedisWindows {
  rpm: RateLimiterRedis | undefined;
  budget: RateLimiterRedis | undefined;
  /** rate-limiter-flexible's RateLimiterRes: a rejection carrying one is the limit, anything else a failure. */
  isLimit(e: unknown): e is { msBeforeNext: number };
}

type RateLimiterModule = typeof import('rate-limiter-flexible');

/**
 * The requests-per-minute and budget windows are rate-limiter-flexible's `RateLimiterRedis`. It is loaded when a
 * Redis store is created, not with this module: its index loads every store it ships, which a memory store never
 * needs.
 */
async function loadWindows(o: RedisStoreOptions): Promise<RedisWindows> {
  const m = await import('rate-limiter-flexible');
  // A CommonJS module imported from ESM may arrive as its namespace's default export only.
  const { RateLimiterRedis, RateLimiterRes } =
    'RateLimiterRedis' in m ? m : (m as { default: RateLimiterModule }).default;
  const common = { storeClient: o.client, rejectIfRedisNotReady: true, inMemoryBlockOnConsumed: 0 };
  const window = (name: string, w: StoreWindows['rpm']) =>
    w &&
    new RateLimiterRedis({
      ...common,
      keyPrefix: `${o.keyPrefix}:${name}`,
      points: w.limit,
      duration: w.seconds,
    });
  return {
    rpm: window('rpm', o.windows.rpm),
    budget: window('budget', o.windows.budget),
    isLimit: (e: unknown): e is { msBeforeNext: number } => e instanceof RateLimiterRes,
  };
}

/**
 * A Redis store. A concurrency slot is a member of a sorted set scored by its own expiry: a lease, renewed on a
 * timer while the request runs. A crashed replica's slots therefore lapse one by one and a live replica's never
 * do, which a counter with one expiry for the whole key cannot give (its count restarts at 0 while requests still
 * run, and their late releases drive it negative).
 */
export function createRedisStore(options: RedisStoreOptions): RedisStore {
  const opts = (options.client as { options?: { enableOfflineQueue?: boolean } }).options;
  if (opts && opts.enableOfflineQueue !== false) {
    log(
      options.logger,
      'warn',
      'limits: the Redis client has its offline queue on; create it with redisClientOptions (enableOfflineQueue: false)',
    );
  }
  return new RedisSlotsStore(options);
}

class RedisSlotsStore implements RedisStore {
  readonly name = 'redis';
  private readonly client: RedisClientLike;
  private readonly prefix: string;
  private readonly leaseMs: number;
  private readonly onRenewError: (e: Error) => void;
  private readonly windows: Promise<RedisWindows>;
  /** The slots this process holds, per Redis key: renewed on a timer until released. */
  private readonly held = new Map<string, Set<string>>();
  private heldCount = 0;
  /** Slots being acquired right now, and those of them released (given up on) before Redis answered. */
  private readonly pending = new Set<string>();
  private readonly cancelled = new Set<string>();
  private timer: NodeJS.Timeout | undefined;

  constructor(o: RedisStoreOptions) {
    this.client = o.client;
    this.prefix = o.keyPrefix;
    this.leaseMs = o.leaseMs;
    this.onRenewError = o.onRenewError;
    this.windows = loadWindows(o);
    // A failed load reaches each request through the methods below (a store failure); not an unhandled rejection.
    this.windows.catch(() => {});
  }

  get slotCount(): number {
    return this.heldCount;
  }

  async budgetUsed(key: string): Promise<BudgetUse | null> {
    const r = await (await this.windows).budget!.get(key);
    return r ? { used: r.consumedPoints, msBeforeNext: r.msBeforeNext } : null;
  }

  async chargeBudget(key: string, ms: number): Promise<void> {
    await (await this.windows).budget!.penalty(key, ms);
  }

  async takeRpm(key: string): Promise<RpmResult> {
    const windows = await this.windows;
    try {
      await windows.rpm!.consume(key, 1);
      return { ok: true };
    } catch (e) {
      if (windows.isLimit(e)) return { ok: false, msBeforeNext: e.msBeforeNext };
      throw e;
    }
  }

  async acquire(scope: InflightScope, key: string, limit: number, token: string): Promise<boolean> {
    const rkey = this.slotKey(scope, key);
    let r: unknown;
    this.pending.add(token);
    try {
      r = await this.script(ACQUIRE, rkey, [limit, this.leaseMs, token]);
    } catch (e) {
      this.cancelled.delete(token);
      throw e;
    } finally {
      this.pending.delete(token);
    }
    const granted = Array.isArray(r) && Number(r[0]) === 1;
    if (this.cancelled.delete(token)) {
      // Given up on (timeout) and released meanwhile. The ZREM queued behind this call already removed the slot,
      // unless the script had to be loaded first (NOSCRIPT → EVAL ran after the ZREM): remove it once more.
      if (granted) this.client.zrem(rkey, token).catch(() => {});
      return false;
    }
    if (!granted) return false;
    let set = this.held.get(rkey);
    if (!set) this.held.set(rkey, (set = new Set()));
    set.add(token);
    if (++this.heldCount === 1) this.startRenewing();
    return true;
  }

  async release(scope: InflightScope, key: string, token: string): Promise<void> {
    const rkey = this.slotKey(scope, key);
    // Forget the slot first: a renewal that runs later must not extend it, whatever happens to the ZREM.
    const set = this.held.get(rkey);
    if (set?.delete(token)) {
      if (set.size === 0) this.held.delete(rkey);
      if (--this.heldCount === 0) this.stopRenewing();
    } else if (this.pending.has(token)) {
      this.cancelled.add(token); // the acquire has not returned yet: it must not start holding this slot
    }
    this.ready();
    await this.client.zrem(rkey, token);
  }

  private ready(): void {
    if (this.client.status !== 'ready') throw new RedisNotReadyError();
  }

  private async script(s: Script, key: string, args: (string | number)[]): Promise<unknown> {
    this.ready();
    return runScript(this.client, s, key, args);
  }

  private slotKey(scope: InflightScope, key: string): string {
    return scope === 'global' ? `${this.prefix}:conc:global` : `${this.prefix}:conc:user:${key}`;
  }

  private startRenewing(): void {
    const every = Math.max(Math.floor(this.leaseMs / 3), 100);
    this.timer = setInterval(() => this.renew(), every);
    this.timer.unref();
  }

  private stopRenewing(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private renew(): void {
    for (const [rkey, set] of this.held) {
      const ids = [...set];
      // Chunks keep each script call short (Redis runs scripts one at a time).
      for (let i = 0; i < ids.length; i += 500) {
        this.script(RENEW, rkey, [this.leaseMs, ...ids.slice(i, i + 500)]).catch((e: unknown) =>
          this.onRenewError(e instanceof Error ? e : new Error(String(e))),
        );
      }
    }
  }
}
