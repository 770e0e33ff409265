/**
 * The options of `limits()`, and `resolveLimitsOptions`, which validates all of them when the middleware is
 * created and returns the frozen configuration the components are built from.
 * @see docs/middleware/limits.md
 */
import { type InflightScope, LIMIT_DEFAULTS, type LimitReason, MAX_LIMIT_VALUE } from '../../lib/limits.js';
import { errorMeta, log } from '../../core/log.js';
import type { LimitsHooks } from '../../core/limits-hooks.js';

export type { LimitsHooks };
import {
  OPTION_ERRORS,
  badOption,
  fnOption,
  intOption,
  knownKeys,
  loggerOption,
  optionError,
  optionsObject,
  stringOption,
} from '../../core/options.js';
import { stderrLogger } from '../../core/respond.js';
import type { Logger } from '../../core/types.js';
import type { RedisClientLike } from './redis-store.js';
import { isJsonObject } from '../../lib/json.js';

const NAME = 'limits';
const noop = (): void => {};

/** What to do while Redis cannot be reached. */
export type OutagePolicy = 'fail-open' | 'fail-closed';

/** Keep the limits in Redis, shared by every replica using the same Redis and `keyPrefix`. */
export interface RedisStoreOptions {
  /**
   * The client: an ioredis `Redis`, or a `Cluster` (a user's keys share a hash slot; the global concurrency check
   * is a call of its own). Create it with `redisClientOptions` so no command waits in an offline queue.
   */
  redis: RedisClientLike;
  /**
   * Required. `fail-open`: while Redis is unreachable each replica enforces the same limits in its own memory
   * (so R replicas admit up to R times the limits). `fail-closed`: refuse with 503 until Redis is back.
   */
  onOutage: OutagePolicy;
  /** Prefix of every key the limiter writes. Default `mcpware:limits`. */
  keyPrefix?: string;
  /** Longest wait for one Redis answer before the outage policy applies, in ms. Default 500. */
  timeoutMs?: number;
  /**
   * Lifetime of a concurrency slot in Redis, in ms, renewed every third of it while the request runs; the slots
   * of a replica that died lapse after at most this long. Default 60000.
   */
  slotLeaseMs?: number;
  /** After a Redis failure, go straight to the outage policy for this long before trying Redis again, in ms. Default 1000. */
  retryIntervalMs?: number;
}

export interface LimitsOptions {
  /** Requests per user per minute (fixed 60-second window from the user's first request). 0 = off. Default 600. */
  perUserRpm?: number;
  /** Requests of one user in flight at once. 0 = off. Default 8. */
  perUserConcurrency?: number;
  /** Requests in flight at once, all users together. 0 = off. Default 64. */
  globalConcurrency?: number;
  /** Milliseconds of work per user per hour (fixed window from the first charge). 0 = off. Default 1800000. */
  costBudgetPerHour?: number;
  /** `'memory'` (default: this process only) or a Redis store shared by replicas. */
  store?: 'memory' | RedisStoreOptions;
  hooks?: LimitsHooks;
  /** Where store outages and hook failures are reported. Default: stderr. */
  logger?: Logger;
}

/** The Redis store's options, with the defaults applied. */
export interface RedisConfig {
  readonly client: RedisClientLike;
  readonly onOutage: OutagePolicy;
  readonly keyPrefix: string;
  readonly timeoutMs: number;
  readonly slotLeaseMs: number;
  readonly retryIntervalMs: number;
}

/** The validated options. Each limit is a whole number, 0 when off; every hook is present and never throws. */
export interface LimitsConfig {
  readonly perUserRpm: number;
  readonly perUserConcurrency: number;
  readonly globalConcurrency: number;
  readonly costBudgetPerHour: number;
  /** Undefined for the memory store. */
  readonly store: RedisConfig | undefined;
  readonly hooks: Readonly<Required<LimitsHooks>>;
  readonly logger: Logger;
}

const OPTION_NAMES = [
  'perUserRpm',
  'perUserConcurrency',
  'globalConcurrency',
  'costBudgetPerHour',
  'store',
  'hooks',
  'logger',
] as const;
const STORE_OPTION_NAMES = ['redis', 'onOutage', 'keyPrefix', 'timeoutMs', 'slotLeaseMs', 'retryIntervalMs'];
const HOOK_NAMES = ['onDenied', 'onInflight', 'onCharge', 'onStoreError'] as const;

