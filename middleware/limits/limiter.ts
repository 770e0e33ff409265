/**
 * The limiter: a primary store, and when the primary is Redis, the outage policy around it (a bounded wait per
 * answer, then the fail-open insurance or a refusal), the admissions' names, and the release and charge that
 * follow a request.
 * @see docs/middleware/limits.md
 */
import { McpwareError } from '../../lib/errors.js';
import { randomBytes } from 'node:crypto';
import { BUDGET_WINDOW_SECONDS, type LimitReason, RPM_WINDOW_SECONDS } from '../../lib/limits.js';
import { log } from '../../core/log.js';
import { type Awaitable, isThenable } from '../../core/maybe-promise.js';
import type { RequestTrace } from '../../core/trace.js';
import type { Logger } from '../../core/types.js';
import { type MemoryStore, createMemoryStore } from './memory-store.js';
import type { LimitsConfig, LimitsHooks } from './options.js';
import { type RedisStore, createRedisStore } from './redis-store.js';
import { type AdmitResult, type Held, type LimitsStore, NO_SLOTS, type StoreLimits } from './store.js';

/** What a release given up on gives back: whatever the admission may have taken. */
const ALL_SLOTS: Held = Object.freeze({ user: true, global: true });

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

/** An admitted request: the slots it holds, and the store that holds them. */
export interface Ticket {
  readonly key: string;
  readonly token: string;
  readonly held: Held;
  readonly store: LimitsStore;
}

/**
 * The limiter's verdict: admitted with its ticket (and, when it took the key's last request of the minute, how
 * long the window still runs: see {@link AdmitResult}), or the first check that refused.
 */
export type Verdict =
  | { readonly ok: true; readonly ticket: Ticket; readonly lastRequestMs?: number }
  | { readonly ok: false; readonly reason: LimitReason; readonly waitMs: number };

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
  /**
   * The checks of one request for `key` (see {@link LimitsStore.admit}); `slots` false takes no slot, `budget`
   * false skips the budget. With a `trace`, a call of the Redis store adds a {@link STORE_EVENT} to it.
   */
  admit(key: string, slots: boolean, budget?: boolean, trace?: RequestTrace): Awaitable<Verdict>;
  /**
   * Give the ticket's slots back where they were taken and add `chargeMs` to the key's budget; never throws. A
   * release lost in an outage is reported (the slots' leases run out); its charge goes to the insurance. When
   * the ticket took a set's last free slot (`held.lastSlot`), a promise the answer waits for: it resolves once
   * the store applied the release or it was given up on, and never rejects. With a `trace`, a call of the Redis
   * store adds a {@link STORE_EVENT} to it.
   */
  release(ticket: Ticket, chargeMs: number, trace?: RequestTrace): Promise<void> | void;
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

/** The trace event of a call of the Redis store made for a request. */
export const STORE_EVENT = 'mcpware.limits.store';

/**
 * How a store call ended: Redis answered (`ok`, whatever its verdict); the fail-open insurance answered
 * (`insurance`: Redis failed, or is left alone after a failure); fail-closed, the request is refused
 * (`refused`); the call failed otherwise (`error`: a release Redis did not apply).
 */
type StoreOutcome = 'ok' | 'insurance' | 'refused' | 'error';

/** Add the store call begun at `started` (`performance.now()`) to the trace, its duration to 0.01 ms. */
function traceStore(
  trace: RequestTrace,
  op: 'admit' | 'release',
  started: number,
  outcome: StoreOutcome,
): void {
  const duration = Math.round((performance.now() - started) * 100) / 100;
  trace.event(STORE_EVENT, { op, duration_ms: duration, outcome });
}

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
    op: (s: LimitsStore) => Awaitable<T>,
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

  const verdictOf = (key: string, token: string, r: AdmitResult, store: LimitsStore): Verdict =>
    r.ok ? { ok: true, ticket: { key, token, held: r.held, store }, lastRequestMs: r.lastRequestMs } : r;

  const release = (t: Ticket, chargeMs: number, trace?: RequestTrace): Promise<void> | void => {
    // Timed only for a request with a trace, and only a call of Redis.
    const started = trace !== undefined && t.store.name === 'redis' ? performance.now() : -1;
    const r = t.store.release(t.key, t.token, t.held, chargeMs);
    if (!isThenable(r) || !outage) return;
    // A lost release is harmless: the slots' leases run out. Its work still counts, in this process's memory.
    const done = withTimeout(r, outage.timeoutMs).then(
      () => {
        if (started >= 0) traceStore(trace!, 'release', started, 'ok');
      },
      (e: unknown) => {
        if (started >= 0) traceStore(trace!, 'release', started, 'error');
        failed(outage, asError(e), 'dropped');
        if (chargeMs > 0) outage.insurance?.release(t.key, '', NO_SLOTS, chargeMs);
      },
    );
    return t.held.lastSlot ? done : undefined;
  };

  // Without an outage policy each call goes to the primary as it is, so a synchronous store answers synchronously.
  return {
    admit(key, slots, budget = true, trace) {
      // Only Redis names its admissions: there the slots are members of sets that every replica shares.
      const token = primary.name === 'redis' ? `${instance}:${++seq}` : '';
      if (!outage) {
        const r = primary.admit(key, token, slots, budget);
        return isThenable(r)
          ? r.then((v) => verdictOf(key, token, v, primary))
          : verdictOf(key, token, r, primary);
      }
      let store = primary;
      // Timed only for a request with a trace.
      const started = trace === undefined ? -1 : performance.now();
      const verdict = guarded(
        outage,
        (s) => {
          store = s;
          return s.admit(key, token, slots, budget);
        },
        // Given up on: Redis may still take the slots later. Release them now; the release queues behind.
        () => release({ key, token, held: ALL_SLOTS, store: primary }, 0),
      ).then((v) => verdictOf(key, token, v, store));
      if (trace === undefined) return verdict;
      return verdict.then(
        (v) => {
          traceStore(trace, 'admit', started, store === primary ? 'ok' : 'insurance');
          return v;
        },
        (e: unknown) => {
          traceStore(trace, 'admit', started, e instanceof StoreUnavailableError ? 'refused' : 'error');
          throw e;
        },
      );
    },
    release,
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
  const windows: StoreLimits = {
    userSlots: config.perUserConcurrency,
    globalSlots: config.globalConcurrency,
  };
  if (config.perUserRpm > 0) windows.rpm = { limit: config.perUserRpm, seconds: RPM_WINDOW_SECONDS };
  if (config.costBudgetPerHour > 0) {
    windows.budget = { limit: config.costBudgetPerHour, seconds: BUDGET_WINDOW_SECONDS };
  }
  const memory = !store || store.onOutage === 'fail-open' ? createMemoryStore(windows) : undefined;
  if (!store) return { limiter: createLimiter(memory!), memory, redis: undefined };
  const redis = createRedisStore({
    client: store.client,
    keyPrefix: store.keyPrefix,
    limits: windows,
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
