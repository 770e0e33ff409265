/**
 * Tasks (the `io.modelcontextprotocol/tasks` extension of MCP 2026-07-28): the stored form of a task, the state
 * machine that moves it (`working` → `input_required` → `working` → `completed` | `failed` | `cancelled`), and the
 * wire shapes (`CreateTaskResult`, the `DetailedTask` of `tasks/get` and `notifications/tasks`).
 *
 * A stored task belongs to its owner (the creator's `principalKey`), compared exactly; input requests carry wire
 * keys `<round>:<key>` so that a key names one request over the task's life, however the handler names its keys.
 *
 * Pure: no I/O, no clock (`now` is passed in), no randomness.
 */
import type { JsonObject } from './jsonrpc.js';
import type { InputRequest } from './mrtr.js';
import { isJsonObject } from './json.js';

/** The extension's identifier, as capabilities and `-32021` name it. */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** `data.requiredCapabilities` of the -32021 a task-only tool or a `tasks/*` method answers without the extension. */
export const TASKS_REQUIRED_CAPABILITIES: Readonly<Record<string, JsonObject>> = Object.freeze({
  extensions: Object.freeze({ [TASKS_EXTENSION]: Object.freeze({}) }) as JsonObject,
});

export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

/** Whether a tool may run as a task: never, when the client allows it, or only as one. */
export type TaskSupport = 'forbidden' | 'optional' | 'required';

/** The longest task id accepted in `params.taskId` (longer ones are unknown without a lookup). */
export const MAX_TASK_ID_LENGTH = 128;

/** A JSON-RPC error as a failed task carries it. */
export interface TaskError {
  code: number;
  message: string;
  data?: unknown;
}

/** A task as a store keeps it. Times are epoch milliseconds. */
export interface StoredTask {
  /** The task id (unguessable; minted by the dispatcher). */
  id: string;
  /** The creator's `principalKey()`: only requests of this exact key see the task. */
  owner: string;
  /** The tool the task runs, for audit and metrics. */
  tool?: string;
  status: TaskStatus;
  statusMessage?: string;
  createdAt: number;
  updatedAt: number;
  /** Time to live from creation; the store purges the task at `createdAt + ttlMs`. */
  ttlMs: number;
  pollIntervalMs: number;
  /** The replica running the work, and until when its lease holds (renewed while it runs). */
  worker: string;
  leaseUntil: number;
  /** Incremented by every write: a store replaces a task only over the revision it was read at. */
  rev: number;
  /** Input rounds asked so far (the prefix of the next round's wire keys). */
  round: number;
  /** Outstanding input requests, by wire key (status `input_required`). */
  inputRequests?: Record<string, InputRequest>;
  /** Responses accepted by `tasks/update` that the work has not taken yet, by wire key. */
  responses?: Record<string, JsonObject>;
  /** A `tasks/cancel` arrived; the work stops at its next look. */
  cancelRequested?: boolean;
  /** The tool's result (status `completed`). */
  result?: JsonObject;
  /** The JSON-RPC error (status `failed`). */
  error?: TaskError;
  /**
   * The creating request's span context as a canonical W3C traceparent (when it was traced): the spans of
   * `tasks/get`, `tasks/update` and `tasks/cancel` link to it, on any replica.
   */
  trace?: string;
}

/** What a new task is made of. */
export interface NewTask {
  id: string;
  owner: string;
  tool?: string;
  now: number;
  ttlMs: number;
  pollIntervalMs: number;
  worker: string;
  leaseMs: number;
  /** The creating request's span context (a W3C traceparent). */
  trace?: string;
}

/** A new `working` task. */
export function newTask(t: NewTask): StoredTask {
  const task: StoredTask = {
    id: t.id,
    owner: t.owner,
    status: 'working',
    createdAt: t.now,
    updatedAt: t.now,
    ttlMs: t.ttlMs,
    pollIntervalMs: t.pollIntervalMs,
    worker: t.worker,
    leaseUntil: t.now + t.leaseMs,
    rev: 0,
    round: 0,
  };
  if (t.tool !== undefined) task.tool = t.tool;
  if (t.trace !== undefined) task.trace = t.trace;
  return task;
}

export function isTerminal(status: TaskStatus): boolean {
  return status === 'completed' || status === 'failed' || status === 'cancelled';
}

/** When the store may purge the task. */
export function expiresAt(t: StoredTask): number {
  return t.createdAt + t.ttlMs;
}

