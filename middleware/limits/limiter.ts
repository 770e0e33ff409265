/**
 * The limiter: a primary store, and when the primary is Redis, the outage policy around it (a bounded wait per
 * answer, then the fail-open insurance or a refusal), the slots' names, and the release and charge that follow a
 * request.
 * @see docs/middleware/limits.md
 */
import { McpwareError } from '../../lib/errors.js';
import { randomBytes } from 'node:crypto';
import { BUDGET_WINDOW_SECONDS, type InflightScope, RPM_WINDOW_SECONDS } from '../../lib/limits.js';
import { log } from '../internal/log.js';
import { type MaybePromise, isThenable } from '../internal/maybe-promise.js';
import type { Logger } from '../types.js';
import { type MemoryStore, createMemoryStore } from './memory-store.js';
import type { LimitsConfig, LimitsHooks } from './options.js';
import { type RedisStore, createRedisStore } from './redis-store.js';
import type { BudgetUse, LimitsStore, RpmResult, StoreWindows } from './store.js';

/** The store could not answer and the policy is fail-closed: the request gets a 503. */
export class StoreUnavailableError extends McpwareError<'ERR_LIMITS_STORE_UNAVAILABLE'> {
  constructor(cause?: Error) {
    super('ERR_LIMITS_STORE_UNAVAILABLE', `limits: store unavailable${cause ? `: ${cause.message}` : ''}`, {
      cause,
    });
  }
}

/** The store did not answer within `timeoutMs`. */
export class StoreTimeoutError extends McpwareError<'ERR_LIMITS_STORE_TIMEOUT'> {
  constructor(ms: number) {
    super('ERR_LIMITS_STORE_TIMEOUT', `Redis did not answer within ${ms} ms`);
  }
}

/** A concurrency slot a request holds, and the store that holds it. */
export interface Slot {
  readonly scope: InflightScope;
  readonly key: string;
  readonly token: string;
  readonly store: LimitsStore;
}

/** What to do when the primary (Redis) fails. */
export interface OutageOptions {
  /** The fail-open insurance in process memory; undefined for fail-closed. */
  insurance: LimitsStore | undefined;
  /** Longest wait for one answer of the primary. */
  timeoutMs: number;
  /** After a failure, the primary is not asked again for this long. */
  retryIntervalMs: number;
  logger: Logger;
  onStoreError: NonNullable<LimitsHooks['onStoreError']>;
}

export interface Limiter {
  budgetUsed(key: string): MaybePromise<BudgetUse | null>;
  takeRpm(key: string): MaybePromise<RpmResult>;
  /** A slot of `scope` for `key`, or undefined when `limit` are taken. */
  acquire(scope: InflightScope, key: string, limit: number): MaybePromise<Slot | undefined>;
  /** Give a slot back where it was taken; never throws, and a release lost in an outage is reported. */
  release(slot: Slot): void;
  /** Add work to the key's budget; a charge lost in an outage is reported and dropped. */
  charge(key: string, ms: number): void;
  /** Report a lost operation of the primary (a renewal). */
  dropped(error: Error): void;
  /** True while the primary is considered unreachable. */
  readonly storeDown: boolean;
}

/**
 * Resolve with `p`, or reject after `ms`. `onTimeout` runs when the wait is given up: the command may still run
 * in Redis later, and a slot taken then must be released.
 */
