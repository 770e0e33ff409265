/**
 * The tasks of the `io.modelcontextprotocol/tasks` extension in `dispatch()`: the {@link TaskHost} a modern
 * `tools/call` handler gets as `ctx.tasks`, and the works running on this replica. `start()` stores the new task
 * durably (so that a `tasks/get` on any replica finds it) before it resolves with the `CreateTaskResult`; the work
 * then runs in the background (task-run.ts) and its outcome is written to the store, where `tasks/get` reads it
 * (task-methods.ts).
 *
 * @see docs/middleware/dispatch.md
 */
import { randomBytes } from 'node:crypto';
import { McpError, refusal } from '../../lib/errors.js';
import type { JsonObject } from '../../lib/jsonrpc.js';
import { principalKey } from '../../lib/principal.js';
import { TASKS_REQUIRED_CAPABILITIES, createTaskResult, declaresTasks, newTask } from '../../lib/tasks.js';
import type { CallContext, TaskHost, TaskWork } from '../../core/contract.js';
import type { TaskBounds, TaskStore } from '../../core/task-store.js';
import { traceOf } from '../../core/trace.js';
import type { Logger } from '../../core/types.js';
import { clip } from '../../lib/clip.js';
import { missingCapabilityError } from './rpc-errors.js';
import { type RunHost, TaskRun, Track } from './task-run.js';
import { type TaskNotifier, createTaskNotifier } from './task-notify.js';

/** The validated `tasks` option of one dispatcher. */
export interface TaskSettings {
  readonly store: TaskStore;
  readonly ttlMs: number;
  readonly pollIntervalMs: number;
  readonly leaseMs: number;
  readonly bounds: TaskBounds;
  /** The store was made by the dispatcher (no `store` given): `close()` closes it. */
  readonly ownStore: boolean;
  readonly logger: Logger;
}

/** The tasks of one dispatcher. */
export interface TaskRuntime {
  readonly settings: TaskSettings;
  /** This replica's worker id, stored on the tasks it runs. */
  readonly worker: string;
  /** The `ctx.tasks` of a modern `tools/call`. */
  host(ctx: CallContext): TaskHost;
  /** A `tasks/update` or `tasks/cancel` wrote the task: its work, when it runs here, looks at it now. */
  nudge(owner: string, id: string): void;
  /** The `notifications/tasks` of this replica's listen streams: every write of a task here is published to it. */
  readonly notifier: TaskNotifier;
  /** Works running on this replica. */
  readonly running: number;
  /** Stop every work running here (its task ends `failed`, `task_interrupted`) and close a store made here. */
  close(): Promise<void>;
}

/** A refusal as the McpError a handler path throws. */
export function refusalError(r: ReturnType<typeof refusal>): McpError {
  return new McpError(r.code, r.message, r.data, r.status);
}

/** The -32021 of a request that did not declare the extension. */
export function tasksNotDeclared(): McpError {
  return missingCapabilityError(TASKS_REQUIRED_CAPABILITIES as Record<string, JsonObject>);
}

/** The tasks of a dispatcher configured with `tasks`. */
export function createTaskRuntime(settings: TaskSettings): TaskRuntime {
  const worker = randomBytes(12).toString('base64url');
  const runs = new Map<string, TaskRun>();
  let closing = false;
  const notifier = createTaskNotifier(settings);
  const runHost: RunHost = {
    settings,
    worker,
    written: (task) => notifier.published(task),
    ended: (run) => {
      if (runs.get(run.id) === run) runs.delete(run.id);
    },
  };

  const start = async (ctx: CallContext, work: TaskWork, info: { tool: string }): Promise<JsonObject> => {
    if (!declaresTasks(ctx.clientCapabilities)) throw tasksNotDeclared();
    if (typeof work !== 'function') throw new TypeError('ctx.tasks.start(): work must be a function');
    const tool =
      info !== null && typeof info === 'object' && typeof info.tool === 'string' ? info.tool : undefined;
    if (ctx.locals.task !== undefined)
      throw new Error('ctx.tasks.start(): this request has made its task already');
    if (closing) throw refusalError(refusal('unavailable', { message: 'The server is shutting down' }));
    const now = Date.now();
    const trace = traceOf(ctx.locals);
    const traceparent = trace?.traceparent;
    const task = newTask({
      id: randomBytes(16).toString('base64url'),
      owner: principalKey(ctx.principal),
      ...(tool === undefined ? {} : { tool }),
      now,
      ttlMs: settings.ttlMs,
      pollIntervalMs: settings.pollIntervalMs,
      worker,
      leaseMs: settings.leaseMs,
      ...(traceparent === undefined ? {} : { trace: traceparent }),
    });
    const w = await settings.store.create(task, settings.bounds);
    if (!w.ok) {
      if (w.reason === 'task_limit' || w.reason === 'task_bytes') {
        const bytes = w.reason === 'task_bytes';
        throw refusalError(
          refusal('task_limit', {
            message: bytes
              ? 'Task limit reached: this caller’s live tasks hold too many bytes'
              : 'Task limit reached: this caller has too many live tasks',
            data: bytes
              ? { limit: 'task_bytes_per_principal', max: settings.bounds.maxBytes }
              : { limit: 'tasks_per_principal', max: settings.bounds.maxTasks },
          }),
        );
      }
      throw new Error(`ctx.tasks.start(): the task store answered ${w.reason} to a new task`);
    }
    const track = new Track(task.id, tool, settings);
    ctx.locals.task = track;
    // The work's span: a child of this request's, ended with the task (the request's ends with its answer).
    const span = trace?.work(tool === undefined ? 'tools/call' : `tools/call ${clip(tool, 128)}`, {
      'mcp.method.name': 'tools/call',
      'gen_ai.operation.name': 'execute_tool',
      ...(tool === undefined ? {} : { 'gen_ai.tool.name': clip(tool, 128) }),
    });
    const origin = { ctx, inputResponses: ctx.inputResponses, requestState: ctx.requestState, span };
    const begin = (): TaskRun => {
      const run = new TaskRun(runHost, task, work, origin, track);
      runs.set(task.id, run);
      // The work starts after this turn: the answer is on its way first.
      setImmediate(() => run.start());
      return run;
    };
    // Made in the work's span, so that its renewals and its first round run there too.
    if (span === undefined) begin();
    else span.run(begin);
    return createTaskResult(task);
  };

  return {
    settings,
    worker,
    notifier,
    host(ctx) {
      return {
        declared: declaresTasks(ctx.clientCapabilities),
        start: (work, info) => start(ctx, work, info),
      };
    },
    nudge(owner, id) {
      const run = runs.get(id);
      if (run !== undefined && run.owner === owner) run.kick();
    },
    get running() {
      return runs.size;
    },
    async close() {
      closing = true;
      await Promise.all([...runs.values()].map((r) => r.interrupt()));
      notifier.close();
      if (settings.ownStore) await settings.store.close?.();
    },
  };
}
