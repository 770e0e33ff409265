import fc from 'fast-check';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import {
  FixedWindows,
  LIMIT_DEFAULTS,
  LIMIT_REASONS,
  MAX_LIMIT_VALUE,
  isLimitValue,
  parseLimitsEnv,
  retryAfterSeconds,
  workMs,
} from '../../lib/limits';

describe('retryAfterSeconds', () => {
  it.each([
    [0, 1],
    [-5, 1],
    [NaN, 1],
    [Infinity, 1],
    [1, 1],
    [999, 1],
    [1000, 1],
    [1001, 2],
    [1200, 2],
    [59_999, 60],
    [55 * 60 * 1000, 3300],
  ])('%p ms → %p s', (ms, s) => {
    expect(retryAfterSeconds(ms)).toBe(s);
  });

  it('is a whole number of at least 1 that never undershoots the wait', () => {
    fc.assert(
      fc.property(fc.double({ min: -1e9, max: 1e12, noNaN: true }), (ms) => {
        const s = retryAfterSeconds(ms);
        expect(Number.isInteger(s)).toBe(true);
        expect(s).toBeGreaterThanOrEqual(1);
        if (ms > 0) expect(s * 1000).toBeGreaterThanOrEqual(ms);
        if (ms >= 1000)
          expect(s * 1000 - ms).toBeLessThan(1000 + 1e-6 * ms); // never a whole second too many
        else expect(s).toBe(1);
      }),
    );
  });
});

describe('workMs', () => {
  it('prefers what was charged, else the wall clock', () => {
    expect(workMs(60, 5000)).toEqual({ ms: 60, source: 'charged' });
    expect(workMs(0, 5000)).toEqual({ ms: 0, source: 'charged' });
    expect(workMs(undefined, 12.6)).toEqual({ ms: 13, source: 'wall_clock' });
  });
  it('counts a negative total as 0 and rounds to whole ms', () => {
    expect(workMs(-40, 5000)).toEqual({ ms: 0, source: 'charged' });
    expect(workMs(10.4, 0)).toEqual({ ms: 10, source: 'charged' });
    expect(workMs(undefined, -3)).toEqual({ ms: 0, source: 'wall_clock' });
  });
  it('always gives a whole, non-negative, bounded number (Redis counters take integers only)', () => {
    fc.assert(
      fc.property(fc.option(fc.double(), { nil: undefined }), fc.double(), (c, w) => {
        const { ms } = workMs(c, w);
        expect(Number.isSafeInteger(ms)).toBe(true);
        expect(ms).toBeGreaterThanOrEqual(0);
        expect(ms).toBeLessThanOrEqual(MAX_LIMIT_VALUE);
      }),
    );
  });
});

describe('isLimitValue', () => {
  it.each([0, 1, 600, MAX_LIMIT_VALUE])('accepts %p', (v) => expect(isLimitValue(v)).toBe(true));
  it.each([-1, 1.5, NaN, Infinity, MAX_LIMIT_VALUE + 1, '5', null, undefined])('refuses %p', (v) =>
    expect(isLimitValue(v)).toBe(false),
  );
});

describe('LIMIT_REASONS', () => {
  it('lists the four reasons in the order they are checked', () => {
    expect(LIMIT_REASONS).toEqual(['cost_budget', 'user_concurrent', 'global_concurrent', 'rpm']);
  });
});

describe('parseLimitsEnv', () => {
  it('gives the documented defaults for an empty environment', () => {
    expect(parseLimitsEnv({})).toEqual({
      ok: true,
      value: { perUserRpm: 600, perUserConcurrency: 8, globalConcurrency: 64, costBudgetPerHour: 1_800_000 },
    });
    expect(LIMIT_DEFAULTS.costBudgetPerHour).toBe(1_800_000);
  });

  it('reads every variable; 0 switches a limit off; blank means default', () => {
    const r = parseLimitsEnv({
      MCP_RPM: '0',
      MCP_USER_CONCURRENCY: ' 3 ',
      MCP_GLOBAL_CONCURRENCY: '',
      MCP_COST_BUDGET_MS: '60000',
      REDIS_URL: 'redis://127.0.0.1:6379/0',
    });
    expect(r).toEqual({
      ok: true,
      value: {
        perUserRpm: 0,
        perUserConcurrency: 3,
        globalConcurrency: 64,
        costBudgetPerHour: 60000,
        redisUrl: 'redis://127.0.0.1:6379/0',
      },
    });
  });

  it.each([
    ['MCP_RPM', 'ten'],
    ['MCP_RPM', '-1'],
    ['MCP_USER_CONCURRENCY', '1.5'],
    ['MCP_GLOBAL_CONCURRENCY', '1e3'],
    ['MCP_COST_BUDGET_MS', '99999999999999999'],
    ['MCP_COST_BUDGET_MS', '0x10'],
  ])('refuses %s=%p, naming the variable', (variable, value) => {
    const r = parseLimitsEnv({ [variable]: value });
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.reason).toBe('invalid_env');
      expect(r.variable).toBe(variable);
      expect(r.message).toContain(variable);
      expect(r.message).toContain(JSON.stringify(value));
    }
  });

  it('refuses a REDIS_URL that is not redis:// without repeating it (it may hold a password)', () => {
    const r = parseLimitsEnv({ REDIS_URL: 'http://user:s3cret@host' });
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.variable).toBe('REDIS_URL');
      expect(r.message).not.toContain('s3cret');
      expect(JSON.stringify(r)).not.toContain('s3cret');
    }
  });

  it('never throws, whatever the variables hold', () => {
    fc.assert(
      fc.property(
        fc.dictionary(
          fc.constantFrom('MCP_RPM', 'MCP_USER_CONCURRENCY', 'MCP_COST_BUDGET_MS', 'REDIS_URL'),
          fc.string(),
        ),
        (env) => {
          const r = parseLimitsEnv(env);
          if (r.ok) {
            for (const v of [
              r.value.perUserRpm,
              r.value.perUserConcurrency,
              r.value.globalConcurrency,
              r.value.costBudgetPerHour,
            ]) {
              expect(isLimitValue(v)).toBe(true);
            }
          }
        },
      ),
    );
  });
});

