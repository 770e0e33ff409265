/**
 * limits: per-user requests per minute, per-user and global concurrency, and an hourly work budget per user;
 * in process memory, or shared by every replica through Redis.
 *
 * Mount it inside the authentication middleware: it keys on `req.locals.principal.userId`, and a request with no
 * principal lands in one shared anonymous bucket. Only POST requests count.
 *
 * Per POST, in this order (so a refusal by an earlier check takes nothing from a later one):
 *   1. cost budget: the user's work this hour has reached the budget → 429 `cost_budget`;
 *   2. a per-user concurrency slot → 429 `user_concurrent`;
 *   3. a global concurrency slot → 429 `global_concurrent` (the user slot is given back);
 *   4. one request from the per-user minute window → 429 `rpm` (both slots are given back).
 * The slots are released exactly once when the response closes (finished or aborted by the client), and the
 * request's work (what it charged with {@link charge}, else its wall-clock time) is added to the budget.
 *
 * Requests per minute and the budget are fixed windows: rate-limiter-flexible's `RateLimiterRedis` in Redis,
 * and in memory our own {@link FixedWindows} (lib/limits), the arithmetic of rate-limiter-flexible's
 * `RateLimiterMemory` done synchronously. `RateLimiterMemory` answers every call with a promise and a result
 * object and arms a timer per window; its three calls per request (budget read, minute window, budget charge)
 * and the awaits around them were most of the ~2.9 µs per request this middleware cost in an in-process
 * micro-benchmark (~1.0 µs now), and they put microtasks between the request and next(). So the memory store
 * decides synchronously: an admitted request reaches next() in the same tick, and its slots and charge are
 * settled synchronously when its response closes. Redis keeps the asynchronous path.
 *
 * Concurrency is a semaphore of our own, because a rate-limiter counter expires as a whole: when its window ends
 * while requests are still running, the count restarts at 0 and admits too many, and the late releases then drive
 * it negative. In Redis each slot is a member of a sorted set scored by its own expiry (a lease, renewed while the
 * request runs), so a crashed replica's slots lapse one by one and a live replica's never do; in memory a slot is
 * a plain counter.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RateLimiterRedis } from 'rate-limiter-flexible';
import { type Refusal, refusal } from '../../lib/errors.js';
import {
  BUDGET_WINDOW_SECONDS,
  CONCURRENCY_RETRY_MS,
  FixedWindows,
  type InflightScope,
  LIMIT_DEFAULTS,
  LIMIT_MESSAGES,
  type LimitReason,
  type LimitRefusalData,
  RPM_WINDOW_SECONDS,
  isLimitValue,
  parseLimitsEnv,
  retryAfterSeconds,
  workMs,
} from '../../lib/limits.js';
import { parseRequest } from '../internal/parse-step.js';
import { localsOf, sendInternalError, sendRefusal, stderrLogger } from '../internal/respond.js';
import { badOption } from '../internal/options.js';
import type { Logger, Middleware } from '../types.js';

const NAME = 'limits';

/**
 * The part of a Redis client the limiter uses. An ioredis `Redis` instance fits (create it with
 * {@link redisClientOptions}); rate-limiter-flexible also calls `defineCommand`, `multi` and `del` on it.
 */
