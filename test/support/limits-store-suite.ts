/**
 * One behavioural suite for every limits store (as Hono's routers share `runTest({ newRouter })`): the memory
 * store and the Redis store must give the same answers to the same calls. Each store's test file calls
 * `runStoreSuite` with a factory.
 */
import { randomBytes } from 'node:crypto';
import type { AdmitResult, Held, LimitsStore, StoreLimits } from '../../middleware/limits/store';

export interface StoreSuiteOptions {
  /** A fresh store (its own keys) with these limits. */
  newStore(limits: StoreLimits): Promise<LimitsStore>;
}

const token = (): string => randomBytes(6).toString('hex');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const NONE: Held = { user: false, global: false };
const SLOTS_OFF = { userSlots: 0, globalSlots: 0 };

/** An admission, with what it needs to be released. */
async function admit(store: LimitsStore, key: string, slots = true) {
  const t = token();
  const r: AdmitResult = await store.admit(key, t, slots);
  const release = (chargeMs = 0) => store.release(key, t, r.ok ? r.held : NONE, chargeMs);
  return { r, release };
}

const reasons = (rs: { r: AdmitResult }[]) => rs.map(({ r }) => (r.ok ? 'ok' : r.reason));

export function runStoreSuite({ newStore }: StoreSuiteOptions): void {
  describe('concurrency slots', () => {
    it('exact counts under concurrency: of 20 parallel admissions with a limit of 5, exactly 5 are admitted', async () => {
      const store = await newStore({ userSlots: 5, globalSlots: 0 });
      const rs = await Promise.all(Array.from({ length: 20 }, () => admit(store, 'u:a')));
      expect(reasons(rs).filter((x) => x === 'ok')).toHaveLength(5);
      expect(reasons(rs).filter((x) => x === 'user_concurrent')).toHaveLength(15);
      await Promise.all(rs.map((x) => x.release()));
    });

    it('counts per key, and the global limit over every key; a global refusal gives the user slot back', async () => {
      const store = await newStore({ userSlots: 1, globalSlots: 2 });
      const a = await admit(store, 'u:a');
      expect(a.r).toMatchObject({ ok: true, held: { user: true, global: true } });
      expect(reasons([await admit(store, 'u:a')])).toEqual(['user_concurrent']);
      const b = await admit(store, 'u:b');
      expect(b.r.ok).toBe(true);
      const c = await admit(store, 'u:c');
      expect(c.r).toMatchObject({ ok: false, reason: 'global_concurrent' });
      await a.release();
      const c2 = await admit(store, 'u:c'); // c's refused admission left no user slot behind
      expect(c2.r.ok).toBe(true);
      await b.release();
      await c2.release();
    });

    it('a released slot is admitted again; without slots an admission takes none', async () => {
      const store = await newStore({ userSlots: 2, globalSlots: 0 });
      const [a, b] = [await admit(store, 'u:r'), await admit(store, 'u:r')];
      expect(reasons([a, b, await admit(store, 'u:r')])).toEqual(['ok', 'ok', 'user_concurrent']);
      const stream = await admit(store, 'u:r', false);
      expect(stream.r).toEqual({ ok: true, held: NONE });
      await a.release();
      const c = await admit(store, 'u:r');
      expect(c.r.ok).toBe(true);
      await b.release();
      await c.release();
      const again = await Promise.all([admit(store, 'u:r'), admit(store, 'u:r')]);
      expect(reasons(again)).toEqual(['ok', 'ok']);
      await Promise.all(again.map((x) => x.release()));
    });
  });

  describe('requests per minute', () => {
    it('exact counts under concurrency: of 20 parallel requests with a limit of 7, exactly 7 pass', async () => {
      const store = await newStore({ rpm: { limit: 7, seconds: 60 }, ...SLOTS_OFF });
      const rs = await Promise.all(Array.from({ length: 20 }, () => admit(store, 'u:a')));
      expect(reasons(rs).filter((x) => x === 'ok')).toHaveLength(7);
      for (const { r } of rs) {
        if (r.ok) continue;
        expect(r.reason).toBe('rpm');
        expect(r.waitMs).toBeGreaterThan(55_000);
        expect(r.waitMs).toBeLessThanOrEqual(60_000);
      }
      expect((await admit(store, 'u:b')).r.ok).toBe(true); // per key
    });

    it('a window ends after its duration, and the next request opens a new one', async () => {
      const store = await newStore({ rpm: { limit: 2, seconds: 1 }, ...SLOTS_OFF });
      expect(reasons([await admit(store, 'u:w'), await admit(store, 'u:w')])).toEqual(['ok', 'ok']);
      const refused = (await admit(store, 'u:w')).r;
      expect(refused.ok).toBe(false);
      const wait = refused.ok ? 0 : refused.waitMs;
      expect(wait).toBeGreaterThan(0);
      expect(wait).toBeLessThanOrEqual(1000);
      await sleep(wait + 50);
      const next = [await admit(store, 'u:w'), await admit(store, 'u:w'), await admit(store, 'u:w')];
      expect(reasons(next)).toEqual(['ok', 'ok', 'rpm']);
    });

    it('a refusal by an earlier check takes nothing from the window; an rpm refusal gives the slots back', async () => {
      const store = await newStore({ rpm: { limit: 2, seconds: 60 }, userSlots: 1, globalSlots: 1 });
      const a = await admit(store, 'u:o');
      expect(reasons([await admit(store, 'u:o'), await admit(store, 'u:o')])).toEqual([
        'user_concurrent',
        'user_concurrent',
      ]);
      await a.release();
      const b = await admit(store, 'u:o'); // the second request of the window
      expect(b.r.ok).toBe(true);
      await b.release();
      expect(reasons([await admit(store, 'u:o')])).toEqual(['rpm']);
      // The rpm refusal gave its slots back: the one global slot is free.
      const c = await admit(store, 'u:p');
      expect(c.r).toMatchObject({ ok: true, held: { user: true, global: true } });
      await c.release();
    });

    it('a global refusal takes nothing from the window', async () => {
      const store = await newStore({ rpm: { limit: 1, seconds: 60 }, userSlots: 1, globalSlots: 1 });
      const a = await admit(store, 'u:g1');
      const refused = [await admit(store, 'u:g2'), await admit(store, 'u:g2'), await admit(store, 'u:g2')];
      expect(reasons(refused)).toEqual(['global_concurrent', 'global_concurrent', 'global_concurrent']);
      await a.release();
      const b = await admit(store, 'u:g2'); // the first request of u:g2's window, and its user slot is free
      expect(b.r).toMatchObject({ ok: true, held: { user: true, global: true } });
      await b.release();
      expect(reasons([await admit(store, 'u:g2')])).toEqual(['rpm']);
    });
  });

  describe('work budget', () => {
    it('no window before the first charge; charges add up in the window and refuse once at the limit', async () => {
      const store = await newStore({ budget: { limit: 100, seconds: 3600 }, ...SLOTS_OFF });
      const a = await admit(store, 'u:a');
      expect(a.r.ok).toBe(true);
      await a.release(60);
      const b = await admit(store, 'u:a');
      expect(b.r.ok).toBe(true); // 60 used of 100
      await Promise.all([b.release(30), store.release('u:a', token(), NONE, 20)]);
      const refused = (await admit(store, 'u:a')).r; // 110 used: a budget may be overshot, charged after
      expect(refused).toMatchObject({ ok: false, reason: 'cost_budget' });
      const wait = refused.ok ? 0 : refused.waitMs;
      expect(wait).toBeGreaterThan(3_590_000);
      expect(wait).toBeLessThanOrEqual(3_600_000);
      expect((await admit(store, 'u:b')).r.ok).toBe(true); // per key
    });

    it('a budget window ends after its duration', async () => {
      const store = await newStore({ budget: { limit: 100, seconds: 1 }, ...SLOTS_OFF });
      await store.release('u:w', token(), NONE, 500);
      const refused = (await admit(store, 'u:w')).r;
      expect(refused.ok).toBe(false);
      await sleep((refused.ok ? 0 : refused.waitMs) + 50);
      expect((await admit(store, 'u:w')).r.ok).toBe(true);
      await store.release('u:w', token(), NONE, 99);
      expect((await admit(store, 'u:w')).r.ok).toBe(true);
      await store.release('u:w', token(), NONE, 1);
      expect((await admit(store, 'u:w')).r.ok).toBe(false);
    });

    it('a budget refusal takes no slot and counts nothing in the minute window', async () => {
      const limits = { budget: { limit: 10, seconds: 3600 }, rpm: { limit: 1, seconds: 60 } };
      const store = await newStore({ ...limits, userSlots: 1, globalSlots: 1 });
      await store.release('u:x', token(), NONE, 10);
      expect(reasons([await admit(store, 'u:x'), await admit(store, 'u:x')])).toEqual([
        'cost_budget',
        'cost_budget',
      ]);
      const other = await admit(store, 'u:y'); // the global slot is free
      expect(other.r.ok).toBe(true);
      await other.release();
    });

    it("an admission that skips the budget (a task's own request) is admitted at the budget, and counts in the minute", async () => {
      const limits = { budget: { limit: 10, seconds: 3600 }, rpm: { limit: 2, seconds: 60 } };
      const store = await newStore({ ...limits, ...SLOTS_OFF });
      await store.release('u:t', token(), NONE, 10);
      expect(await store.admit('u:t', token(), false, false)).toMatchObject({ ok: true });
      expect((await store.admit('u:t', token(), false)).ok).toBe(false); // the budget, for the others
      expect(await store.admit('u:t', token(), false, false)).toMatchObject({
        ok: true,
        lastRequestMs: expect.any(Number),
      });
      expect(await store.admit('u:t', token(), false, false)).toMatchObject({ ok: false, reason: 'rpm' });
    });
  });
}
