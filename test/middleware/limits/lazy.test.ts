/**
 * rate-limiter-flexible is loaded only when a Redis store is configured: the memory store never needs it, and its
 * index loads every store it ships. The real module is loaded through a counting wrapper, in a module registry of
 * this test's own.
 */
import Redis from 'ioredis';
import type * as LimitsModule from '../../../middleware/limits/index';

function isolated(): { limits: typeof LimitsModule; loads: () => number } {
  let loads = 0;
  let mod!: typeof LimitsModule;
  jest.isolateModules(() => {
    jest.doMock('rate-limiter-flexible', () => {
      loads++;
      return jest.requireActual('rate-limiter-flexible');
    });
    mod = jest.requireActual('../../../middleware/limits/index');
  });
  return { limits: mod, loads: () => loads };
}

const settle = () => new Promise((r) => setImmediate(r));

afterEach(() => jest.dontMock('rate-limiter-flexible'));

describe('limits: rate-limiter-flexible is loaded only for a Redis store', () => {
  it('a memory store with every limit on never loads it', async () => {
    const { limits, loads } = isolated();
    limits.limits({ perUserRpm: 5, perUserConcurrency: 2, globalConcurrency: 4, costBudgetPerHour: 60 });
    await settle();
    expect(loads()).toBe(0);
  });

  it('a Redis store loads it once, when the middleware is built', async () => {
    const { limits, loads } = isolated();
    const redis = new Redis({ ...limits.redisClientOptions, lazyConnect: true, port: 1 });
    try {
      const logger = { error: () => {}, warn: () => {} };
      const store = { redis, onOutage: 'fail-open' as const };
      limits.limits({ perUserRpm: 5, store, logger });
      limits.limits({ costBudgetPerHour: 60, store, logger });
      await settle();
      expect(loads()).toBe(1);
    } finally {
      redis.disconnect();
    }
  });
});
