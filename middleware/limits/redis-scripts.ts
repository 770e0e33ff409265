/**
 * The Lua scripts of the Redis store's concurrency slots. Each runs atomically in Redis, so the count and the
 * take, or the renewal and the pruning, cannot interleave with another replica's.
 * @see docs/middleware/limits.md
 */
import { createHash } from 'node:crypto';
import type { RedisClientLike } from './redis-store.js';

/** A script and its SHA-1, the name EVALSHA calls it by. */
export interface Script {
  readonly lua: string;
  readonly sha: string;
}

function script(lua: string): Script {
  return { lua, sha: createHash('sha1').update(lua).digest('hex') };
}

/**
 * Take a slot: drop lapsed slots, count, add ours scored by its expiry (Redis server time, so replicas' clocks do
 * not matter), and let the whole key expire with its latest slot.
 * KEYS[1] the slot set; ARGV limit, lease in ms, token. Returns {1, count} or {0, count}.
 */
export const ACQUIRE = script(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local n = redis.call('ZCARD', KEYS[1])
if n >= tonumber(ARGV[1]) then return {0, n} end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
redis.call('PEXPIREAT', KEYS[1], last[2])
return {1, n + 1}
`);

/**
 * Renew our live slots (XX: a slot that already lapsed or was released is not brought back), drop lapsed ones,
 * and move the key's expiry to its latest slot.
 * KEYS[1] the slot set; ARGV lease in ms, then the tokens. Returns the set's size.
 */
export const RENEW = script(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local exp = now + tonumber(ARGV[1])
for i = 2, #ARGV do redis.call('ZADD', KEYS[1], 'XX', exp, ARGV[i]) end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
if last[2] then redis.call('PEXPIREAT', KEYS[1], last[2]) end
return redis.call('ZCARD', KEYS[1])
`);

/** EVALSHA, loading the script with EVAL when Redis does not know it (first use, or after a restart). */
export async function runScript(
  client: RedisClientLike,
  s: Script,
  key: string,
  args: readonly (string | number)[],
): Promise<unknown> {
  try {
    return await client.evalsha(s.sha, 1, key, ...args);
  } catch (e) {
    if (e instanceof Error && e.message.startsWith('NOSCRIPT')) return client.eval(s.lua, 1, key, ...args);
    throw e;
  }
}
