/**
 * The limits options read from the environment (the demo server's configuration).
 * @see docs/middleware/limits.md
 */
import { parseLimitsEnv } from '../../lib/limits.js';
import type { Logger } from '../../core/types.js';
import type { LimitsHooks, LimitsOptions, OutagePolicy } from './options.js';
import type { RedisClientLike } from './redis-store.js';

/** Options for {@link limitsOptionsFromEnv} beyond what the environment says. */
export interface LimitsEnvOptions {
  /** The Redis client, required when `REDIS_URL` is set (create it from that URL with `redisClientOptions`). */
  redis?: RedisClientLike;
  /** What to do while Redis is down. Default `fail-open`. */
  onOutage?: OutagePolicy;
  hooks?: LimitsHooks;
  logger?: Logger;
}

/**
 * The limits options the demo server reads from the environment: `MCP_RPM` (600), `MCP_USER_CONCURRENCY` (8),
 * `MCP_GLOBAL_CONCURRENCY` (64), `MCP_COST_BUDGET_MS` per user per hour (1800000), each 0 = off; with
 * `REDIS_URL` the limits live in that Redis (pass the client). Throws a TypeError naming a bad variable.
 * @param env - the environment, e.g. `process.env`
 * @param extra - {@link LimitsEnvOptions}
 * @example
 * ```ts
 * import { limits, limitsOptionsFromEnv } from 'mcpware/limits';
 *
 * const options = limitsOptionsFromEnv({ MCP_RPM: '120', MCP_USER_CONCURRENCY: '4' });
 * app.use('/mcp', limits({ ...options, globalConcurrency: 32 }));
 * ```
 */
export function limitsOptionsFromEnv(
  env: Readonly<Record<string, string | undefined>>,
  extra: LimitsEnvOptions = {},
): LimitsOptions {
  const r = parseLimitsEnv(env);
  if (!r.ok) throw new TypeError(`limits: ${r.message}`);
  const { redisUrl, ...values } = r.value;
  if (redisUrl !== undefined && !extra.redis) {
    throw new TypeError(
      'limits: REDIS_URL is set; pass the Redis client created from it (new Redis(url, redisClientOptions))',
    );
  }
  const out: LimitsOptions = values;
  if (extra.redis) out.store = { redis: extra.redis, onOutage: extra.onOutage ?? 'fail-open' };
  if (extra.hooks) out.hooks = extra.hooks;
  if (extra.logger) out.logger = extra.logger;
  return out;
}
