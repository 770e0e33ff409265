/**
 * The store interface of the limits middleware: admission (the four checks in one operation) and the release
 * that follows a request, answered by the memory store synchronously and by the Redis store with promises.
 * @see docs/middleware/limits.md
 */
import type { ServerResponse } from 'node:http';
import type { LimitReason } from '../../lib/limits.js';
import type { Awaitable } from '../../core/maybe-promise.js';

/** A fixed window: it opens at a key's first count and ends `seconds` later; the next count opens a new one. */
export interface WindowSpec {
  /** The limit of the window (requests, or milliseconds of work). */
  limit: number;
  seconds: number;
}

/** The limits a store enforces; a window that is off is absent, a concurrency limit that is off is 0. */
export interface StoreLimits {
  rpm?: WindowSpec;
  budget?: WindowSpec;
  userSlots: number;
  globalSlots: number;
}

/** The concurrency slots an admission took. */
export interface Held {
  readonly user: boolean;
  readonly global: boolean;
  /**
   * A slot taken was the last free one of its set (the user's or the global one): until its release lands, the
   * next request of the same client would be refused by it, so the answer waits for the release (see
   * {@link releaseBeforeAnswer}). Set by the Redis store only: the memory store releases synchronously.
   */
  readonly lastSlot?: boolean;
}

/**
 * The verdict of an admission: admitted with the slots it took, or the first check that refused. An admission
 * that took the key's last request of the minute window says how long that window still runs (`lastRequestMs`,
 * more than 0): the key's next request is refused until then.
 */
export type AdmitResult =
  | { readonly ok: true; readonly held: Held; readonly lastRequestMs?: number }
  | { readonly ok: false; readonly reason: LimitReason; readonly waitMs: number };

/**
 * Where the counts live. An admission is named by a `token` unique to the process: `release` gives back the
 * slots `admit` took under the same token, and the limiter calls it exactly once per admission that took any.
 */
export interface LimitsStore {
  readonly name: 'memory' | 'redis';
  /**
   * The checks, in order: the budget (refused once the key's window has used its limit), a user slot, a global
   * slot, one request of the minute window (refused once its count is over the limit). The first refusal ends
   * them: later checks take nothing and the slots earlier ones took are given back. `slots` false: no
   * concurrency slot is taken (a long-lived stream, or a request refused before its admission, counted).
   * `budget` false: the budget is not checked, in the same operation (a task's own request: `tasks/get`,
   * `tasks/update`, `tasks/cancel`, which a caller whose budget is spent must still send).
   */
  admit(key: string, token: string, slots: boolean, budget?: boolean): Awaitable<AdmitResult>;
  /**
   * Give back the `held` slots of `token` and add `chargeMs` of work to the key's budget window. A promise
   * resolves once the store has applied the release; the call of a release that holds a set's last slot
   * ({@link Held.lastSlot}) is sent before `release` returns (never queued behind another call).
   */
  release(key: string, token: string, held: Held, chargeMs: number): Awaitable<void>;
}

export const NO_SLOTS: Held = Object.freeze({ user: false, global: false });

/**
 * Runs `settle(request)` (the release of an admitted request; it does nothing before admission or a second
 * time) when the response closes: once the answer's last bytes are written, or when the client went away. A
 * request whose ticket, when the handler ends the answer, holds a set's last free slot ({@link Held.lastSlot}) is
 * settled then instead, and the answer's last bytes wait for the promise `settle` returns: its slot is free in
 * the store before the client can read the answer and send its next request. `settle` never rejects.
 */
export function releaseBeforeAnswer<R extends { readonly ticket?: { readonly held: Held } | undefined }>(
  res: ServerResponse,
  request: R,
  settle: (request: R) => PromiseLike<void> | void,
): void {
  // A response emits 'close' once.
  res.on('close', () => void settle(request));
  const end = res.end as (this: ServerResponse, ...args: unknown[]) => ServerResponse;
  const wrapped = function (this: ServerResponse, ...args: unknown[]): ServerResponse {
    res.end = end as ServerResponse['end'];
    const wait = request.ticket?.held.lastSlot === true ? settle(request) : undefined;
    if (!wait) return end.apply(this, args);
    const go = (): void => void end.apply(this, args);
    wait.then(go, go);
    return this;
  };
  res.end = wrapped as ServerResponse['end'];
}
