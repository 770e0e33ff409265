/**
 * One behavioural suite for every limits store (as Hono's routers share `runTest({ newRouter })`): the memory
 * store and the Redis store must give the same answers to the same calls. Each store's test file calls
 * `runStoreSuite` with a factory.
 */
import { randomBytes } from 'node:crypto';
import type { LimitsStore, StoreWindows } from '../../middleware/limits/store';

export interface StoreSuiteOptions {
  /** A fresh store (its own keys) with these windows. */
  newStore(windows: StoreWindows): Promise<LimitsStore>;
}

const token = (): string => randomBytes(6).toString('hex');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function runStoreSuite({ newStore }: StoreSuiteOptions): void {
  describe('concurrency slots', () => {
    it('exact counts under concurrency: of 20 parallel takes with a limit of 5, exactly 5 are granted', async () => {
      const store = await newStore({});
      const tokens = Array.from({ length: 20 }, token);
      const granted = await Promise.all(tokens.map((t) => store.acquire('user', 'u:a', 5, t)));
      expect(granted.filter(Boolean)).toHaveLength(5);
      await Promise.all(tokens.filter((_, i) => granted[i]).map((t) => store.release('user', 'u:a', t)));
    });

    it('counts per key and per scope', async () => {
      const store = await newStore({});
      const held: [scope: 'user' | 'global', key: string, token: string][] = [];
      for (const [scope, key] of [
        ['user', 'u:a'],
        ['user', 'u:b'],
        ['global', 'all'],
      ] as const) {
        const t = token();
        expect(await store.acquire(scope, key, 1, t)).toBe(true);
        held.push([scope, key, t]);
        expect(await store.acquire(scope, key, 1, token())).toBe(false);
      }
      for (const [scope, key, t] of held) await store.release(scope, key, t);
    });

    it('a released slot is granted again, and releasing every slot frees them all', async () => {
      const store = await newStore({});
      const [a, b, c] = [token(), token(), token()];
      expect(await store.acquire('user', 'u:r', 2, a)).toBe(true);
      expect(await store.acquire('user', 'u:r', 2, b)).toBe(true);
      expect(await store.acquire('user', 'u:r', 2, c)).toBe(false);
      await store.release('user', 'u:r', a);
      expect(await store.acquire('user', 'u:r', 2, c)).toBe(true);
      expect(await store.acquire('user', 'u:r', 2, token())).toBe(false);
      await store.release('user', 'u:r', b);
      await store.release('user', 'u:r', c);
      const again = [token(), token()];
      expect(await Promise.all(again.map((t) => store.acquire('user', 'u:r', 2, t)))).toEqual([true, true]);
      for (const t of again) await store.release('user', 'u:r', t);
    });
  });

  describe('requests per minute', () => {
    it('exact counts under concurrency: of 20 parallel requests with a limit of 7, exactly 7 pass', async () => {
      const store = await newStore({ rpm: { limit: 7, seconds: 60 } });
      const rs = await Promise.all(Array.from({ length: 20 }, () => store.takeRpm('u:a')));
      expect(rs.filter((r) => r.ok)).toHaveLength(7);
      for (const r of rs) {
        if (r.ok) continue;
        expect(r.msBeforeNext).toBeGreaterThan(55_000);
        expect(r.msBeforeNext).toBeLessThanOrEqual(60_000);
      }
      expect((await store.takeRpm('u:b')).ok).toBe(true); // per key
    });

    it('a window ends after its duration, and the next request opens a new one', async () => {
      const store = await newStore({ rpm: { limit: 2, seconds: 1 } });
      expect((await store.takeRpm('u:w')).ok).toBe(true);
      expect((await store.takeRpm('u:w')).ok).toBe(true);
      const refused = await store.takeRpm('u:w');
      expect(refused.ok).toBe(false);
      const wait = refused.ok ? 0 : refused.msBeforeNext;
      expect(wait).toBeGreaterThan(0);
      expect(wait).toBeLessThanOrEqual(1000);
      await sleep(wait + 50);
      expect((await store.takeRpm('u:w')).ok).toBe(true);
      expect((await store.takeRpm('u:w')).ok).toBe(true);
      expect((await store.takeRpm('u:w')).ok).toBe(false);
    });
  });

  describe('work budget', () => {
    it('no window before the first charge; charges add up in the window', async () => {
      const store = await newStore({ budget: { limit: 100, seconds: 3600 } });
      expect(await store.budgetUsed('u:a')).toBeNull();
      await store.chargeBudget('u:a', 60);
      await Promise.all([store.chargeBudget('u:a', 30), store.chargeBudget('u:a', 20)]);
      const use = await store.budgetUsed('u:a');
      expect(use?.used).toBe(110); // a budget may be overshot: it is checked before a request, charged after
      expect(use!.msBeforeNext).toBeGreaterThan(3_590_000);
      expect(use!.msBeforeNext).toBeLessThanOrEqual(3_600_000);
      expect(await store.budgetUsed('u:b')).toBeNull(); // per key
    });

    it('a budget window ends after its duration', async () => {
      const store = await newStore({ budget: { limit: 100, seconds: 1 } });
      await store.chargeBudget('u:w', 500);
      const use = await store.budgetUsed('u:w');
      expect(use?.used).toBe(500);
      await sleep(use!.msBeforeNext + 50);
      expect(await store.budgetUsed('u:w')).toBeNull();
      await store.chargeBudget('u:w', 5);
      expect((await store.budgetUsed('u:w'))?.used).toBe(5);
    });
  });
}