export interface RedisClientLike {
  /** ioredis connection status; commands are sent only while it is `ready`. */
  readonly status: string;
  eval(script: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>;
  evalsha(sha: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>;
  zrem(key: string, ...members: string[]): Promise<number>;
}

/** What to do while Redis cannot be reached. */
export type OutagePolicy = 'fail-open' | 'fail-closed';

/** Keep the limits in Redis, shared by every replica using the same Redis and `keyPrefix`. */
export interface RedisStoreOptions {
  /** The client (ioredis). Create it with `redisClientOptions` so no command waits in an offline queue. */
  redis: RedisClientLike;
  /**
   * Required. `fail-open`: while Redis is unreachable each replica enforces the same limits in its own memory
   * (so R replicas admit up to R times the limits). `fail-closed`: refuse with 503 until Redis is back.
   */
  onOutage: OutagePolicy;
  /** Prefix of every key the limiter writes. Default `mcpware:limits`. */
  keyPrefix?: string;
  /** Longest wait for one Redis answer before the outage policy applies, in ms. Default 500. */
  timeoutMs?: number;
  /**
   * Lifetime of a concurrency slot in Redis, in ms, renewed every third of it while the request runs; the slots
   * of a replica that died lapse after at most this long. Default 60000.
   */
  slotLeaseMs?: number;
  /** After a Redis failure, go straight to the outage policy for this long before trying Redis again, in ms. Default 1000. */
  retryIntervalMs?: number;
}

/**
 * Observation hooks (metrics). Each is called synchronously; an exception thrown by a hook is logged and ignored.
 */
export interface LimitsHooks {
  /** A request was refused by a limit (429). */
  onDenied?(reason: LimitReason): void;
  /** This process's number of requests holding a slot of `scope` changed to `value`. */
  onInflight?(scope: InflightScope, value: number): void;
  /** Budgeted work was recorded when a request closed: `ms` charged by the request, or its wall-clock time. */
  onCharge?(ms: number, source: 'charged' | 'wall_clock'): void;
  /**
   * A Redis operation failed or timed out. `outcome`: `insurance` (fail-open: answered from this process's
   * memory), `refused` (fail-closed: the request got 503), `dropped` (a release, renewal or charge was lost).
   */
  onStoreError?(error: Error, outcome: 'insurance' | 'refused' | 'dropped'): void;
}

export interface LimitsOptions {
  /** Requests per user per minute (fixed 60-second window from the user's first request). 0 = off. Default 600. */
  perUserRpm?: number;
  /** Requests of one user in flight at once. 0 = off. Default 8. */
  perUserConcurrency?: number;
  /** Requests in flight at once, all users together. 0 = off. Default 64. */
  globalConcurrency?: number;
  /** Milliseconds of work per user per hour (fixed window from the first charge). 0 = off. Default 1800000. */
  costBudgetPerHour?: number;
  /** `'memory'` (default: this process only) or a Redis store shared by replicas. */
  store?: 'memory' | RedisStoreOptions;
  hooks?: LimitsHooks;
  /** Where store outages and hook failures are reported. Default: stderr. */
  logger?: Logger;
}

/** Counts for tests and health checks. */
export interface LimitsStats {
  /** Requests of this process holding a slot, per scope. */
  inflight: Record<InflightScope, number>;
  /** Keys holding a slot in this process's in-memory semaphores (the store, or the fail-open insurance). */
  memorySlotKeys: number;
  /** Concurrency slots this process holds in Redis (and renews). */
  redisSlots: number;
  /** True while Redis is considered unreachable. */
  storeDown: boolean;
}

export type LimitsMiddleware = Middleware & {
  /** Current counts. */
  stats(): LimitsStats;
};

/**
 * Record work done for the request, in milliseconds (several calls add up). When the response closes the
 * total, if anything was charged, replaces the wall-clock time in the user's hourly budget. A non-finite value
 * is ignored; a negative total counts as 0. Harmless when no limits middleware runs.
 */
export function charge(req: IncomingMessage, ms: number): void {
  if (typeof ms !== 'number' || !Number.isFinite(ms)) return;
  const locals = localsOf(req);
  locals.chargedMs = (locals.chargedMs ?? 0) + ms;
}

// ---------------------------------------------------------------------------------------------------------------
// Backends: one in memory, one in Redis. Both answer the same five questions.

type RpmResult = { ok: true } | { ok: false; msBeforeNext: number };

interface Backend {
  readonly name: 'memory' | 'redis';
  /** Work used in the current budget window, or null when the user has no window open. */
  budgetUsed(key: string): Promise<{ used: number; msBeforeNext: number } | null>;
  chargeBudget(key: string, ms: number): Promise<void>;
  takeRpm(key: string): Promise<RpmResult>;
  /** Take a slot named `token`; false when the semaphore is full. */
  acquire(scope: InflightScope, key: string, limit: number, token: string): Promise<boolean>;
  release(scope: InflightScope, key: string, token: string): Promise<void>;
}

interface Windows {
  rpm: number;
  budget: number;
}

type RateLimiterModule = typeof import('rate-limiter-flexible');

/**
 * rate-limiter-flexible, loaded the first time a Redis store is configured: only the Redis windows use it, and its
 * index loads every store it has (cluster, Mongo, MySQL, …): ~10 MB of resident memory in a process that loads
 * nothing else, which a memory store never needs.
 */
let rateLimiterModule: Promise<RateLimiterModule> | undefined;
function loadRateLimiter(): Promise<RateLimiterModule> {
  rateLimiterModule ??= import('rate-limiter-flexible').then(
    // A CommonJS module imported from ESM may arrive as its namespace's default export only.
    (m) => ('RateLimiterRedis' in m ? m : (m as { default: RateLimiterModule }).default),
  );
  return rateLimiterModule;
}

/** The Redis windows, built once rate-limiter-flexible has loaded. */
interface RedisWindows {
  rpm: RateLimiterRedis | undefined;
  budget: RateLimiterRedis | undefined;
  /** rate-limiter-flexible's RateLimiterRes: a rejection carrying one is the limit, anything else a failure. */
  isLimit(e: unknown): e is { msBeforeNext: number };
}

/** Idle keys a semaphore keeps at least before dropping them (see {@link MemorySemaphore}). */
const IDLE_KEYS_KEPT = 1024;

/**
 * A counting semaphore in process memory. A key whose count returns to 0 stays for a while (idle), so that its
 * next request updates the entry instead of inserting it again: an insert and a delete per request cost ~0.2 µs,
 * because V8 rebuilds a Map's table as entries keep leaving it. Idle keys are dropped all at once when there are
 * more than 1024 of them and more than keys holding a slot, so they stay bounded.
 */
class MemorySemaphore {
  private readonly counts = new Map<string, number>();
  private idle = 0;
  tryAcquire(key: string, limit: number): boolean {
    const n = this.counts.get(key);
    const count = n ?? 0;
    if (count >= limit) return false;
    if (n === 0) this.idle--;
    this.counts.set(key, count + 1);
    return true;
  }
  release(key: string): void {
    const n = this.counts.get(key);
    if (n === undefined || n === 0) return;
    if (n > 1) {
      this.counts.set(key, n - 1);
      return;
    }
    this.counts.set(key, 0);
    if (++this.idle > IDLE_KEYS_KEPT && this.idle > this.counts.size - this.idle) this.dropIdle();
  }
  /** Keys holding at least one slot. */
  get size(): number {
    return this.counts.size - this.idle;
  }
  private dropIdle(): void {
    for (const [key, n] of this.counts) if (n === 0) this.counts.delete(key);
    this.idle = 0;
  }
}

const RPM_OK: RpmResult = Object.freeze({ ok: true });

/**
 * The store in process memory, also the fail-open insurance behind Redis. All of it is synchronous: the memory
 * store's request path uses the semaphores and the windows directly (see `admitInMemory`); the {@link Backend}
 * methods wrap them for the insurance, which the limiter awaits like Redis. Times come from `performance.now()`,
 * which does not go back when the wall clock is set.
 */
class MemoryBackend implements Backend {
  readonly name = 'memory';
  readonly sem: Record<InflightScope, MemorySemaphore> = {
    user: new MemorySemaphore(),
    global: new MemorySemaphore(),
  };
  /** The per-user minute windows and budget windows; undefined when that limit is off. */
  readonly rpm: FixedWindows | undefined;
  readonly budget: FixedWindows | undefined;

  constructor(private readonly w: Windows) {
    this.rpm = w.rpm > 0 ? new FixedWindows(RPM_WINDOW_SECONDS * 1000) : undefined;
    this.budget = w.budget > 0 ? new FixedWindows(BUDGET_WINDOW_SECONDS * 1000) : undefined;
  }
  async budgetUsed(key: string): Promise<{ used: number; msBeforeNext: number } | null> {
    const now = performance.now();
    const used = this.budget!.count(key, now);
    // An open window has a count: only charges above 0 open one.
    return used > 0 ? { used, msBeforeNext: this.budget!.msLeft(key, now) } : null;
  }
  async chargeBudget(key: string, ms: number): Promise<void> {
    this.chargeNow(key, ms);
  }
  chargeNow(key: string, ms: number): void {
    this.budget!.add(key, ms, performance.now());
  }
  async takeRpm(key: string): Promise<RpmResult> {
    const now = performance.now();
    if (this.rpm!.add(key, 1, now) <= this.w.rpm) return RPM_OK;
    return { ok: false, msBeforeNext: this.rpm!.msLeft(key, now) };
  }
  async acquire(scope: InflightScope, key: string, limit: number): Promise<boolean> {
    return this.sem[scope].tryAcquire(key, limit);
  }
  async release(scope: InflightScope, key: string): Promise<void> {
    this.sem[scope].release(key);
  }
  slotKeys(): number {
    return this.sem.user.size + this.sem.global.size;
  }
}

// Take a slot: drop lapsed slots, count, add ours scored by its expiry (Redis server time, so replicas' clocks do
// not matter), and let the whole key expire with its latest slot. Returns {1, count} or {0, count}.
const ACQUIRE_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local n = redis.call('ZCARD', KEYS[1])
if n >= tonumber(ARGV[1]) then return {0, n} end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
redis.call('PEXPIREAT', KEYS[1], last[2])
return {1, n + 1}
`;

// Renew our live slots (XX: a slot that already lapsed or was released is not brought back), drop lapsed ones,
// and move the key's expiry to its latest slot.
const RENEW_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local exp = now + tonumber(ARGV[1])
for i = 2, #ARGV do redis.call('ZADD', KEYS[1], 'XX', exp, ARGV[i]) end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
if last[2] then redis.call('PEXPIREAT', KEYS[1], last[2]) end
return redis.call('ZCARD', KEYS[1])
`;

const sha1 = (s: string): string => createHash('sha1').update(s).digest('hex');

class RedisNotReadyError extends Error {
  constructor() {
    super('Redis connection is not ready');
    this.name = 'RedisNotReadyError';
  }
}

class RedisBackend implements Backend {
  readonly name = 'redis';
  private readonly windows: Promise<RedisWindows>;
  private readonly acquireSha = sha1(ACQUIRE_LUA);
  private readonly renewSha = sha1(RENEW_LUA);
  /** Slots this process holds, per Redis key: renewed on a timer until released. */
  readonly held = new Map<string, Set<string>>();
  private heldCount = 0;
  /** Slots being acquired right now, and those of them released (given up on) before Redis answered. */
  private readonly pending = new Set<string>();
  private readonly cancelled = new Set<string>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly client: RedisClientLike,
    private readonly prefix: string,
    w: Windows,
    private readonly leaseMs: number,
    private readonly onRenewError: (e: Error) => void,
  ) {
    const common = { storeClient: client, rejectIfRedisNotReady: true, inMemoryBlockOnConsumed: 0 };
    this.windows = loadRateLimiter().then(({ RateLimiterRedis, RateLimiterRes }) => ({
      rpm:
        w.rpm > 0
          ? new RateLimiterRedis({
              ...common,
              keyPrefix: `${prefix}:rpm`,
              points: w.rpm,
              duration: RPM_WINDOW_SECONDS,
            })
          : undefined,
      budget:
        w.budget > 0
          ? new RateLimiterRedis({
              ...common,
              keyPrefix: `${prefix}:budget`,
              points: w.budget,
              duration: BUDGET_WINDOW_SECONDS,
            })
          : undefined,
      isLimit: (e: unknown): e is { msBeforeNext: number } => e instanceof RateLimiterRes,
    }));
    // A failed load reaches each request through the methods below (a store failure); not an unhandled rejection.
    this.windows.catch(() => {});
  }

  private ready(): void {
    if (this.client.status !== 'ready') throw new RedisNotReadyError();
  }

  async budgetUsed(key: string): Promise<{ used: number; msBeforeNext: number } | null> {
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

  /** EVALSHA, loading the script with EVAL when Redis does not know it (first use, or after a restart). */
  private async script(sha: string, lua: string, key: string, args: (string | number)[]): Promise<unknown> {
    this.ready();
    try {
      return await this.client.evalsha(sha, 1, key, ...args);
    } catch (e) {
      if (e instanceof Error && e.message.startsWith('NOSCRIPT'))
        return this.client.eval(lua, 1, key, ...args);
      throw e;
    }
  }

  private slotKey(scope: InflightScope, key: string): string {
    return scope === 'global' ? `${this.prefix}:conc:global` : `${this.prefix}:conc:user:${key}`;
  }

  async acquire(scope: InflightScope, key: string, limit: number, token: string): Promise<boolean> {
    const rkey = this.slotKey(scope, key);
    let r: unknown;
    this.pending.add(token);
    try {
      r = await this.script(this.acquireSha, ACQUIRE_LUA, rkey, [limit, this.leaseMs, token]);
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
        this.script(this.renewSha, RENEW_LUA, rkey, [this.leaseMs, ...ids.slice(i, i + 500)]).catch(
          (e: unknown) => this.onRenewError(e instanceof Error ? e : new Error(String(e))),
        );
      }
    }
  }

  slotCount(): number {
    return this.heldCount;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The limiter: a primary backend, optionally a fail-open insurance, bounded waits and outage bookkeeping.

class StoreUnavailableError extends Error {
  constructor(cause: Error) {
    super(`limits: store unavailable: ${cause.message}`);
    this.name = 'StoreUnavailableError';
  }
}

class StoreTimeoutError extends Error {
  constructor(ms: number) {
    super(`Redis did not answer within ${ms} ms`);
    this.name = 'StoreTimeoutError';
  }
}

interface Slot {
  scope: InflightScope;
  key: string;
  token: string;
  backend: Backend;
}

/**
 * Resolve with `p`, or reject after `ms`. `onTimeout` runs when we give up (the command may still run in Redis
 * later: a slot taken then must be released).
 */
function withTimeout<T>(p: Promise<T>, ms: number, onTimeout?: () => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      reject(new StoreTimeoutError(ms));
      onTimeout?.();
    }, ms);
    p.then(
      (v) => {
        if (!timedOut) {
          clearTimeout(timer);
          resolve(v);
        }
      },
      (e: unknown) => {
        if (!timedOut) {
          clearTimeout(timer);
          reject(e);
        }
      },
    );
  });
}

