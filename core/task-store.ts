/**
 * Where tasks live: the {@link TaskStore} interface the dispatcher's tasks use, and the in-memory store
 * (`memoryTaskStore()`: one process; `redisTaskStore()` in core/task-store-redis.ts shares tasks between
 * replicas).
 *
 * A task is found by its owner and its id together: a request of another principal names another task, which
 * does not exist, so it gets exactly the unknown-task answer. Each owner's live tasks (not yet purged) are
 * bounded in count and in bytes (the JSON text of the stored tasks: results and input requests included).
 * Writes are compare-and-set on the task's `rev`, so that a cancel on one replica and the work's end on another
 * cannot overwrite each other.
 *
 * @see docs/guides/tasks.md
 */
import type { StoredTask } from '../lib/tasks.js';
import { expiresAt } from '../lib/tasks.js';
import { fnOption, intOption, knownKeys, optionsObject } from './options.js';

/**
 * The least a task counts against its owner's bytes, whatever the size of its JSON: a task's small changes (a
 * status message, a lease, the error of its failure) then never need bytes it did not count already, so a task
 * whose owner is at the bound can still end; only a result or input requests past this size count as growth.
 */
export const MIN_TASK_BYTES = 1024;

/** The bounds of one owner's live tasks. */
export interface TaskBounds {
  /** Live tasks (created, not yet purged) per owner. */
  maxTasks: number;
  /** Bytes of JSON of the live tasks per owner (each counting at least {@link MIN_TASK_BYTES}). */
  maxBytes: number;
}

/**
 * A write's outcome: `ok`; `conflict` (the task changed since it was read: read it again); `gone` (purged, or
 * never stored); `task_limit` / `task_bytes` (the owner's bounds would be exceeded).
 */
export type TaskWrite =
  { ok: true } | { ok: false; reason: 'conflict' | 'gone' | 'task_limit' | 'task_bytes' };

/**
 * A task store. Every method may reject (a store that cannot be reached): the dispatcher answers -32603 then,
 * and a task's work retries its writes until its lease lapses.
 */
export interface TaskStore {
  /** Store a new task (`rev` 0), unless the owner's bounds would be exceeded. Durable when it resolves. */
  create(task: StoredTask, bounds: TaskBounds): Promise<TaskWrite>;
  /** The task of `owner` with this id, or undefined (unknown, another owner's, or purged). */
  get(owner: string, id: string): Promise<StoredTask | undefined>;
  /**
   * Replace a task by `task` (whose `rev` is one more than the stored one), unless another write came first or
   * the owner's bytes would be exceeded.
   */
  replace(task: StoredTask, bounds: TaskBounds): Promise<TaskWrite>;
  /** Stop timers and let go of connections the store opened itself (not a client it was given). */
  close?(): Promise<void>;
}

/** Options of {@link memoryTaskStore}. */
export interface MemoryTaskStoreOptions {
  /** The most tasks the store holds for all owners together; a create beyond it is `task_limit`. Default 100000. */
  maxTasks?: number;
  /** The clock expiries are read against (tests). Default `Date.now`. */
  clock?: () => number;
}

const M = 'memoryTaskStore';

interface Entry {
  readonly text: string;
  readonly bytes: number;
  readonly expiresAt: number;
  readonly rev: number;
}

interface Owner {
  readonly tasks: Map<string, Entry>;
  bytes: number;
}

/**
 * Tasks in this process's memory: for one replica, and for tests. Tasks are kept as JSON text (as Redis keeps
 * them), so what a caller does to a task it read never changes the stored one; each is purged at its TTL (looked
 * at on access, and swept every minute).
 * @param options - {@link MemoryTaskStoreOptions}
 * @see docs/guides/tasks.md
 * @example
 * ```ts
 * import { dispatch, memoryTaskStore } from 'mcpware/dispatch';
 * import { parse } from 'mcpware/parse';
 * import { ToolRegistry, ok } from 'mcpware/tools';
 *
 * const tools = new ToolRegistry({
 *   tools: [
 *     { name: 'report', taskSupport: 'optional', inputSchema: { type: 'object' }, call: () => ok({ done: 1 }) },
 *   ],
 * });
 * const serverInfo = { name: 'my-server', version: '1.0.0' };
 * app.use('/mcp', parse(), dispatch({ handlers: { tools }, serverInfo, tasks: { store: memoryTaskStore() } }));
 * ```
 */