describe('FixedWindows', () => {
  it('counts exactly within a window and opens a new one at the first add after it ended', () => {
    const w = new FixedWindows(60_000);
    expect(w.count('a', 0)).toBe(0);
    expect(w.msLeft('a', 0)).toBe(0);
    expect(w.add('a', 1, 1000)).toBe(1);
    expect(w.msLeft('a', 1000)).toBe(60_000);
    for (let i = 2; i <= 7; i++) expect(w.add('a', 1, 1000 + i)).toBe(i);
    expect(w.add('a', 5, 30_000)).toBe(12);
    expect(w.count('a', 60_999)).toBe(12);
    expect(w.msLeft('a', 60_999)).toBe(1);
    expect(w.count('b', 60_999)).toBe(0); // per key
    // Ended at 61 000: read as absent, and the next add starts again.
    expect(w.count('a', 61_000)).toBe(0);
    expect(w.msLeft('a', 61_000)).toBe(0);
    expect(w.add('a', 1, 70_000)).toBe(1);
    expect(w.msLeft('a', 70_000)).toBe(60_000);
  });

  it('drops ended windows as new ones open: many distinct keys stay bounded', () => {
    const w = new FixedWindows(60_000);
    // 100 new keys a second for 10 minutes: 60,000 keys in all, at most one minute's worth kept.
    for (let t = 0; t < 600; t++) {
      for (let i = 0; i < 100; i++) w.add(`k${t}:${i}`, 1, t * 1000);
      expect(w.size).toBeLessThanOrEqual(6000);
    }
    expect(w.size).toBe(6000);
    // Every window has ended; the next one to open takes them away.
    w.add('last', 1, 10_000_000);
    expect(w.size).toBe(1);
  });

  it('a window opened again moves behind the others: live windows are never dropped', () => {
    const w = new FixedWindows(1000);
    w.add('a', 1, 0);
    w.add('b', 1, 500);
    w.add('a', 1, 1000); // a's first window ended: a new one until 2000
    w.add('c', 1, 1600); // b ended at 1500 and goes; a (until 2000) and c stay
    expect(w.size).toBe(2);
    expect(w.count('a', 1999)).toBe(1);
    expect(w.count('c', 1999)).toBe(1);
  });

  describe('the same answers as rate-limiter-flexible RateLimiterMemory', () => {
    beforeEach(() => jest.useFakeTimers({ now: 1_000_000 }));
    afterEach(() => jest.useRealTimers());

    type Op = { wait: number; key: string; kind: 'consume' | 'penalty' | 'get'; points: number };
    const op: fc.Arbitrary<Op> = fc.record({
      wait: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 2500 })),
      key: fc.constantFrom('a', 'b', 'c'),
      kind: fc.constantFrom('consume', 'penalty', 'get'),
      points: fc.integer({ min: 1, max: 4 }),
    });

    it('counts, refusals and msBeforeNext over random sequences', async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(op, { maxLength: 60 }), async (ops) => {
          const points = 5;
          const rlf = new RateLimiterMemory({ points, duration: 2 });
          const ours = new FixedWindows(2000);
          for (const o of ops) {
            jest.advanceTimersByTime(o.wait);
            const now = Date.now();
            if (o.kind === 'get') {
              const r = await rlf.get(o.key);
              expect(ours.count(o.key, now)).toBe(r ? r.consumedPoints : 0);
              expect(ours.msLeft(o.key, now)).toBe(r ? r.msBeforeNext : 0);
            } else if (o.kind === 'penalty') {
              const r = await rlf.penalty(o.key, o.points);
              expect(ours.add(o.key, o.points, now)).toBe(r.consumedPoints);
              expect(ours.msLeft(o.key, now)).toBe(r.msBeforeNext);
            } else {
              const r = await rlf.consume(o.key, 1).catch((e: unknown) => {
                if (e instanceof RateLimiterRes) return e;
                throw e;
              });
              const n = ours.add(o.key, 1, now);
              expect(n).toBe(r.consumedPoints);
              expect(n > points).toBe(r.consumedPoints > points);
              expect(ours.msLeft(o.key, now)).toBe(r.msBeforeNext);
            }
          }
        }),
        { numRuns: 200 },
      );
    });
  });
});
