/**
 * The limits store in process memory: the store of a single process, and the fail-open insurance behind Redis.
 * Every answer is synchronous.
 * @see docs/middleware/limits.md
 */
import { FixedWindows, type InflightScope } from '../../lib/limits.js';
import type { BudgetUse, LimitsStore, RpmResult, StoreWindows } from './store.js';

export interface MemoryStore extends LimitsStore {
  readonly name: 'memory';
  budgetUsed(key: string): BudgetUse | null;
  chargeBudget(key: string, ms: number): void;
  takeRpm(key: string): RpmResult;
  acquire(scope: InflightScope, key: string, limit: number): boolean;
  release(scope: InflightScope, key: string): void;
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

const RPM_OK: RpmResult = Object.freeze({ ok: true });

/**
 * A memory store. The windows are {@link FixedWindows} over `performance.now()`, a clock that does not go back
 * when the wall clock is set.
 */
export function createMemoryStore(windows: StoreWindows): MemoryStore {
  const rpmLimit = windows.rpm?.limit ?? 0;
  const rpm = windows.rpm ? new FixedWindows(windows.rpm.seconds * 1000) : undefined;
  const budget = windows.budget ? new FixedWindows(windows.budget.seconds * 1000) : undefined;
  const slots: Record<InflightScope, Semaphore> = { user: new Semaphore(), global: new Semaphore() };
  return {
    name: 'memory',
    budgetUsed(key) {
      const now = performance.now();
      const used = budget!.count(key, now);
      // Only a charge above 0 opens a window, so an open window has a count.
      return used > 0 ? { used, msBeforeNext: budget!.msLeft(key, now) } : null;
    },
    chargeBudget(key, ms) {
      budget!.add(key, ms, performance.now());
    },
    takeRpm(key) {
      const now = performance.now();
      if (rpm!.add(key, 1, now) <= rpmLimit) return RPM_OK;
      return { ok: false, msBeforeNext: rpm!.msLeft(key, now) };
    },
    acquire: (scope, key, limit) => slots[scope].tryAcquire(key, limit),
    release: (scope, key) => slots[scope].release(key),
    get slotKeys() {
      return slots.user.size + slots.global.size;
    },
  };
}
