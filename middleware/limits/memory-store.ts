/**
 * The limits store in process memory: the store of a single process, and the fail-open insurance behind Redis.
 * Every answer is synchronous.
 * @see docs/middleware/limits.md
 */
import { CONCURRENCY_RETRY_MS, FixedWindows } from '../../lib/limits.js';
import type { AdmitResult, Held, LimitsStore, StoreLimits } from './store.js';

export interface MemoryStore extends LimitsStore {
  readonly name: 'memory';
  admit(key: string, token: string, slots: boolean, budget?: boolean): AdmitResult;
  release(key: string, token: string, held: Held, chargeMs: number): void;
  /** Keys holding at least one slot, both scopes together. */
  readonly slotKeys: number;
}

/**
 * A counting semaphore per key. A key has an entry only while it holds a slot: the entry is deleted when its
 * count returns to 0, so the map is bounded by the requests in flight. Slots need no names here: one process
 * takes and releases them, and the limiter releases each slot once.
 */
class Semaphore {
  private readonly counts = new Map<string, number>();

  tryAcquire(key: string, limit: number): boolean {
    const count = this.counts.get(key) ?? 0;
    if (count >= limit) return false;
    this.counts.set(key, count + 1);
    return true;
  }

  release(key: string): void {
    const count = this.counts.get(key);
    if (count === undefined) return;
    if (count > 1) this.counts.set(key, count - 1);
    else this.counts.delete(key);
  }

  get size(): number {
    return this.counts.size;
  }
}

const GLOBAL = 'all';
const held = (user: boolean, global: boolean): AdmitResult & { readonly ok: true } =>
  Object.freeze({ ok: true, held: Object.freeze({ user, global }) });
/** The admitted verdicts, shared: by the slots taken, user then global. */
const ADMITTED = [held(false, false), held(false, true), held(true, false), held(true, true)] as const;

/**
 * A memory store. The windows are {@link FixedWindows} over `performance.now()`, a clock that does not go back
 * when the wall clock is set.
 */
export function createMemoryStore(limits: StoreLimits): MemoryStore {
  const { userSlots, globalSlots } = limits;
  const rpmLimit = limits.rpm?.limit ?? 0;
  const budgetLimit = limits.budget?.limit ?? 0;
  const rpm = limits.rpm ? new FixedWindows(limits.rpm.seconds * 1000) : undefined;
  const budget = limits.budget ? new FixedWindows(limits.budget.seconds * 1000) : undefined;
  const users = new Semaphore();
  const global = new Semaphore();

  const giveBack = (key: string, user: boolean, all: boolean): void => {
    if (user) users.release(key);
    if (all) global.release(GLOBAL);
  };

  return {
    name: 'memory',
    admit(key, _token, slots, checkBudget = true) {
      const now = performance.now();
      if (budget && checkBudget && budget.count(key, now) >= budgetLimit) {
        return { ok: false, reason: 'cost_budget', waitMs: budget.msLeft(key, now) };
      }
      const user = slots && userSlots > 0;
      if (user && !users.tryAcquire(key, userSlots)) {
        return { ok: false, reason: 'user_concurrent', waitMs: CONCURRENCY_RETRY_MS };
      }
      const all = slots && globalSlots > 0;
      if (all && !global.tryAcquire(GLOBAL, globalSlots)) {
        giveBack(key, user, false);
        return { ok: false, reason: 'global_concurrent', waitMs: CONCURRENCY_RETRY_MS };
      }
      const admitted = ADMITTED[(user ? 2 : 0) + (all ? 1 : 0)]!;
      if (!rpm) return admitted;
      const n = rpm.add(key, 1, now);
      if (n > rpmLimit) {
        giveBack(key, user, all);
        return { ok: false, reason: 'rpm', waitMs: rpm.msLeft(key, now) };
      }
      if (n === rpmLimit) return { ok: true, held: admitted.held, lastRequestMs: rpm.msLeft(key, now) };
      return admitted;
    },
    release(key, _token, held, chargeMs) {
      giveBack(key, held.user, held.global);
      if (budget && chargeMs > 0) budget.add(key, chargeMs, performance.now());
    },
    get slotKeys() {
      return users.size + global.size;
    },
  };
}
