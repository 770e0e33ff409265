/**
 * The store interface of the limits middleware: the five questions admission asks, answered by the memory
 * store synchronously and by the Redis store with promises.
 * @see docs/middleware/limits.md
 */
import type { InflightScope } from '../../lib/limits.js';
import type { MaybePromise } from '../internal/maybe-promise.js';

/** Work used in a budget window that is open, and the time until it ends. */
export interface BudgetUse {
  used: number;
  msBeforeNext: number;
}

/** A request taken from the minute window, or the time until that window ends. */
export type RpmResult = { ok: true } | { ok: false; msBeforeNext: number };

/** A fixed window: it opens at a key's first count and ends `seconds` later; the next count opens a new one. */
export interface WindowSpec {
  /** The limit of the window (requests, or milliseconds of work). */
  limit: number;
  seconds: number;
}

/** The windows a store keeps; a limit that is off has none. */
export interface StoreWindows {
  rpm?: WindowSpec;
  budget?: WindowSpec;
}

/**
 * Where the counts live. A concurrency slot is named by a `token` unique to the process: `release` gives back
 * the slot `acquire` took under the same token, and the limiter calls it exactly once per slot taken.
 */
export interface LimitsStore {
  readonly name: 'memory' | 'redis';
  /** Work used in the key's budget window, or null when the key has no window open. */
  budgetUsed(key: string): MaybePromise<BudgetUse | null>;
  /** Add `ms` of work to the key's budget window, opening one when none is open. */
  chargeBudget(key: string, ms: number): MaybePromise<void>;
  /** Count one request in the key's minute window; refused once the window's count is over its limit. */
  takeRpm(key: string): MaybePromise<RpmResult>;
  /** Take a slot of `scope` for `key` named `token`; false when `limit` slots are taken already. */
  acquire(scope: InflightScope, key: string, limit: number, token: string): MaybePromise<boolean>;
  release(scope: InflightScope, key: string, token: string): MaybePromise<void>;
}