/** Whether the request's client capabilities declare the extension (`extensions["io.modelcontextprotocol/tasks"]`). */
export function declaresTasks(clientCapabilities: JsonObject | undefined): boolean {
  const ext = clientCapabilities?.extensions;
  return isJsonObject(ext) && Object.hasOwn(ext, TASKS_EXTENSION) && isJsonObject(ext[TASKS_EXTENSION]);
}

// ---------------------------------------------------------------------------------------------------------------
// Wire shapes

/** The `Task` fields every shape carries. */
function taskFields(t: StoredTask): JsonObject {
  const out: JsonObject = { taskId: t.id, status: t.status };
  if (t.statusMessage !== undefined) out.statusMessage = t.statusMessage;
  out.createdAt = new Date(t.createdAt).toISOString();
  out.lastUpdatedAt = new Date(t.updatedAt).toISOString();
  out.ttlMs = t.ttlMs;
  out.pollIntervalMs = t.pollIntervalMs;
  return out;
}

/** The `CreateTaskResult` of the `tools/call` that made the task (flat: `resultType: "task"` and the Task). */
export function createTaskResult(t: StoredTask): JsonObject {
  return { resultType: 'task', ...taskFields(t) };
}

/**
 * The `DetailedTask` of `tasks/get` and `notifications/tasks`: the Task, with the outstanding `inputRequests`
 * (input_required), the `result` (completed) or the `error` (failed).
 */