export function memoryTaskStore(options: Readonly<MemoryTaskStoreOptions> = {}): TaskStore {
  optionsObject(M, options);
  knownKeys(M, options, ['maxTasks', 'clock']);
  const maxTasks = intOption(M, 'maxTasks', options.maxTasks, 100_000, 1);
  const owners = new Map<string, Owner>();
  let total = 0;
  const now = fnOption<() => number>(M, 'clock', options.clock) ?? Date.now;

  const drop = (ownerKey: string, o: Owner, id: string, e: Entry): void => {
    o.tasks.delete(id);
    o.bytes -= e.bytes;
    total--;
    if (o.tasks.size === 0) owners.delete(ownerKey);
  };
  const sweepOwner = (ownerKey: string, o: Owner, t: number): void => {
    for (const [id, e] of o.tasks) if (e.expiresAt <= t) drop(ownerKey, o, id, e);
  };
  const sweep = (): void => {
    const t = now();
    for (const [k, o] of owners) sweepOwner(k, o, t);
  };
  const timer = setInterval(sweep, 60_000);
  timer.unref();

  return {
    async create(task, bounds) {
      const t = now();
      const held = owners.get(task.owner);
      if (held) sweepOwner(task.owner, held, t);
      // Expired tasks of other owners count until swept: sweep them all before refusing for the global bound.
      if (total >= maxTasks) sweep();
      const o = owners.get(task.owner);
      if (o?.tasks.has(task.id)) return { ok: false, reason: 'conflict' };
      if (total >= maxTasks || (o?.tasks.size ?? 0) >= bounds.maxTasks)
        return { ok: false, reason: 'task_limit' };
      const text = JSON.stringify(task);
      const bytes = Math.max(Buffer.byteLength(text), MIN_TASK_BYTES);
      if ((o?.bytes ?? 0) + bytes > bounds.maxBytes) return { ok: false, reason: 'task_bytes' };
      const entry: Entry = { text, bytes, expiresAt: expiresAt(task), rev: task.rev };
      const into = o ?? { tasks: new Map<string, Entry>(), bytes: 0 };
      if (!o) owners.set(task.owner, into);
      into.tasks.set(task.id, entry);
      into.bytes += bytes;
      total++;
      return { ok: true };
    },
    async get(owner, id) {
      const o = owners.get(owner);
      const e = o?.tasks.get(id);
      if (!o || !e) return undefined;
      if (e.expiresAt <= now()) {
        drop(owner, o, id, e);
        return undefined;
      }
      return JSON.parse(e.text) as StoredTask;
    },
    async replace(task, bounds) {
      const o = owners.get(task.owner);
      const e = o?.tasks.get(task.id);
      if (!o || !e) return { ok: false, reason: 'gone' };
      if (e.expiresAt <= now()) {
        drop(task.owner, o, task.id, e);
        return { ok: false, reason: 'gone' };
      }
      if (e.rev !== task.rev - 1) return { ok: false, reason: 'conflict' };
      const text = JSON.stringify(task);
      const bytes = Math.max(Buffer.byteLength(text), MIN_TASK_BYTES);
      // A task that does not grow is always written (its owner's bytes do not rise), one that grows within the bound.
      if (bytes > e.bytes && o.bytes - e.bytes + bytes > bounds.maxBytes)
        return { ok: false, reason: 'task_bytes' };
      o.tasks.set(task.id, { text, bytes, expiresAt: expiresAt(task), rev: task.rev });
      o.bytes += bytes - e.bytes;
      return { ok: true };
    },
    async close() {
      clearInterval(timer);
    },
  };
}

/** Whether `v` has the methods of a {@link TaskStore}. */
export function isTaskStore(v: unknown): v is TaskStore {
  if (typeof v !== 'object' || v === null) return false;
  const s = v as Record<string, unknown>;
  return typeof s.create === 'function' && typeof s.get === 'function' && typeof s.replace === 'function';
}