const asError = (e: unknown): Error => (e instanceof Error ? e : new Error(String(e)));

class Limiter {
  private downUntil = 0;
  private down = false;

  constructor(
    readonly primary: Backend,
    /** Memory insurance (fail-open) when the primary is Redis; undefined for fail-closed or a memory store. */
    readonly insurance: MemoryBackend | undefined,
    private readonly timeoutMs: number,
    private readonly retryIntervalMs: number,
    private readonly logger: Logger,
    private readonly hooks: LimitsHooks,
    private readonly callHook: (f: () => void) => void,
  ) {}

  get storeDown(): boolean {
    return this.down;
  }

  /** A Redis operation failed: report it, and answer without Redis for `retryIntervalMs`. */
  failed(e: Error, outcome: 'insurance' | 'refused' | 'dropped'): void {
    this.downUntil = Date.now() + this.retryIntervalMs;
    if (!this.down) {
      this.down = true;
      const policy = this.insurance ? 'failing open on per-process limits' : 'failing closed (503)';
      this.logger.error(`${NAME}: Redis unavailable, ${policy}`, { error: e.message });
    }
    const hook = this.hooks.onStoreError;
    if (hook) this.callHook(() => hook(e, outcome));
  }

  private succeeded(): void {
    if (this.down) {
      this.down = false;
      this.downUntil = 0;
      (this.logger.warn ?? this.logger.error).call(
        this.logger,
        `${NAME}: Redis available again, limits shared again`,
      );
    }
  }

