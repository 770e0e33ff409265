/**
 * Lua scripts run on Redis by their SHA-1: the one way the limits' Redis store and the Redis task store call
 * their scripts. EVALSHA first; EVAL when Redis does not know the script (its first use, after a restart or a
 * SCRIPT FLUSH, on a new cluster node), which also loads it for the next EVALSHA.
 */
import { createHash } from 'node:crypto';

/** A script and its SHA-1, the name EVALSHA calls it by. */
export interface Script {
  readonly lua: string;
  readonly sha: string;
}

/** The part of a Redis client (ioredis `Redis` or `Cluster`) that runs scripts. */
export interface ScriptClient {
  eval(script: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>;
  evalsha(sha: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>;
}

/** A script of this Lua source. */
export function script(lua: string): Script {
  return { lua, sha: createHash('sha1').update(lua).digest('hex') };
}

/** EVALSHA, loading the script with EVAL when Redis does not know it. */
export async function runScript(
  client: ScriptClient,
  s: Script,
  keys: readonly string[],
  args: readonly (string | number)[],
): Promise<unknown> {
  try {
    return await client.evalsha(s.sha, keys.length, ...keys, ...args);
  } catch (e) {
    if (e instanceof Error && e.message.startsWith('NOSCRIPT')) {
      return client.eval(s.lua, keys.length, ...keys, ...args);
    }
    throw e;
  }
}
