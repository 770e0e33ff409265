/**
 * `tasks/get`, `tasks/update` and `tasks/cancel` (modern requests, when `dispatch()` has `tasks`): each refuses a
 * request that did not declare the extension (-32021), reads `params.taskId`, and finds the task by the caller's
 * principal key and the id together, so that a task of another caller, an unknown one and an expired one get the
 * same -32602. Writes are compare-and-set on the task's revision, read again on a conflict.
 *
 * @see docs/middleware/dispatch.md
 */
import { refusal } from '../../lib/errors.js';
import type { JsonObject } from '../../lib/jsonrpc.js';
import { principalKey } from '../../lib/principal.js';
import {
  MAX_TASK_ID_LENGTH,
  type StoredTask,
  acceptResponses,
  declaresTasks,
  detailedTask,
  finish,
  isTerminal,
  lapse,
  readTaskParams,
  requestCancel,
} from '../../lib/tasks.js';
import type { CallContext, HandlerMethod } from '../../core/contract.js';
import { traceOf } from '../../core/trace.js';
import type { Bound } from './route-table.js';
import { type TaskRuntime, refusalError, tasksNotDeclared } from './tasks.js';
import { Track, endOf } from './task-run.js';

/** Compare-and-set attempts of one request before it answers -32603. */
const ATTEMPTS = 8;

/** The methods of the tasks namespace a dispatcher with tasks answers, by member. */
export interface TaskMethods {
  get(member: string): Bound | undefined;
}

interface Found {
  readonly owner: string;
  readonly task: StoredTask;
  readonly params: ReturnType<typeof readTaskParams> & { ok: true };
}

const unknownTask = () => refusalError(refusal('unknown_task'));

/** The three methods over one dispatcher's tasks. */
export function createTaskMethods(rt: TaskRuntime): TaskMethods {
  const { store, bounds } = rt.settings;

  const find = async (method: string, params: JsonObject, ctx: CallContext): Promise<Found> => {
    if (!declaresTasks(ctx.clientCapabilities)) throw tasksNotDeclared();
    const p = readTaskParams(method, params);
    if (!p.ok) throw refusalError(refusal('invalid_params', { message: p.message }));
    if (p.taskId.length > MAX_TASK_ID_LENGTH) throw unknownTask();
    const owner = principalKey(ctx.principal);
    const task = await store.get(owner, p.taskId);
    if (task === undefined) throw unknownTask();
    // The task's creating request, on whichever replica it ran: the store carries its span context.
    if (task.trace !== undefined) traceOf(ctx.locals)?.link(task.trace, { 'mcpware.link': 'task' });
    return { owner, task, params: p };
  };

  /**
   * Write `change(task)` over the stored task, reading it again after a conflict. Resolves with the task as
   * stored (the written one, or the read one when `change` has nothing to write).
   */
  const write = async (
    owner: string,
    first: StoredTask,
    change: (t: StoredTask, now: number) => StoredTask | undefined,
  ): Promise<{ task: StoredTask; wrote: boolean }> => {
    let t = first;
    for (let i = 0; i < ATTEMPTS; i++) {
      const next = change(t, Date.now());
      if (next === undefined) return { task: t, wrote: false };
      const w = await store.replace(next, bounds);
      if (w.ok) {
        rt.notifier.published(next);
        return { task: next, wrote: true };
      }
      if (w.reason === 'gone') throw unknownTask();
      if (w.reason !== 'conflict')
        throw refusalError(
          refusal('task_limit', {
            message: 'Task limit reached: this caller’s live tasks hold too many bytes',
            data: { limit: 'task_bytes_per_principal', max: bounds.maxBytes },
          }),
        );
      const again = await store.get(owner, t.id);
      if (again === undefined) throw unknownTask();
      t = again;
    }
    throw new Error(`dispatch: task ${t.id} kept changing; ${ATTEMPTS} writes conflicted`);
  };

  /**
   * This request ended the task itself (its worker is gone): the request carries the ended task, so that audit
   * and metrics record the end here, once.
   */
  const ended = (ctx: CallContext, t: StoredTask, owner: string): void => {
    const track = new Track(t.id, t.tool, rt.settings);
    track.end(endOf(t, Date.now()));
    ctx.locals.task = track;
    rt.nudge(owner, t.id);
  };

  const get: HandlerMethod = async (params, ctx) => {
    const { owner, task } = await find('tasks/get', params, ctx);
    // A task whose worker stopped renewing its lease is failed by whoever reads it.
    const out = await write(owner, task, lapse);
    if (out.wrote) ended(ctx, out.task, owner);
    return detailedTask(out.task);
  };

  const update: HandlerMethod = async (params, ctx) => {
    const { owner, task, params: p } = await find('tasks/update', params, ctx);
    const given = p.inputResponses ?? {};
    const out = await write(owner, task, (t, now) => acceptResponses(t, given, now).task);
    if (out.wrote) rt.nudge(owner, task.id);
    return {};
  };

  const cancel: HandlerMethod = async (params, ctx) => {
    const { owner, task } = await find('tasks/cancel', params, ctx);
    // With no worker left to honour it (its lease lapsed), the cancel ends the task itself.
    const out = await write(owner, task, (t, now) =>
      !isTerminal(t.status) && now > t.leaseUntil
        ? finish(t, { status: 'cancelled' }, now)
        : requestCancel(t, now),
    );
    if (out.wrote && isTerminal(out.task.status)) ended(ctx, out.task, owner);
    else if (out.wrote) rt.nudge(owner, task.id);
    return {};
  };

  const table = new Map<string, HandlerMethod>([
    ['get', get],
    ['update', update],
    ['cancel', cancel],
  ]);
  return {
    get(member) {
      const fn = table.get(member);
      return fn && { fn, self: undefined };
    },
  };
}
