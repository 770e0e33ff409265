/**
 * `notifications/tasks` on `subscriptions/listen` streams (the tasks extension's optional status notifications):
 * a stream names task ids in `notifications.taskIds`; it is acknowledged for the ids of tasks its caller owns (found
 * by the caller's principal key and the id together, so another caller's id and an unknown one read the same and
 * are left out), and then hears each change of those tasks' status, input round or status message as the full
 * `DetailedTask` that `tasks/get` answers.
 *
 * Changes come from two places: every write this replica makes (the task's work, `tasks/update`, `tasks/cancel`,
 * the lapse a `tasks/get` writes) is published here at once; and while any stream watches a task, the store is
 * read again every `pollIntervalMs`, so that a change written on another replica reaches it too. Each stream keeps
 * the revision it last heard per task, so an older read never follows a newer write. A task that ends is sent once
 * more and no longer watched.
 *
 * @see docs/guides/tasks.md
 */
import { refusal } from '../../lib/errors.js';
import type { JsonObject } from '../../lib/jsonrpc.js';
import {
  MAX_TASK_ID_LENGTH,
  type StoredTask,
  TASKS_REQUIRED_CAPABILITIES,
  declaresTasks,
  detailedTask,
  isTerminal,
} from '../../lib/tasks.js';
import { errorMeta, log } from '../../core/log.js';
import { type RpcError, missingCapabilityError } from './rpc-errors.js';
import type { TaskSettings } from './tasks.js';

/** Most task ids one listen stream watches: the first ones of `taskIds` (later ids are not acknowledged). */
export const MAX_LISTEN_TASK_IDS = 100;

/** One stream's watch over its task ids. */
export interface TaskWatch {
  /** Resolves with the ids acknowledged: those of the caller's own live tasks, in request order. */
  readonly acked: Promise<string[]>;
  /**
   * Start sending with `send` (called with each `DetailedTask`): the current state of each acknowledged task
   * first, then its changes.
   */
  start(send: (task: JsonObject) => void): void;
  /** The stream ended: forget it. */
  stop(): void;
}

/** The status notifications of one dispatcher's listen streams. */
export interface TaskNotifier {
  /** A write of `task` landed in the store: the streams of this replica watching it hear of it. */
  published(task: StoredTask): void;
  /** Watch `ids` (already bounded, see {@link requestedTaskIds}) for a stream of `owner`. */
  watch(owner: string, ids: readonly string[]): TaskWatch;
  /** Task ids watched by open streams of this replica. */
  readonly watched: number;
  /** Stop the periodic re-read and forget every watch. */
  close(): void;
}

/**
 * The task ids a listen filter asks for: undefined when it names none (`taskIds` absent); the first
 * {@link MAX_LISTEN_TASK_IDS} distinct non-empty strings otherwise. An id longer than `MAX_TASK_ID_LENGTH` names
 * no task and is dropped here (never looked up, never acknowledged).
 */
export function requestedTaskIds(filter: JsonObject): string[] | undefined {
  const list = filter.taskIds;
  if (list === undefined) return undefined;
  const ids = new Set<string>();
  if (!Array.isArray(list)) return [];
  for (const id of list) {
    if (ids.size >= MAX_LISTEN_TASK_IDS) break;
    if (typeof id === 'string' && id !== '' && id.length <= MAX_TASK_ID_LENGTH) ids.add(id);
  }
  return [...ids];
}

/**
 * Why a listen request naming task ids cannot be served: `taskIds` not an array (-32602), or a client that does
 * not declare the extension on the request (-32021, `data.requiredCapabilities`).
 */
export function taskIdsRefusal(filter: JsonObject, clientCapabilities: JsonObject): RpcError | undefined {
  if (filter.taskIds === undefined) return undefined;
  if (!declaresTasks(clientCapabilities)) {
    const e = missingCapabilityError(TASKS_REQUIRED_CAPABILITIES as Record<string, JsonObject>);
    return { code: e.code, message: e.message, data: e.data, status: e.status ?? 400 };
  }
  if (!Array.isArray(filter.taskIds)) {
    const r = refusal('invalid_params', {
      message: 'Invalid params: "notifications.taskIds" must be an array of task ids',
    });
    return { code: r.code, message: r.message, status: r.status };
  }
  return undefined;
}

/** What a stream remembers of one watched task. */
interface Seen {
  /** The newest revision heard. */
  rev: number;
  /** The newest task heard before the stream started. */
  task: StoredTask | undefined;
  /** Status, round and status message of the last task sent. */
  sent: string | undefined;
}

const signature = (t: StoredTask): string => `${t.status}\n${t.round}\n${t.statusMessage ?? ''}`;

