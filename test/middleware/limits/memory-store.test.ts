/**
 * The memory store against the shared store suite, and what is particular to it: synchronous answers, and a
 * semaphore that keeps no entry for a key without slots.
 */
import { createMemoryStore } from '../../../middleware/limits/memory-store';
import { runStoreSuite } from '../../support/limits-store-suite';

const NONE = { user: false, global: false };

describe('memory store', () => {
  runStoreSuite({ newStore: async (limits) => createMemoryStore(limits) });

  it('answers synchronously', () => {
    const store = createMemoryStore({
      rpm: { limit: 1, seconds: 60 },
      budget: { limit: 1, seconds: 60 },
      userSlots: 1,
      globalSlots: 1,
    });
    // The minute's only request: the verdict says how long its window runs (the clock's sum and difference may
    // differ from it in the last bits).
    expect(store.admit('u:a', '', true)).toEqual({
      ok: true,
      held: { user: true, global: true },
      lastRequestMs: expect.closeTo(60_000, 6),
    });
    expect(store.release('u:a', '', { user: true, global: true }, 0)).toBeUndefined();
  });

  it('keeps an entry only for keys holding a slot', () => {
    const store = createMemoryStore({ userSlots: 2, globalSlots: 0 });
    for (let i = 0; i < 5000; i++) expect(store.admit(`u:${i}`, '', true).ok).toBe(true);
    expect(store.slotKeys).toBe(5000);
    for (let i = 0; i < 5000; i++) store.release(`u:${i}`, '', { user: true, global: false }, 0);
    expect(store.slotKeys).toBe(0);
    store.release('u:1', '', { user: true, global: false }, 0); // a key without slots stays at none
    expect(store.slotKeys).toBe(0);
    expect(store.admit('u:1', '', true).ok).toBe(true);
    expect(store.slotKeys).toBe(1);
  });

  it('a global slot is one entry whatever the keys', () => {
    const store = createMemoryStore({ userSlots: 0, globalSlots: 3 });
    for (const k of ['a', 'b', 'c']) expect(store.admit(k, '', true).ok).toBe(true);
    expect(store.slotKeys).toBe(1);
    expect(store.admit('d', '', true)).toMatchObject({ ok: false, reason: 'global_concurrent' });
    for (const k of ['a', 'b', 'c']) store.release(k, '', { user: false, global: true }, 0);
    expect(store.slotKeys).toBe(0);
    store.release('a', '', NONE, 0);
    expect(store.slotKeys).toBe(0);
  });
});