  /**
   * Run `op` on the primary within the timeout; on a store failure run it on the insurance (fail-open) or throw
   * {@link StoreUnavailableError} (fail-closed). A memory primary never fails this way (and its requests do not
   * come here: they are decided synchronously).
   */
  async run<T>(
    op: (b: Backend) => Promise<T>,
    onTimeout?: () => void,
  ): Promise<{ value: T; backend: Backend }> {
    if (this.primary.name === 'memory') return { value: await op(this.primary), backend: this.primary };
    let err: Error | undefined;
    if (Date.now() >= this.downUntil) {
      try {
        const value = await withTimeout(op(this.primary), this.timeoutMs, onTimeout);
        this.succeeded();
        return { value, backend: this.primary };
      } catch (e) {
        err = asError(e);
      }
    }
    // Within retryIntervalMs of a failure Redis is not asked again (err stays undefined): a Redis that
    // swallows commands costs one timeout per interval, not one per request.
    const outcome = this.insurance ? 'insurance' : 'refused';
    if (err) this.failed(err, outcome);
    if (this.insurance) return { value: await op(this.insurance), backend: this.insurance };
    throw new StoreUnavailableError(err ?? new RedisNotReadyError());
  }

  /** Release a slot where it was taken. A lost Redis release is harmless: the slot's lease runs out. */
  release(slot: Slot): void {
    if (slot.backend instanceof MemoryBackend) {
      slot.backend.sem[slot.scope].release(slot.key);
      return;
    }
    const p =
      slot.backend === this.primary && this.primary.name === 'redis'
        ? withTimeout(slot.backend.release(slot.scope, slot.key, slot.token), this.timeoutMs)
        : slot.backend.release(slot.scope, slot.key, slot.token);
    p.catch((e: unknown) => this.failed(asError(e), 'dropped'));
  }

