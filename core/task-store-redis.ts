/**
 * The task store in Redis (`redisTaskStore()`): tasks shared by every replica on the same Redis and key prefix, so
 * that a task created on one replica is read, updated and cancelled through another.
 *
 * Keys (every key of one owner carries the same hash tag, a hash of the owner, so that each operation is one Lua
 * script over the keys of one cluster slot):
 * - `<prefix>{<tag>}:t:<id>`: a hash of the task's JSON (`j`), its `rev` (`r`), its owner (`o`) and its expiry
 *   (`e`), expiring (PEXPIREAT) at the task's expiry;
 * - `<prefix>{<tag>}:idx`: the sorted set of the owner's live task ids, scored by expiry;
 * - `<prefix>{<tag>}:bytes`: the hash of the owner's live task ids to the bytes of their JSON.
 * The two index keys expire no earlier than the owner's last task. Times in the scripts are Redis server time.
 *
 * @see docs/guides/tasks.md
 */
import { createHash } from 'node:crypto';
import type { StoredTask } from '../lib/tasks.js';
import { MAX_TASK_ID_LENGTH, expiresAt } from '../lib/tasks.js';
import { log } from './log.js';
import { runScript as run, script } from './redis-script.js';
import { badOption, knownKeys, loggerOption, missingOption, optionsObject, stringOption } from './options.js';
import { stderrLogger } from './respond.js';
import { MIN_TASK_BYTES, type TaskBounds, type TaskStore, type TaskWrite } from './task-store.js';
import type { Logger } from './types.js';

/**
 * The part of a Redis client the task store uses. An ioredis `Redis` instance fits, and so does an ioredis
 * `Cluster` (create either with `redisClientOptions` of `mcpware/limits`, so that a command fails at once while
 * Redis is unreachable instead of waiting in the offline queue).
 */