export function detailedTask(t: StoredTask): JsonObject {
  const out = taskFields(t);
  if (t.status === 'input_required') out.inputRequests = { ...(t.inputRequests ?? {}) } as JsonObject;
  else if (t.status === 'completed' && t.result !== undefined) out.result = t.result;
  else if (t.status === 'failed' && t.error !== undefined) out.error = t.error as unknown as JsonObject;
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Params of tasks/get, tasks/update, tasks/cancel

export type TaskParams =
  | { ok: true; taskId: string; inputResponses?: Record<string, JsonObject> }
  | { ok: false; reason: 'invalid_task_params'; message: string };

/**
 * Read the params of `tasks/get`, `tasks/cancel` (`taskId`) or `tasks/update` (`taskId`, `inputResponses`). A
 * `taskId` that is not a non-empty string is invalid params; one longer than {@link MAX_TASK_ID_LENGTH} is read
 * (and is unknown). `inputResponses` entries that are not objects are dropped.
 */
export function readTaskParams(method: string, params: JsonObject | undefined): TaskParams {
  const taskId = params?.taskId;
  if (typeof taskId !== 'string' || taskId.length === 0)
    return {
      ok: false,
      reason: 'invalid_task_params',
      message: `${method}: "taskId" must be a non-empty string`,
    };
  if (method !== 'tasks/update') return { ok: true, taskId };
  const given = params?.inputResponses;
  if (!isJsonObject(given))
    return {
      ok: false,
      reason: 'invalid_task_params',
      message: 'tasks/update: "inputResponses" must be an object',
    };
  const inputResponses = Object.create(null) as Record<string, JsonObject>;
  for (const k of Object.keys(given)) {
    const v = given[k];
    if (isJsonObject(v)) inputResponses[k] = v;
  }
  return { ok: true, taskId, inputResponses };
}

// ---------------------------------------------------------------------------------------------------------------
// Transitions: each returns the next task (rev + 1, updatedAt = now), or undefined when it does not apply.

function next(t: StoredTask, now: number, patch: Partial<StoredTask>): StoredTask {
  return { ...t, ...patch, rev: t.rev + 1, updatedAt: Math.max(now, t.updatedAt) };
}

/** The wire key of a handler's input request key in a round. */
export function wireKey(round: number, key: string): string {
  return `${round}:${key}`;
}

/** The handler's key of a wire key of `round`, or undefined when the wire key belongs to another round. */
export function handlerKey(round: number, wire: string): string | undefined {
  const prefix = `${round}:`;
  return wire.startsWith(prefix) ? wire.slice(prefix.length) : undefined;
}

/** The work asks for input: a new round whose requests are outstanding under fresh wire keys. */
export function askInput(
  t: StoredTask,
  requests: Readonly<Record<string, InputRequest>>,
  now: number,
  statusMessage?: string,
): StoredTask | undefined {
  if (isTerminal(t.status)) return undefined;
  const round = t.round + 1;
  const inputRequests: Record<string, InputRequest> = {};
  for (const k of Object.keys(requests)) inputRequests[wireKey(round, k)] = requests[k]!;
  const patch: Partial<StoredTask> = { status: 'input_required', round, inputRequests, responses: {} };
  const out = next(t, now, patch);
  if (statusMessage === undefined) delete out.statusMessage;
  else out.statusMessage = statusMessage;
  return out;
}

/**
 * `tasks/update`: accept the responses to outstanding keys (others are ignored: unknown, answered or of an
 * earlier round). When none is left outstanding the task is `working` again. `accepted` counts what was taken;
 * with none, `task` is undefined (nothing to write).
 */
export function acceptResponses(
  t: StoredTask,
  given: Readonly<Record<string, JsonObject>>,
  now: number,
): { task: StoredTask | undefined; accepted: number } {
  if (t.status !== 'input_required' || t.inputRequests === undefined) return { task: undefined, accepted: 0 };
  const outstanding: Record<string, InputRequest> = { ...t.inputRequests };
  const responses: Record<string, JsonObject> = { ...(t.responses ?? {}) };
  let accepted = 0;
  for (const k of Object.keys(given)) {
    if (!Object.hasOwn(outstanding, k)) continue;
    responses[k] = given[k]!;
    delete outstanding[k];
    accepted++;
  }
  if (accepted === 0) return { task: undefined, accepted };
  const done = Object.keys(outstanding).length === 0;
  const patch: Partial<StoredTask> = done
    ? { status: 'working', inputRequests: undefined, responses }
    : { inputRequests: outstanding, responses };
  const task = next(t, now, patch);
  if (done) delete task.inputRequests;
  return { task, accepted };
}

/**
 * The work takes the round's responses once every request of the round is answered (the task is `working`
 * again): the responses by the handler's keys, and the task without them.
 */
export function takeResponses(
  t: StoredTask,
  now: number,
): { task: StoredTask; responses: Record<string, JsonObject> } | undefined {
  if (t.status !== 'working' || t.responses === undefined) return undefined;
  const responses = Object.create(null) as Record<string, JsonObject>;
  for (const wire of Object.keys(t.responses)) {
    const k = handlerKey(t.round, wire);
    if (k !== undefined) responses[k] = t.responses[wire]!;
  }
  const task = next(t, now, {});
  delete task.responses;
  return { task, responses };
}

/** `tasks/cancel`: a task not yet ended is asked to stop (idempotent; an ended task is left as it is). */
export function requestCancel(t: StoredTask, now: number): StoredTask | undefined {
  if (isTerminal(t.status) || t.cancelRequested === true) return undefined;
  return next(t, now, { cancelRequested: true });
}

/** How the work ended. */
export type TaskEnding =
  | { status: 'completed'; result: JsonObject }
  | { status: 'failed'; error: TaskError; statusMessage?: string }
  | { status: 'cancelled'; statusMessage?: string };

/** The work ended: the task takes its terminal status (only from a status not yet terminal). */
export function finish(t: StoredTask, ending: TaskEnding, now: number): StoredTask | undefined {
  if (isTerminal(t.status)) return undefined;
  const out = next(t, now, { status: ending.status });
  delete out.inputRequests;
  delete out.responses;
  delete out.statusMessage;
  if (ending.status === 'completed') out.result = ending.result;
  else if (ending.status === 'failed') {
    out.error = ending.error;
    out.statusMessage = ending.statusMessage ?? ending.error.message;
  } else if (ending.statusMessage !== undefined) out.statusMessage = ending.statusMessage;
  return out;
}

/** The worker renews its lease (and may set the status message its work reported). */
export function renewLease(
  t: StoredTask,
  worker: string,
  leaseUntil: number,
  now: number,
  statusMessage?: string,
): StoredTask | undefined {
  if (isTerminal(t.status) || t.worker !== worker) return undefined;
  const out = next(t, now, { leaseUntil });
  if (statusMessage !== undefined && t.status === 'working') out.statusMessage = statusMessage;
  return out;
}

/** The error of a task whose worker stopped renewing its lease. */
export const WORKER_LOST_ERROR: Readonly<TaskError> = Object.freeze({
  code: -32603,
  message: 'The task stopped: the server running it went away',
  data: Object.freeze({ reason: 'task_worker_lost' }),
});

/** A task not ended whose lease has lapsed is `failed` with {@link WORKER_LOST_ERROR}; else undefined. */
export function lapse(t: StoredTask, now: number): StoredTask | undefined {
  if (isTerminal(t.status) || now <= t.leaseUntil) return undefined;
  return finish(t, { status: 'failed', error: { ...WORKER_LOST_ERROR } }, now);
}