  /** Add work to the budget; a charge lost in an outage is logged through the hook and dropped. */
  charge(key: string, ms: number): void {
    if (this.primary instanceof MemoryBackend) {
      this.primary.chargeNow(key, ms);
      return;
    }
    this.run((b) => b.chargeBudget(key, ms)).catch((e: unknown) => {
      // run() already reported a Redis failure; anything else is unexpected.
      if (!(e instanceof StoreUnavailableError))
        this.logger.error(`${NAME}: charging the budget failed`, { error: asError(e).message });
    });
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Options

const OPTION_NAMES = [
  'perUserRpm',
  'perUserConcurrency',
  'globalConcurrency',
  'costBudgetPerHour',
  'store',
  'hooks',
  'logger',
];
const STORE_OPTION_NAMES = ['redis', 'onOutage', 'keyPrefix', 'timeoutMs', 'slotLeaseMs', 'retryIntervalMs'];
const HOOK_NAMES = ['onDenied', 'onInflight', 'onCharge', 'onStoreError'];

function checkKeys(obj: object, known: readonly string[], where: string): void {
  for (const k of Object.keys(obj)) {
    if (!known.includes(k)) {
      const near = known.find((n) => n.toLowerCase() === k.toLowerCase());
      throw new TypeError(
        `${NAME}: unknown option ${where}"${k}"${near ? `; did you mean "${near}"?` : `; known options: ${known.join(', ')}`}`,
      );
    }
  }
}

function limitValue(opts: LimitsOptions, name: keyof typeof LIMIT_DEFAULTS): number {
  const v = opts[name];
  if (v === undefined) return LIMIT_DEFAULTS[name];
  if (!isLimitValue(v)) throw badOption(NAME, name, v, 'a whole number >= 0 (0 switches it off)');
  return v;
}

function intOption(v: unknown, name: string, dflt: number, min: number, max: number): number {
  if (v === undefined) return dflt;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min || v > max) {
    throw badOption(NAME, name, v, `a whole number from ${min} to ${max}`);
  }
  return v;
}

interface ResolvedStore {
  client: RedisClientLike;
  onOutage: OutagePolicy;
  keyPrefix: string;
  timeoutMs: number;
  slotLeaseMs: number;
  retryIntervalMs: number;
}

function resolveStore(store: unknown): ResolvedStore | undefined {
  if (store === undefined || store === 'memory') return undefined;
  if (store === null || typeof store !== 'object' || Array.isArray(store)) {
    throw badOption(NAME, 'store', store, `'memory' or { redis, onOutage }`);
  }
  checkKeys(store, STORE_OPTION_NAMES, 'store.');
  const s = store as Partial<RedisStoreOptions>;
  const c = s.redis as Partial<RedisClientLike> | undefined;
  if (
    !c ||
    typeof c !== 'object' ||
    typeof c.status !== 'string' ||
    typeof c.eval !== 'function' ||
    typeof c.evalsha !== 'function'
  ) {
    throw badOption(NAME, 'store.redis', c === undefined ? c : '[object]', 'an ioredis client');
  }
  if (s.onOutage !== 'fail-open' && s.onOutage !== 'fail-closed') {
    throw badOption(
      NAME,
      'store.onOutage',
      s.onOutage,
      `'fail-open' or 'fail-closed' (say what happens while Redis is down)`,
    );
  }
  let keyPrefix = 'mcpware:limits';
  if (s.keyPrefix !== undefined) {
    if (typeof s.keyPrefix !== 'string' || s.keyPrefix.length === 0 || s.keyPrefix.length > 200) {
      throw badOption(NAME, 'store.keyPrefix', s.keyPrefix, 'a non-empty string of at most 200 characters');
    }
    keyPrefix = s.keyPrefix;
  }
  return {
    client: c as RedisClientLike,
    onOutage: s.onOutage,
    keyPrefix,
    timeoutMs: intOption(s.timeoutMs, 'store.timeoutMs', 500, 1, 60_000),
    slotLeaseMs: intOption(s.slotLeaseMs, 'store.slotLeaseMs', 60_000, 1_000, 24 * 3600 * 1000),
    retryIntervalMs: intOption(s.retryIntervalMs, 'store.retryIntervalMs', 1000, 0, 60_000),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// The middleware

/** At most this much of a refused body is read to echo its id; longer bodies are answered without one. */
const ID_PEEK_BYTES = 64 * 1024;
/** How long a refusal waits for the body to find the id before it is sent without one. */
const ID_PEEK_MS = 1000;

/** The id of the request, read from at most 64 KiB of body and within a second; undefined when not readable. */
async function peekId(req: IncomingMessage): Promise<unknown> {
  const known = req.locals?.mcp;
  if (known) return known.id;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(resolve, ID_PEEK_MS, undefined);
  });
  try {
    const p = await Promise.race([parseRequest(req, { limit: ID_PEEK_BYTES, maxDepth: 64 }), late]);
    if (!p) return undefined;
    return 'kind' in p ? p.id : (p as Refusal & { id?: unknown }).id;
  } catch {
    return undefined;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The limits middleware. See the module comment for the order of checks; options are validated here.
 */
export function limits(options: Readonly<LimitsOptions> = {}): LimitsMiddleware {
  if (options === null || typeof options !== 'object') throw badOption(NAME, 'options', options, 'an object');
  if (typeof (options as { on?: unknown }).on === 'function' && 'method' in options) {
    throw new TypeError(`${NAME}: it looks like you wrote app.use(limits); write app.use(limits({ ... }))`);
  }
  checkKeys(options, OPTION_NAMES, '');
  const rpm = limitValue(options, 'perUserRpm');
  const userConc = limitValue(options, 'perUserConcurrency');
  const globalConc = limitValue(options, 'globalConcurrency');
  const budget = limitValue(options, 'costBudgetPerHour');
  const hooks: LimitsHooks = options.hooks ?? {};
  if (typeof hooks !== 'object') throw badOption(NAME, 'hooks', hooks, 'an object of functions');
  checkKeys(hooks, HOOK_NAMES, 'hooks.');
  for (const h of HOOK_NAMES) {
    const f = (hooks as Record<string, unknown>)[h];
    if (f !== undefined && typeof f !== 'function') throw badOption(NAME, `hooks.${h}`, f, 'a function');
  }
  const logger = options.logger ?? stderrLogger;
  if (typeof logger !== 'object' || logger === null || typeof logger.error !== 'function') {
    throw badOption(NAME, 'logger', logger, 'a logger with an error() method');
  }
  const store = resolveStore(options.store);

  const callHook = (f: () => void): void => {
    try {
      f();
    } catch (e) {
      try {
        logger.error(`${NAME}: a hook threw`, { error: asError(e).message });
      } catch {
        // A broken logger must not break the request.
      }
    }
  };

  const inflight: Record<InflightScope, number> = { user: 0, global: 0 };
  const memoryBackend =
    rpm + budget + userConc + globalConc > 0 && (!store || store.onOutage === 'fail-open')
      ? new MemoryBackend({ rpm, budget })
      : undefined;
  let redisBackend: RedisBackend | undefined;
  let limiter: Limiter | undefined;
  if (rpm + budget + userConc + globalConc > 0) {
    if (store) {
      const opts = (store.client as { options?: { enableOfflineQueue?: boolean } }).options;
      if (opts && opts.enableOfflineQueue !== false) {
        (logger.warn ?? logger.error).call(
          logger,
          `${NAME}: the Redis client has its offline queue on; create it with redisClientOptions (enableOfflineQueue: false)`,
        );
      }
      redisBackend = new RedisBackend(
        store.client,
        store.keyPrefix,
        { rpm, budget },
        store.slotLeaseMs,
        (e) => limiter?.failed(e, 'dropped'),
      );
      limiter = new Limiter(
        redisBackend,
        memoryBackend,
        store.timeoutMs,
        store.retryIntervalMs,
        logger,
        hooks,
        callHook,
      );
    } else {
      limiter = new Limiter(memoryBackend!, undefined, 0, 0, logger, hooks, callHook);
    }
  }

  const stats = (): LimitsStats => ({
    inflight: { ...inflight },
    memorySlotKeys: memoryBackend?.slotKeys() ?? 0,
    redisSlots: redisBackend?.slotCount() ?? 0,
    storeDown: limiter?.storeDown ?? false,
  });

  if (!limiter) {
    // Every limit is off: a pass-through.
    const passThrough = function limitsOffMiddleware(
      _req: IncomingMessage,
      _res: ServerResponse,
      next: (err?: unknown) => void,
    ): void {
      next();
    };
    return Object.assign(passThrough, { stats });
  }
  const lim = limiter;

  const setInflight = (scope: InflightScope, delta: number): void => {
    inflight[scope] += delta;
    const hook = hooks.onInflight;
    const value = inflight[scope];
    if (hook) callHook(() => hook(scope, value));
  };

  // Unique per middleware instance, so the Redis slot members of two replicas never collide.
  const instance = randomBytes(9).toString('base64url');
  let seq = 0;

  const takeMemorySlot = (
    backend: MemoryBackend,
    scope: InflightScope,
    key: string,
    limit: number,
    held: Slot[],
  ): boolean => {
    if (!backend.sem[scope].tryAcquire(key, limit)) return false;
    held.push({ scope, key, token: '', backend });
    setInflight(scope, 1);
    return true;
  };

  const takeSlot = async (
    scope: InflightScope,
    key: string,
    limit: number,
    held: Slot[],
  ): Promise<boolean> => {
    const token = `${instance}:${++seq}`;
    const { value: granted, backend } = await lim.run(
      (b) => b.acquire(scope, key, limit, token),
      // Given up on: Redis may still grant the slot later. Release it now; the ZREM queues behind the acquire.
      () => lim.release({ scope, key, token, backend: lim.primary }),
    );
    if (!granted) return false;
    held.push({ scope, key, token, backend });
    setInflight(scope, 1);
    return true;
  };

  const releaseAll = (held: Slot[]): void => {
    // Taken off one by one (not copied out): no array allocated per request.
    while (held.length > 0) {
      const slot = held.shift()!;
      lim.release(slot);
      setInflight(slot.scope, -1);
    }
  };

  const deny = async (
    req: IncomingMessage,
    res: ServerResponse,
    reason: LimitReason,
    waitMs: number,
  ): Promise<void> => {
    const onDenied = hooks.onDenied;
    if (onDenied) callHook(() => onDenied(reason));
    const secs = retryAfterSeconds(waitMs);
    const data: LimitRefusalData = { limit: reason, retryAfterSeconds: secs };
    const id = await peekId(req);
    sendRefusal(req, res, refusal('rate_limited', { message: LIMIT_MESSAGES[reason], data }), NAME, {
      id,
      headers: { 'Retry-After': String(secs) },
      detail: reason,
    });
  };

  /** Refuse without waiting for it: the refusal may read the body for the id. */
  const refuse = (req: IncomingMessage, res: ServerResponse, reason: LimitReason, waitMs: number): void => {
    deny(req, res, reason, waitMs).catch((e: unknown) => sendInternalError(req, res, e, NAME, logger));
  };

  /** When an admitted request's response closes: give its slots back and add its work to the budget. */
  const settle = (req: IncomingMessage, key: string, held: Slot[], admittedAt: number): void => {
    releaseAll(held);
    if (budget > 0) {
      const work = workMs(req.locals?.chargedMs, performance.now() - admittedAt);
      const onCharge = hooks.onCharge;
      if (onCharge) callHook(() => onCharge(work.ms, work.source));
      if (work.ms > 0) lim.charge(key, work.ms);
    }
  };

  /** The bucket of the request's principal. Namespaced so that no user id can share the anonymous bucket. */
  const keyOf = (req: IncomingMessage): string => {
    const userId = req.locals?.principal?.userId;
    return typeof userId === 'string' && userId !== '' ? `u:${userId}` : 'anonymous';
  };

  // A subscriptions/listen stream lives as long as the client wants; holding concurrency slots for it would let a
  // few subscriptions lock their owner out. It still counts against rpm; the dispatcher caps open streams itself.
  // Seen only when the request was parsed before this middleware (the recommended order).
  const isLongLived = (req: IncomingMessage): boolean => {
    const mcp = req.locals?.mcp;
    return mcp?.kind === 'request' && mcp.method === 'subscriptions/listen';
  };

  /**
   * The memory store: the same checks in the same order as {@link handle}, decided synchronously, so an admitted
   * request reaches next() in the same tick, with no promise and no microtask on the way (and nothing can close
   * the response between two checks).
   */
  const admitInMemory = (
    req: IncomingMessage,
    res: ServerResponse,
    next: (err?: unknown) => void,
    m: MemoryBackend,
  ): void => {
    if (res.closed || res.destroyed) return; // the client is gone already: nothing to answer, nothing to hold
    const key = keyOf(req);
    const now = performance.now();
    if (m.budget && m.budget.count(key, now) >= budget) {
      refuse(req, res, 'cost_budget', m.budget.msLeft(key, now));
      return;
    }
    const longLived = isLongLived(req);
    const held: Slot[] = [];
    if (!longLived && userConc > 0 && !takeMemorySlot(m, 'user', key, userConc, held)) {
      refuse(req, res, 'user_concurrent', CONCURRENCY_RETRY_MS);
      return;
    }
    if (!longLived && globalConc > 0 && !takeMemorySlot(m, 'global', 'all', globalConc, held)) {
      releaseAll(held);
      refuse(req, res, 'global_concurrent', CONCURRENCY_RETRY_MS);
      return;
    }
    if (m.rpm && m.rpm.add(key, 1, now) > rpm) {
      releaseAll(held);
      refuse(req, res, 'rpm', m.rpm.msLeft(key, now));
      return;
    }
    const admittedAt = now; // the checks took no measurable time
    res.once('close', () => settle(req, key, held, admittedAt));
    next();
  };

  /** Redis: the same checks, each awaiting the store (bounded by its timeout, with the outage policy). */
  const handle = async (
    req: IncomingMessage,
    res: ServerResponse,
    next: (err?: unknown) => void,
  ): Promise<void> => {
    const key = keyOf(req);
    const held: Slot[] = [];
    let closed = res.closed || res.destroyed;
    let admittedAt = -1;
    const onClose = (): void => {
      closed = true;
      // Before admission the acquiring code sees `closed` and gives its slots back itself.
      if (admittedAt >= 0) settle(req, key, held, admittedAt);
    };
    if (closed) return; // the client is gone already: nothing to answer, nothing to hold
    res.once('close', onClose);
    try {
      if (budget > 0) {
        const { value: used } = await lim.run((b) => b.budgetUsed(key));
        if (used && used.used >= budget) return await deny(req, res, 'cost_budget', used.msBeforeNext);
      }
      const longLived = isLongLived(req);
      if (!longLived && userConc > 0 && !(await takeSlot('user', key, userConc, held))) {
        return await deny(req, res, 'user_concurrent', CONCURRENCY_RETRY_MS);
      }
      if (closed) return releaseAll(held);
      if (!longLived && globalConc > 0 && !(await takeSlot('global', 'all', globalConc, held))) {
        releaseAll(held);
        return await deny(req, res, 'global_concurrent', CONCURRENCY_RETRY_MS);
      }
      if (closed) return releaseAll(held);
      if (rpm > 0) {
        const { value: taken } = await lim.run((b) => b.takeRpm(key));
        if (!taken.ok) {
          releaseAll(held);
          return await deny(req, res, 'rpm', taken.msBeforeNext);
        }
      }
      if (closed) return releaseAll(held);
      admittedAt = performance.now();
    } catch (e) {
      releaseAll(held);
      if (e instanceof StoreUnavailableError) {
        const id = await peekId(req);
        sendRefusal(
          req,
          res,
          refusal('unavailable', {
            message: 'Rate limiting is unavailable; retry shortly',
            data: { retryAfterSeconds: 1 },
          }),
          NAME,
          { id, headers: { 'Retry-After': '1' }, detail: 'store_unavailable' },
        );
        return;
      }
      throw e;
    }
    next();
  };

  const memory = lim.primary instanceof MemoryBackend ? lim.primary : undefined;
  const middleware = function limitsMiddleware(
    req: IncomingMessage,
    res: ServerResponse,
    next: (err?: unknown) => void,
  ): void {
    if (req.method !== 'POST') {
      next();
      return;
    }
    if (memory) {
      // Like the rejected promise of handle(): an exception, also one from next(), is a 500.
      try {
        admitInMemory(req, res, next, memory);
      } catch (e) {
        sendInternalError(req, res, e, NAME, logger);
      }
      return;
    }
    handle(req, res, next).catch((e: unknown) => sendInternalError(req, res, e, NAME, logger));
  };
  return Object.assign(middleware, { stats });
}

/** Options for {@link limitsOptionsFromEnv} beyond what the environment says. */
export interface LimitsEnvOptions {
  /** The Redis client, required when `REDIS_URL` is set (create it from that URL with `redisClientOptions`). */
  redis?: RedisClientLike;
  /** What to do while Redis is down. Default `fail-open`. */
  onOutage?: OutagePolicy;
  hooks?: LimitsHooks;
  logger?: Logger;
}

/**
 * The limits options the demo server reads from the environment: `MCP_RPM` (600), `MCP_USER_CONCURRENCY` (8),
 * `MCP_GLOBAL_CONCURRENCY` (64), `MCP_COST_BUDGET_MS` per user per hour (1800000), each 0 = off; with
 * `REDIS_URL` the limits live in that Redis (pass the client). Throws a TypeError naming a bad variable.
 */
export function limitsOptionsFromEnv(
  env: Readonly<Record<string, string | undefined>>,
  extra: LimitsEnvOptions = {},
): LimitsOptions {
  const r = parseLimitsEnv(env);
  if (!r.ok) throw new TypeError(`${NAME}: ${r.message}`);
  const out: LimitsOptions = {
    perUserRpm: r.value.perUserRpm,
    perUserConcurrency: r.value.perUserConcurrency,
    globalConcurrency: r.value.globalConcurrency,
    costBudgetPerHour: r.value.costBudgetPerHour,
  };
  if (r.value.redisUrl !== undefined && !extra.redis) {
    throw new TypeError(
      `${NAME}: REDIS_URL is set; pass the Redis client created from it (new Redis(url, redisClientOptions))`,
    );
  }
  if (extra.redis) out.store = { redis: extra.redis, onOutage: extra.onOutage ?? 'fail-open' };
  if (extra.hooks) out.hooks = extra.hooks;
  if (extra.logger) out.logger = extra.logger;
  return out;
}

/** {@link limits} configured from the environment (see {@link limitsOptionsFromEnv}). */
export function limitsFromEnv(
  env: Readonly<Record<string, string | undefined>>,
  extra: LimitsEnvOptions = {},
): LimitsMiddleware {
  return limits(limitsOptionsFromEnv(env, extra));
}

export { redisClientOptions } from '../../lib/limits.js';