export interface RedisTaskStoreClient {
  eval(script: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>;
  evalsha(sha: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>;
}

/** Options of {@link redisTaskStore}. */
export interface RedisTaskStoreOptions {
  /** An ioredis `Redis` or `Cluster` client; the store never closes it. */
  client: RedisTaskStoreClient;
  /** The prefix of every key (no `{` or `}`: the store adds the hash tag). Default `'mcpware:tasks:'`. */
  keyPrefix?: string;
  /** Where the store's warnings go. Default: stderr. */
  logger?: Logger;
}

const R = 'redisTaskStore';

/**
 * `now` (Redis server time in ms); `size`, what a task's JSON counts against its owner's bytes; `prune`, drop the
 * owner's expired entries from the two index keys; `used`, the owner's bytes; `index`, a task's expiry and entries.
 */
const COMMON = `
local function size(json) return math.max(#json, ${MIN_TASK_BYTES}) end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function prune(idx, by)
  local gone = redis.call('ZRANGEBYSCORE', idx, '-inf', now)
  for i = 1, #gone do redis.call('HDEL', by, gone[i]) end
  if #gone > 0 then redis.call('ZREMRANGEBYSCORE', idx, '-inf', now) end
end
local function used(by)
  local total = 0
  local sizes = redis.call('HVALS', by)
  for i = 1, #sizes do total = total + tonumber(sizes[i]) end
  return total
end
local function index(tk, idx, by, id, json, exp)
  redis.call('PEXPIREAT', tk, exp)
  redis.call('ZADD', idx, exp, id)
  redis.call('HSET', by, id, size(json))
  local last = redis.call('ZRANGE', idx, -1, -1, 'WITHSCORES')
  local until_ = tonumber(last[2])
  redis.call('PEXPIREAT', idx, until_)
  redis.call('PEXPIREAT', by, until_)
end
`;

/**
 * Create. KEYS task, index, bytes. ARGV id, json, rev, owner, expiry, maxTasks, maxBytes. Returns 'ok',
 * 'conflict' (the id is live), 'task_limit' or 'task_bytes'.
 */
const CREATE = script(`${COMMON}
local tk, idx, by = KEYS[1], KEYS[2], KEYS[3]
local id, json, rev, owner = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local exp, maxTasks, maxBytes = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
prune(idx, by)
if redis.call('EXISTS', tk) == 1 and tonumber(redis.call('HGET', tk, 'e') or '0') > now then return 'conflict' end
if redis.call('ZCARD', idx) >= maxTasks then return 'task_limit' end
if used(by) + size(json) > maxBytes then return 'task_bytes' end
redis.call('DEL', tk)
redis.call('HSET', tk, 'j', json, 'r', rev, 'o', owner, 'e', exp)
index(tk, idx, by, id, json, exp)
return 'ok'
`);

/** Get. KEYS task. ARGV owner. Returns the task's JSON, or nil (none, another owner's, expired). */
const GET = script(`${COMMON}
local v = redis.call('HMGET', KEYS[1], 'j', 'o', 'e')
if not v[1] or v[2] ~= ARGV[1] or tonumber(v[3]) <= now then return false end
return v[1]
`);

/**
 * Replace (compare-and-set on rev). KEYS task, index, bytes. ARGV id, json, rev, owner, expiry, maxBytes. Returns
 * 'ok', 'gone', 'conflict' (the stored rev is not rev - 1) or 'task_bytes' (the task grows past the bound).
 */
const REPLACE = script(`${COMMON}
local tk, idx, by = KEYS[1], KEYS[2], KEYS[3]
local id, json, rev, owner = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4]
local exp, maxBytes = tonumber(ARGV[5]), tonumber(ARGV[6])
local v = redis.call('HMGET', tk, 'r', 'o', 'e')
if not v[1] or v[2] ~= owner or tonumber(v[3]) <= now then return 'gone' end
if tonumber(v[1]) ~= rev - 1 then return 'conflict' end
prune(idx, by)
local old = tonumber(redis.call('HGET', by, id) or '0')
if size(json) > old and used(by) - old + size(json) > maxBytes then return 'task_bytes' end
redis.call('HSET', tk, 'j', json, 'r', rev, 'e', exp)
index(tk, idx, by, id, json, exp)
return 'ok'
`);

const WRITES: ReadonlyMap<unknown, TaskWrite> = new Map<unknown, TaskWrite>([
  ['ok', { ok: true }],
  ['conflict', { ok: false, reason: 'conflict' }],
  ['gone', { ok: false, reason: 'gone' }],
  ['task_limit', { ok: false, reason: 'task_limit' }],
  ['task_bytes', { ok: false, reason: 'task_bytes' }],
]);

function writeOf(answer: unknown): TaskWrite {
  const w = WRITES.get(answer);
  if (!w) throw new Error(`${R}: unexpected answer of a task script`);
  return { ...w };
}

/**
 * Tasks in Redis, shared by the replicas that use the same Redis and `keyPrefix`. Creation is durable when
 * `create` resolves (a `tasks/get` on any replica finds the task); each owner's bounds are checked atomically with
 * the write, after the owner's expired tasks are dropped; a replace is compare-and-set on the task's `rev`.
 * Cluster-safe: the keys of one owner share a hash slot. The store does not close the client.
 * @param options - {@link RedisTaskStoreOptions}
 * @see docs/guides/tasks.md
 * @example
 * ```ts
 * import { Redis } from 'ioredis';
 * import { dispatch, redisTaskStore } from 'mcpware/dispatch';
 * import { redisClientOptions } from 'mcpware/limits';
 * import { parse } from 'mcpware/parse';
 * import { ToolRegistry, ok } from 'mcpware/tools';
 *
 * const tools = new ToolRegistry({
 *   tools: [
 *     { name: 'report', taskSupport: 'optional', inputSchema: { type: 'object' }, call: () => ok({ done: 1 }) },
 *   ],
 * });
 * const client = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', redisClientOptions);
 * const serverInfo = { name: 'my-server', version: '1.0.0' };
 * const store = redisTaskStore({ client });
 * app.use('/mcp', parse(), dispatch({ handlers: { tools }, serverInfo, tasks: { store } }));
 * ```
 */
export function redisTaskStore(options: Readonly<RedisTaskStoreOptions>): TaskStore {
  const o = optionsObject(R, options);
  knownKeys(R, o, ['client', 'keyPrefix', 'logger']);
  const client = o.client;
  if (client === undefined) throw missingOption(R, 'client', 'an ioredis Redis or Cluster client');
  const c = client as unknown as Record<string, unknown> | null;
  if (typeof c !== 'object' || c === null || typeof c.eval !== 'function' || typeof c.evalsha !== 'function')
    throw badOption(R, 'client', client, 'an ioredis Redis or Cluster client (with eval and evalsha)');
  const prefix = stringOption(R, 'keyPrefix', o.keyPrefix, 'mcpware:tasks:', true);
  if (/[{}]/.test(prefix)) throw badOption(R, 'keyPrefix', prefix, 'a prefix without "{" or "}"');
  const logger = loggerOption(R, o.logger, stderrLogger);
  const queue = (client as { options?: { enableOfflineQueue?: boolean } }).options?.enableOfflineQueue;
  if (queue === true)
    log(logger, 'warn', `${R}: the Redis client has its offline queue on; create it with redisClientOptions`);

  const base = (owner: string): string =>
    `${prefix}{${createHash('sha256').update(owner).digest('base64url').slice(0, 22)}}:`;
  const keysOf = (task: StoredTask): string[] => {
    const b = base(task.owner);
    return [`${b}t:${task.id}`, `${b}idx`, `${b}bytes`];
  };
  const argsOf = (task: StoredTask): (string | number)[] => [
    task.id,
    JSON.stringify(task),
    task.rev,
    task.owner,
    expiresAt(task),
  ];

  return {
    async create(task: StoredTask, bounds: TaskBounds): Promise<TaskWrite> {
      const args = [...argsOf(task), bounds.maxTasks, bounds.maxBytes];
      return writeOf(await run(client, CREATE, keysOf(task), args));
    },
    async get(owner: string, id: string): Promise<StoredTask | undefined> {
      if (id.length > MAX_TASK_ID_LENGTH) return undefined;
      const text = await run(client, GET, [`${base(owner)}t:${id}`], [owner]);
      if (typeof text !== 'string') return undefined;
      const task = JSON.parse(text) as StoredTask;
      return task.owner === owner && task.id === id ? task : undefined;
    },
    async replace(task: StoredTask, bounds: TaskBounds): Promise<TaskWrite> {
      return writeOf(await run(client, REPLACE, keysOf(task), [...argsOf(task), bounds.maxBytes]));
    },
  };
}
