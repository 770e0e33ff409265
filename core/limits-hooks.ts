/**
 * The limiter's observation hooks: the one type `limits()` takes as `hooks` and `metrics().limiterHooks()`
 * returns, and the chaining `mcpEndpoint()` uses to run the metrics' hooks and the application's own.
 * @see docs/middleware/limits.md
 */
import type { InflightScope, LimitReason } from '../lib/limits.js';

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

type Hook<A extends unknown[]> = ((...args: A) => void) | undefined;

/** `first` then `then` when both are functions (`then` runs even when `first` throws); else whichever is given. */
function chain<A extends unknown[]>(first: Hook<A>, then: Hook<A>): Hook<A> {
  if (typeof first !== 'function' || typeof then !== 'function') return then ?? first;
  return (...args: A): void => {
    try {
      first(...args);
    } finally {
      then(...args);
    }
  };
}

/**
 * Hooks that run `first`'s and then `then`'s. Other keys of `then` are kept as they are, so that `limits()` still
 * refuses an unknown or misspelt hook by name.
 */
export function chainHooks(first: LimitsHooks, then: LimitsHooks): LimitsHooks {
  return {
    ...then,
    onDenied: chain(first.onDenied, then.onDenied),
    onInflight: chain(first.onInflight, then.onInflight),
    onCharge: chain(first.onCharge, then.onCharge),
    onStoreError: chain(first.onStoreError, then.onStoreError),
  };
}