export function withTimeout<T>(p: PromiseLike<T>, ms: number, onTimeout?: () => void): Promise<T> {
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

/**
 * A limiter over `primary`. Without `outage` (the memory store) every call goes straight to the primary and
 * answers as it does, synchronously.
 */
export function createLimiter(primary: LimitsStore, outage?: OutageOptions): Limiter {
  // Unique per limiter, so the slot names of two replicas never collide in Redis.
  const instance = randomBytes(9).toString('base64url');
  let seq = 0;
  /** The primary is not asked before this time (ms since the epoch) after a failure. */
  let downUntil = 0;
  let down = false;

  const failed = (o: OutageOptions, e: Error, outcome: 'insurance' | 'refused' | 'dropped'): void => {
    downUntil = Date.now() + o.retryIntervalMs;
    if (!down) {
      down = true;
      const policy = o.insurance ? 'failing open on per-process limits' : 'failing closed (503)';
      log(o.logger, 'error', `limits: Redis unavailable, ${policy}`, { error: e.message });
    }
    o.onStoreError(e, outcome);
  };

  const succeeded = (o: OutageOptions): void => {
    if (!down) return;
    down = false;
    downUntil = 0;
    log(o.logger, 'warn', 'limits: Redis available again, limits shared again');
  };

  /**
   * `op` on the primary within the timeout; on a failure `op` on the insurance (fail-open), or a
   * {@link StoreUnavailableError} (fail-closed). Within `retryIntervalMs` of a failure the primary is not asked
   * at all, so a Redis that swallows commands costs one timeout per interval, not one per request.
   */
  const guarded = async <T>(
    o: OutageOptions,
    op: (s: LimitsStore) => MaybePromise<T>,
    onTimeout?: () => void,
  ): Promise<T> => {
    let err: Error | undefined;
    if (Date.now() >= downUntil) {
      try {
        const value = await withTimeout(Promise.resolve(op(primary)), o.timeoutMs, onTimeout);
        succeeded(o);
        return value;
      } catch (e) {
        err = asError(e);
      }
    }
    if (err) failed(o, err, o.insurance ? 'insurance' : 'refused');
    if (o.insurance) return op(o.insurance);
    throw new StoreUnavailableError(err);
  };

  const release = (slot: Slot): void => {
    const r = slot.store.release(slot.scope, slot.key, slot.token);
    if (!isThenable(r) || !outage) return;
    // A lost release is harmless: the slot's lease runs out.
    withTimeout(r, outage.timeoutMs).catch((e: unknown) => failed(outage, asError(e), 'dropped'));
  };

  // Without an outage policy each call goes to the primary as it is, so a synchronous store answers synchronously.
  return {
    budgetUsed: (key) => (outage ? guarded(outage, (s) => s.budgetUsed(key)) : primary.budgetUsed(key)),
    takeRpm: (key) => (outage ? guarded(outage, (s) => s.takeRpm(key)) : primary.takeRpm(key)),
    acquire(scope, key, limit) {
      // Only Redis names its slots: there they are members of a set that every replica shares.
      const token = primary.name === 'redis' ? `${instance}:${++seq}` : '';
      const slot: { -readonly [K in keyof Slot]: Slot[K] } = { scope, key, token, store: primary };
      const granted = outage
        ? guarded(
            outage,
            (s) => {
              slot.store = s;
              return s.acquire(scope, key, limit, token);
            },
            // Given up on: Redis may still grant the slot later. Release it now; the ZREM queues behind the acquire.
            () => release({ scope, key, token, store: primary }),
          )
        : primary.acquire(scope, key, limit, token);
      if (isThenable(granted)) return granted.then((ok) => (ok ? slot : undefined));
      return granted ? slot : undefined;
    },
    release,
    charge(key, ms) {
      if (!outage) {
        void primary.chargeBudget(key, ms);
        return;
      }
      guarded(outage, (s) => s.chargeBudget(key, ms)).catch((e: unknown) => {
        // A store failure was reported already; anything else is unexpected.
        if (!(e instanceof StoreUnavailableError)) {
          log(outage.logger, 'error', 'limits: charging the budget failed', { error: asError(e).message });
        }
      });
    },
    dropped: (e) => {
      if (outage) failed(outage, e, 'dropped');
    },
    get storeDown() {
      return down;
    },
  };
}

/**
 * The stores and the limiter of a configuration: the memory store alone; or Redis, with the memory store as its
 * fail-open insurance, or with none for fail-closed.
 */
export function createStores(config: LimitsConfig): {
  limiter: Limiter;
  memory: MemoryStore | undefined;
  redis: RedisStore | undefined;
} {
  const { store } = config;
  const windows: StoreWindows = {};
  if (config.perUserRpm > 0) windows.rpm = { limit: config.perUserRpm, seconds: RPM_WINDOW_SECONDS };
  if (config.costBudgetPerHour > 0) {
    windows.budget = { limit: config.costBudgetPerHour, seconds: BUDGET_WINDOW_SECONDS };
  }
  const memory = !store || store.onOutage === 'fail-open' ? createMemoryStore(windows) : undefined;
  if (!store) return { limiter: createLimiter(memory!), memory, redis: undefined };
  const redis = createRedisStore({
    client: store.client,
    keyPrefix: store.keyPrefix,
    windows,
    leaseMs: store.slotLeaseMs,
    onRenewError: (e) => limiter.dropped(e),
    logger: config.logger,
  });
  const limiter = createLimiter(redis, {
    insurance: memory,
    timeoutMs: store.timeoutMs,
    retryIntervalMs: store.retryIntervalMs,
    logger: config.logger,
    onStoreError: config.hooks.onStoreError,
  });
  return { limiter, memory, redis };
}
