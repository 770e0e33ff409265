/**
 * The memory store against the shared store suite, and what is particular to it: synchronous answers, and a
 * semaphore that keeps no entry for a key without slots.
 */
import { createMemoryStore } from '../../../middleware/limits/memory-store';
import { runStoreSuite } from '../../support/limits-store-suite';

describe('memory store', () => {
  runStoreSuite({ newStore: async (windows) => createMemoryStore(windows) });

  it('answers synchronously', () => {
    const store = createMemoryStore({ rpm: { limit: 1, seconds: 60 }, budget: { limit: 1, seconds: 60 } });
    expect(store.acquire('user', 'u:a', 1)).toBe(true);
    expect(store.takeRpm('u:a')).toEqual({ ok: true });
    expect(store.budgetUsed('u:a')).toBeNull();
    store.release('user', 'u:a');
  });

  it('keeps an entry only for keys holding a slot', () => {
    const store = createMemoryStore({});
    for (let i = 0; i < 5000; i++) expect(store.acquire('user', `u:${i}`, 2)).toBe(true);
    expect(store.acquire('global', 'all', 2)).toBe(true);
    expect(store.slotKeys).toBe(5001);
    for (let i = 0; i < 5000; i++) store.release('user', `u:${i}`);
    expect(store.slotKeys).toBe(1);
    store.release('global', 'all');
    expect(store.slotKeys).toBe(0);
    store.release('global', 'all'); // a key without slots stays at none
    expect(store.slotKeys).toBe(0);
    expect(store.acquire('global', 'all', 1)).toBe(true);
  });
});
