/**
 * limits: per-user requests per minute, per-user and global concurrency, and an hourly work budget per user;
 * in process memory, or shared by every replica through Redis. Mount it inside the authentication middleware:
 * it keys on `req.locals.principal`: where the principal came from and its id. POST requests count, and so do
 * a session's GET stream (a request of the minute without a slot, as a listen stream) and its DELETE.
 * @see docs/middleware/limits.md
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { InflightScope } from '../../lib/limits.js';
import { addCharge } from '../../core/charge.js';
import { log } from '../../core/log.js';
import { localsOf } from '../../core/respond.js';
import { mountOrderCheck } from '../../core/mount-order.js';
import { notPost } from '../../core/post-only.js';
import type { Middleware } from '../../core/types.js';
import { createAdmission } from './admit.js';
import { type LimitsEnvOptions, limitsOptionsFromEnv } from './env.js';
import { createStores } from './limiter.js';
import { type LimitsOptions, resolveLimitsOptions } from './options.js';

export type { LimitsHooks, LimitsOptions, OutagePolicy, RedisStoreOptions } from './options.js';
export type { RedisClientLike } from './redis-store.js';
export { type LimitsEnvOptions, limitsOptionsFromEnv } from './env.js';
export { redisClientOptions } from '../../lib/limits.js';

/** Counts for tests and health checks. */
export interface LimitsStats {
  /** Requests of this process holding a slot, per scope. */
  inflight: Record<InflightScope, number>;
  /** Keys holding a slot in this process's in-memory semaphores (the store, or the fail-open insurance). */
  memorySlotKeys: number;
  /** Concurrency slots this process holds in Redis (and renews). */
  redisSlots: number;
  /** True while Redis is considered unreachable. */
  storeDown: boolean;
}

export type LimitsMiddleware = Middleware & {
  /** Current counts. */
  stats(): LimitsStats;
  /**
   * The limiter's first part, mounted right after authentication and before `rejectBatch()` and `parse()`: a POST
   * of a caller this limiter has refused for its minute or its budget is refused again (429), before its body is
   * read, until that window ends, unless the caller has a request in flight here.
   */
  readonly gate: Middleware;
};

/**
 * Record work done for the request, in milliseconds (several calls add up). When the response closes the
 * total, if anything was charged, replaces the wall-clock time in the user's hourly budget. A non-finite value
 * is ignored; a negative total counts as 0. Harmless when no limits middleware runs.
 * @see docs/middleware/limits.md
 * @example
 * ```ts
 * import { charge } from 'mcpware/limits';
 *
 * app.post('/mcp', (req, _res, next) => {
 *   const started = performance.now();
 *   // ... the expensive work ...
 *   charge(req, performance.now() - started);
 *   next();
 * });
 * ```
 */
export function charge(req: IncomingMessage, ms: number): void {
  addCharge(localsOf(req), ms);
}

/**
 * Said once per instance, at the first POST without a principal: mounted before authentication (or without
 * any), limits() puts every caller in one bucket, and an unauthenticated caller can get 429 before
 * authentication says 401. The request is admitted as usual.
 */
const NO_PRINCIPAL =
  'limits: a request arrived with no principal (req.locals.principal), so every such caller shares one ' +
  'bucket; mount limits() after authentication (an unauthenticated caller then gets 401, not 429). ' +
  'A server without authentication can ignore this';

/**
 * The limits middleware; its options are validated here (see {@link LimitsOptions}).
 * @param options - {@link LimitsOptions}
 * @see docs/middleware/limits.md
 * @example
 * ```ts
 * import { limits } from 'mcpware/limits';
 *
 * const limiter = limits({ perUserRpm: 600, perUserConcurrency: 8, globalConcurrency: 64 });
 * app.use('/mcp', limiter); // after authentication and parse()
 * ```
 */
export function limits(options: Readonly<LimitsOptions> = {}): LimitsMiddleware {
  const config = resolveLimitsOptions(options);
  const { perUserRpm, perUserConcurrency, globalConcurrency, costBudgetPerHour } = config;
  if (perUserRpm + perUserConcurrency + globalConcurrency + costBudgetPerHour === 0) {
    // Every limit is off: a pass-through.
    const limitsOffMiddleware = (_req: IncomingMessage, _res: ServerResponse, next: () => void): void =>
      next();
    const stats = (): LimitsStats => ({
      inflight: { user: 0, global: 0 },
      memorySlotKeys: 0,
      redisSlots: 0,
      storeDown: false,
    });
    return Object.assign(limitsOffMiddleware, { stats, gate: limitsOffMiddleware });
  }
  const { limiter, memory, redis } = createStores(config);
  const admission = createAdmission(config, limiter);

  let warned = false;
  const late = mountOrderCheck('limits', config.logger);
  const limitsMiddleware = (req: IncomingMessage, res: ServerResponse, next: () => void): void => {
    if (late(req, res)) return next();
    const method = req.method;
    if (method !== 'POST' && method !== 'GET' && method !== 'DELETE')
      return notPost(req, res, next, 'limits');
    if (!warned && method === 'POST' && req.locals?.principal === undefined) {
      warned = true;
      log(config.logger, 'warn', NO_PRINCIPAL);
    }
    admission.admit(req, res, next);
  };
  const stats = (): LimitsStats => ({
    inflight: { ...admission.inflight },
    memorySlotKeys: memory?.slotKeys ?? 0,
    redisSlots: redis?.slotCount ?? 0,
    storeDown: limiter.storeDown,
  });
  return Object.assign(limitsMiddleware, { stats, gate: admission.gate });
}

/**
 * {@link limits} configured from the environment (see {@link limitsOptionsFromEnv}).
 * @param env - the environment, e.g. `process.env`
 * @param extra - {@link LimitsEnvOptions}
 * @see docs/middleware/limits.md
 * @example
 * ```ts
 * import { limitsFromEnv } from 'mcpware/limits';
 *
 * app.use('/mcp', limitsFromEnv(process.env)); // after authentication and parse()
 * ```
 */
export function limitsFromEnv(
  env: Readonly<Record<string, string | undefined>>,
  extra: LimitsEnvOptions = {},
): LimitsMiddleware {
  return limits(limitsOptionsFromEnv(env, extra));
}