/** Validate every option of `limits()`; throws a TypeError naming the first bad one. */
export function resolveLimitsOptions(options: Readonly<LimitsOptions> | undefined): LimitsConfig {
  const o = optionsObject(NAME, options);
  if (typeof (o as { on?: unknown }).on === 'function' && 'method' in o) {
    throw optionError(
      OPTION_ERRORS.invalid,
      NAME,
      `${NAME}: it looks like you wrote app.use(limits); write app.use(limits({ ... }))`,
    );
  }
  knownKeys(NAME, o, OPTION_NAMES);
  const limit = (name: keyof typeof LIMIT_DEFAULTS): number =>
    intOption(NAME, name, o[name], LIMIT_DEFAULTS[name], 0, MAX_LIMIT_VALUE);
  const logger = loggerOption(NAME, o.logger, stderrLogger);
  return Object.freeze({
    perUserRpm: limit('perUserRpm'),
    perUserConcurrency: limit('perUserConcurrency'),
    globalConcurrency: limit('globalConcurrency'),
    costBudgetPerHour: limit('costBudgetPerHour'),
    store: resolveStore(o.store),
    hooks: resolveHooks(o.hooks, logger),
    logger,
  });
}

/** The hooks, each wrapped so that an exception it throws is logged and ignored; absent ones do nothing. */
function resolveHooks(value: LimitsHooks | undefined, logger: Logger): Readonly<Required<LimitsHooks>> {
  const hooks = optionsObject(NAME, value, 'hooks');
  knownKeys(NAME, hooks, HOOK_NAMES, 'hooks.');
  const safe = <A extends unknown[]>(name: (typeof HOOK_NAMES)[number]) => {
    const f = fnOption<(...args: A) => void>(NAME, `hooks.${name}`, hooks[name]);
    if (!f) return noop;
    return (...args: A): void => {
      try {
        f(...args);
      } catch (e) {
        log(logger, 'error', `${NAME}: a hook threw`, { error: errorMeta(e) });
      }
    };
  };
  return Object.freeze({
    onDenied: safe<[LimitReason]>('onDenied'),
    onInflight: safe<[InflightScope, number]>('onInflight'),
    onCharge: safe<[number, 'charged' | 'wall_clock']>('onCharge'),
    onStoreError: safe<[Error, 'insurance' | 'refused' | 'dropped']>('onStoreError'),
  });
}

function resolveStore(store: unknown): RedisConfig | undefined {
  if (store === undefined || store === 'memory') return undefined;
  if (!isJsonObject(store)) {
    throw badOption(NAME, 'store', store, `'memory' or { redis, onOutage }`);
  }
  knownKeys(NAME, store, STORE_OPTION_NAMES, 'store.');
  const s = store as Partial<RedisStoreOptions>;
  const c = s.redis as Partial<RedisClientLike> | undefined;
  if (
    !c ||
    typeof c !== 'object' ||
    typeof c.status !== 'string' ||
    typeof c.eval !== 'function' ||
    typeof c.evalsha !== 'function'
  ) {
    throw badOption(NAME, 'store.redis', c === undefined ? c : '[object]', 'an ioredis client');
  }
  if (s.onOutage !== 'fail-open' && s.onOutage !== 'fail-closed') {
    const expected = `'fail-open' or 'fail-closed' (say what happens while Redis is down)`;
    throw badOption(NAME, 'store.onOutage', s.onOutage, expected);
  }
  const keyPrefix = stringOption(NAME, 'store.keyPrefix', s.keyPrefix, 'mcpware:limits');
  if (keyPrefix.length > 200) {
    throw badOption(NAME, 'store.keyPrefix', keyPrefix, 'a non-empty string of at most 200 characters');
  }
  return Object.freeze({
    client: c as RedisClientLike,
    onOutage: s.onOutage,
    keyPrefix,
    timeoutMs: intOption(NAME, 'store.timeoutMs', s.timeoutMs, 500, 1, 60_000),
    slotLeaseMs: intOption(NAME, 'store.slotLeaseMs', s.slotLeaseMs, 60_000, 1_000, 24 * 3600 * 1000),
    retryIntervalMs: intOption(NAME, 'store.retryIntervalMs', s.retryIntervalMs, 1000, 0, 60_000),
  });
}
