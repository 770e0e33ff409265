import http from 'node:http';
import Redis from 'ioredis';
import {
  limits,
  limitsFromEnv,
  limitsOptionsFromEnv,
  redisClientOptions,
} from '../../../middleware/limits/index';
import { KINDS, post, startApp, tally } from '../../support/limits-harness';

/** A client object that is never connected (lazyConnect): enough for option validation. */
function idleClient(): Redis {
  return new Redis({ ...redisClientOptions, lazyConnect: true, port: 1 });
}

describe('limits(): option validation', () => {
  it.each([
    ['perUserRpm', -1],
    ['perUserRpm', 1.5],
    ['perUserConcurrency', '8'],
    ['globalConcurrency', NaN],
    ['costBudgetPerHour', Infinity],
    ['costBudgetPerHour', null],
  ])('refuses %s = %p with a TypeError naming it', (name, value) => {
    expect(() => limits({ [name]: value } as never)).toThrow(TypeError);
    expect(() => limits({ [name]: value } as never)).toThrow(`"${name}"`);
  });

  it('refuses unknown options and suggests the near miss', () => {
    expect(() => limits({ perUserRPM: 5 } as never)).toThrow(
      /unknown option "perUserRPM"; did you mean "perUserRpm"/,
    );
    expect(() => limits({ rpm: 5 } as never)).toThrow(/unknown option "rpm"; known options:/);
  });

  it('refuses a misspelt option, at any level, naming the right one', () => {
    expect(() => limits({ perUserConcurency: 2 } as never)).toThrow(
      /limits: unknown option "perUserConcurency"; did you mean "perUserConcurrency"/,
    );
    expect(() => limits({ hooks: { onDenid: () => {} } } as never)).toThrow(
      /unknown option hooks\."onDenid"; did you mean "onDenied"/,
    );
    const redis = idleClient();
    expect(() => limits({ store: { redis, onOutage: 'fail-open', slotLease: 1000 } } as never)).toThrow(
      /unknown option store\."slotLease"; did you mean "slotLeaseMs"/,
    );
    redis.disconnect();
  });

  it('catches app.use(limits) written for app.use(limits())', () => {
    const req = new http.IncomingMessage(null as never);
    req.method = 'POST';
    expect(() => (limits as unknown as (r: unknown) => void)(req)).toThrow(
      /app\.use\(limits\(\{ \.\.\. \}\)\)/,
    );
  });

  it('validates the store', () => {
    expect(() => limits({ store: 'redis' as never })).toThrow(
      /"store" must be 'memory' or \{ redis, onOutage \}/,
    );
    expect(() => limits({ store: { redis: {} } as never })).toThrow(
      /"store\.redis" must be an ioredis client/,
    );
    const redis = idleClient();
    expect(() => limits({ store: { redis } as never })).toThrow(
      /"store\.onOutage" must be 'fail-open' or 'fail-closed'/,
    );
    expect(() => limits({ store: { redis, onOutage: 'open' as never } })).toThrow(/store\.onOutage/);
    expect(() => limits({ store: { redis, onOutage: 'fail-open', timeoutMs: 0 } })).toThrow(
      /"store\.timeoutMs"/,
    );
    expect(() => limits({ store: { redis, onOutage: 'fail-open', slotLeaseMs: 10 } })).toThrow(
      /"store\.slotLeaseMs"/,
    );
    expect(() => limits({ store: { redis, onOutage: 'fail-open', keyPrefix: '' } })).toThrow(
      /"store\.keyPrefix"/,
    );
    expect(() => limits({ store: { redis, onOutage: 'fail-open', timeout: 5 } as never })).toThrow(
      /unknown option store\."timeout"/,
    );
    expect(() => limits({ store: { redis, onOutage: 'fail-closed' } })).not.toThrow();
    redis.disconnect();
  });

  it('validates hooks and logger', () => {
    expect(() => limits({ hooks: { onDenied: 5 } as never })).toThrow(/"hooks\.onDenied" must be a function/);
    expect(() => limits({ hooks: { ondenied: () => {} } as never })).toThrow(/did you mean "onDenied"/);
    expect(() => limits({ logger: {} as never })).toThrow(/"logger"/);
  });

  it('warns when the Redis client keeps an offline queue', () => {
    const lines: string[] = [];
    const logger = { error: (m: string) => lines.push(m), warn: (m: string) => lines.push(m) };
    const queued = new Redis({ lazyConnect: true, port: 1 });
    limits({ store: { redis: queued, onOutage: 'fail-open' }, logger });
    expect(lines.join('\n')).toMatch(/offline queue/);
    lines.length = 0;
    const good = idleClient();
    limits({ store: { redis: good, onOutage: 'fail-open' }, logger });
    expect(lines).toEqual([]);
    queued.disconnect();
    good.disconnect();
  });
});

describe.each(KINDS)('limits() with every limit off (%s)', (kind) => {
  it('is a pass-through: nothing counted, nothing refused, nothing attached', async () => {
    const mw = limits({ perUserRpm: 0, perUserConcurrency: 0, globalConcurrency: 0, costBudgetPerHour: 0 });
    expect(mw.name).toBe('limitsOffMiddleware');
    const app = await startApp(mw, kind);
    try {
      const rs = await Promise.all(Array.from({ length: 50 }, () => post(app.port, { user: 'a' })));
      expect(tally(rs)).toEqual({ 200: 50 });
      expect(mw.stats()).toEqual({
        inflight: { user: 0, global: 0 },
        memorySlotKeys: 0,
        redisSlots: 0,
        storeDown: false,
      });
    } finally {
      await app.close();
    }
  });
});

describe('limitsOptionsFromEnv / limitsFromEnv', () => {
  it('maps the variables onto the options', () => {
    expect(limitsOptionsFromEnv({ MCP_RPM: '5', MCP_USER_CONCURRENCY: '0' })).toEqual({
      perUserRpm: 5,
      perUserConcurrency: 0,
      globalConcurrency: 64,
      costBudgetPerHour: 1_800_000,
    });
  });

  it('throws a TypeError naming a bad variable', () => {
    expect(() => limitsFromEnv({ MCP_GLOBAL_CONCURRENCY: 'lots' })).toThrow(TypeError);
    expect(() => limitsFromEnv({ MCP_GLOBAL_CONCURRENCY: 'lots' })).toThrow(/MCP_GLOBAL_CONCURRENCY/);
  });

  it('needs the client when REDIS_URL is set, and then shares the limits through it (fail-open by default)', () => {
    expect(() => limitsFromEnv({ REDIS_URL: 'redis://127.0.0.1:6379' })).toThrow(
      /REDIS_URL is set; pass the Redis client/,
    );
    const redis = idleClient();
    const o = limitsOptionsFromEnv({ REDIS_URL: 'redis://127.0.0.1:6379' }, { redis });
    expect(o.store).toEqual({ redis, onOutage: 'fail-open' });
    const closed = limitsOptionsFromEnv(
      { REDIS_URL: 'redis://127.0.0.1:6379' },
      { redis, onOutage: 'fail-closed' },
    );
    expect(closed.store).toEqual({ redis, onOutage: 'fail-closed' });
    expect(typeof limitsFromEnv({}, {}).stats).toBe('function');
    redis.disconnect();
  });
});