/** The status notifications of a dispatcher with `tasks`. */
export function createTaskNotifier(settings: TaskSettings): TaskNotifier {
  const hub = new Hub(settings);
  return {
    published: (task) => hub.published(task),
    watch: (owner, ids) => new Watch(hub, owner, ids),
    get watched() {
      return hub.byId.size;
    },
    close: () => hub.close(),
  };
}

/** The watches of one dispatcher by task id, and the periodic re-read while there are any. */
class Hub {
  /** Task id → the watches naming it. Bounded: each watch names at most MAX_LISTEN_TASK_IDS ids. */
  readonly byId = new Map<string, Set<Watch>>();
  #timer: NodeJS.Timeout | undefined;
  #reading = false;

  constructor(readonly settings: TaskSettings) {}

  add(w: Watch, id: string): void {
    let set = this.byId.get(id);
    if (set === undefined) this.byId.set(id, (set = new Set()));
    set.add(w);
  }

  forget(w: Watch, id: string): void {
    const set = this.byId.get(id);
    if (set === undefined) return;
    set.delete(w);
    if (set.size === 0) this.byId.delete(id);
    if (this.byId.size === 0) this.#stopTimer();
  }

  /** A watch started: re-read every `pollIntervalMs` from now on, while any task is watched. */
  started(): void {
    if (this.#timer !== undefined || this.byId.size === 0) return;
    this.#timer = setInterval(() => void this.#reread(), Math.max(1, this.settings.pollIntervalMs));
    this.#timer.unref();
  }

  published(task: StoredTask): void {
    const set = this.byId.get(task.id);
    if (set === undefined) return;
    for (const w of [...set]) w.offer(task);
  }

  close(): void {
    this.#stopTimer();
    this.byId.clear();
  }

  #stopTimer(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** Read every watched task again (one read per task and owner), for the changes other replicas wrote. */
  async #reread(): Promise<void> {
    if (this.#reading) return;
    this.#reading = true;
    const { store, logger } = this.settings;
    try {
      const due: [string, string][] = [];
      const seen = new Set<string>();
      for (const [id, set] of this.byId) {
        for (const w of set) {
          const key = `${w.owner}\n${id}`;
          if (!w.started || seen.has(key)) continue;
          seen.add(key);
          due.push([w.owner, id]);
        }
      }
      for (const [owner, id] of due) {
        const t = await store.get(owner, id);
        if (t !== undefined) this.published(t);
        // Purged at its TTL: nothing more will change.
        else for (const w of [...(this.byId.get(id) ?? [])]) if (w.owner === owner) w.drop(id);
      }
    } catch (err) {
      log(logger, 'warn', 'dispatch: a watched task could not be read; retrying at the next interval', {
        error: errorMeta(err),
      });
    } finally {
      this.#reading = false;
    }
  }
}

/** One stream's watch over its task ids. */
class Watch implements TaskWatch {
  readonly acked: Promise<string[]>;
  started = false;
  #send: ((task: JsonObject) => void) | undefined;
  #stopped = false;
  readonly #seen = new Map<string, Seen>();

  constructor(
    readonly hub: Hub,
    readonly owner: string,
    ids: readonly string[],
  ) {
    // Watched from now on, before the lookup, so that a write during it is heard (only the owner's writes are).
    for (const id of ids) {
      this.#seen.set(id, { rev: -1, task: undefined, sent: undefined });
      hub.add(this, id);
    }
    this.acked = this.#lookup(ids);
  }

  async #lookup(ids: readonly string[]): Promise<string[]> {
    const store = this.hub.settings.store;
    const found = await Promise.all(ids.map((id) => store.get(this.owner, id)));
    const acked: string[] = [];
    ids.forEach((id, i) => {
      const t = found[i];
      if (t === undefined) return this.drop(id);
      acked.push(id);
      this.offer(t);
    });
    return acked;
  }

  start(send: (task: JsonObject) => void): void {
    if (this.#stopped || this.started) return;
    this.started = true;
    this.#send = send;
    for (const [id, seen] of [...this.#seen]) {
      const t = seen.task;
      seen.task = undefined;
      if (t !== undefined) this.#emit(id, seen, t);
    }
    this.hub.started();
  }

  offer(t: StoredTask): void {
    if (this.#stopped || t.owner !== this.owner) return;
    const seen = this.#seen.get(t.id);
    if (seen === undefined || t.rev <= seen.rev) return;
    seen.rev = t.rev;
    if (this.started) this.#emit(t.id, seen, t);
    else seen.task = t;
  }

  #emit(id: string, seen: Seen, t: StoredTask): void {
    const sig = signature(t);
    if (sig !== seen.sent) {
      seen.sent = sig;
      this.#send?.(detailedTask(t));
    }
    // An ended task changes no more.
    if (isTerminal(t.status)) this.drop(id);
  }

  drop(id: string): void {
    this.#seen.delete(id);
    this.hub.forget(this, id);
  }

  stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#send = undefined;
    for (const id of [...this.#seen.keys()]) this.drop(id);
  }
}
