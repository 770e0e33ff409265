import fc from 'fast-check';
import {
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
