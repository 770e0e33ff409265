/**
 * One task's work on the replica that created it: the work called in the background with a context of its own,
 * the lease renewed every third of `leaseMs` (one read and one compare-and-set write of the stored task), and at
 * each renewal, or at once when a `tasks/update` or `tasks/cancel` lands on this replica, a look at the stored
 * task: a requested cancel aborts the work's signal and ends the task `cancelled`; an answered input round calls
 * the work again with the answers.
 *
 * @see docs/middleware/dispatch.md
 */
import type { JsonObject } from '../../lib/jsonrpc.js';
import { type InputRequest, checkInputRequired, isInputRequiredResult } from '../../lib/mrtr.js';
import { missingCapabilities } from '../../lib/mrtr.js';
import {
  type StoredTask,
  type TaskEnding,
  type TaskError,
  askInput,
  finish,
  isTerminal,
  renewLease,
  takeResponses,
} from '../../lib/tasks.js';
import { isJsonObject } from '../../lib/json.js';
import { addCharge } from '../../core/charge.js';
import type { CallContext, InputRequiredRequest, TaskWork } from '../../core/contract.js';
import { errorMeta, log } from '../../core/log.js';
import type { TaskStore } from '../../core/task-store.js';
import type { TraceOutcome, WorkTrace } from '../../core/trace.js';
import type { TaskEnd, TaskTrack } from '../../core/types.js';
import { missingCapabilityError, toRpcError } from './rpc-errors.js';
import type { TaskSettings } from './tasks.js';

/** The error of a task whose result is over its owner's byte bound. */
export const TOO_LARGE_ERROR: Readonly<TaskError> = Object.freeze({
  code: -32603,
  message: 'The task result is too large to keep',
  data: Object.freeze({ reason: 'task_too_large' }),
});

/** The error of a task this replica stopped at its shutdown (`close()`). */
export const INTERRUPTED_ERROR: Readonly<TaskError> = Object.freeze({
  code: -32603,
  message: 'The task stopped: the server running it shut down',
  data: Object.freeze({ reason: 'task_interrupted' }),
});

const INTERNAL_ERROR: Readonly<TaskError> = Object.freeze({ code: -32603, message: 'Internal error' });

/** Writes a look tries before it leaves the rest to the next renewal (each conflict is one more read). */
const ATTEMPTS = 4;

/** A task seen from the request that made it, ended once. */
export class Track implements TaskTrack {
  ended: TaskEnd | undefined;
  #listeners: ((end: TaskEnd) => void)[] = [];
  readonly #settings: TaskSettings;

  constructor(
    readonly taskId: string,
    readonly tool: string | undefined,
    settings: TaskSettings,
  ) {
    this.#settings = settings;
  }

  onEnd(listener: (end: TaskEnd) => void): void {
    if (this.ended !== undefined) this.#tell(listener, this.ended);
    else this.#listeners.push(listener);
  }

  end(end: TaskEnd): void {
    if (this.ended !== undefined) return;
    this.ended = end;
    const listeners = this.#listeners;
    this.#listeners = [];
    for (const l of listeners) this.#tell(l, end);
  }

  #tell(listener: (end: TaskEnd) => void, end: TaskEnd): void {
    try {
      listener(end);
    } catch (err) {
      log(this.#settings.logger, 'error', 'dispatch: a task end listener failed', {
        taskId: this.taskId,
        error: errorMeta(err),
      });
    }
  }
}

/** How a stored terminal task ended, as audit and metrics record it. */
export function endOf(t: StoredTask, now: number): TaskEnd {
  const elapsedMs = Math.max(0, now - t.createdAt);
  if (t.status === 'completed')
    return { status: 'completed', outcome: t.result?.isError === true ? 'tool_error' : 'ok', elapsedMs };
  if (t.status === 'cancelled') return { status: 'cancelled', outcome: 'cancelled', elapsedMs };
  const reason = isJsonObject(t.error?.data) ? t.error.data.reason : undefined;
  const end: TaskEnd = {
    status: 'failed',
    outcome: reason === 'task_worker_lost' ? 'lost' : 'error',
    elapsedMs,
  };
  if (t.error !== undefined) end.code = t.error.code;
  return end;
}

/** What the run keeps of the request that created its task. */
export interface RunOrigin {
  /** The creating request's context: its identity, locals and request. */
  readonly ctx: CallContext;
  /** The round's answers and state the creating request carried (the work's first round sees them). */
  readonly inputResponses: CallContext['inputResponses'];
  readonly requestState: unknown;
  /** The work's span, when the creating request was traced: every round runs in it; it ends with the task. */
  readonly span?: WorkTrace | undefined;
}

/** The host of the runs: the settings, this replica's worker id, and the set of running works. */
export interface RunHost {
  readonly settings: TaskSettings;
  readonly worker: string;
  /** The run wrote `task` to the store (listen streams watching it hear of it). */
  written(task: StoredTask): void;
  /** The run ended here: forget it. */
  ended(run: TaskRun): void;
}

/** One task's work, running on this replica. */
export class TaskRun {
  readonly ac = new AbortController();
  readonly track: Track;
  /** The task as last read or written. */
  task: StoredTask;
  /** The status message the work's `progress()` reported, written with the next renewal. */
  statusMessage: string | undefined;
  #ending: TaskEnding | undefined;
  #asking: Record<string, InputRequest> | undefined;
  #waiting = false;
  #done = false;
  #queued = false;
  #queue: Promise<void> = Promise.resolve();
  readonly #timer: NodeJS.Timeout;
  readonly #host: RunHost;
  readonly #work: TaskWork;
  readonly #origin: RunOrigin;
  readonly #store: TaskStore;

  constructor(host: RunHost, task: StoredTask, work: TaskWork, origin: RunOrigin, track: Track) {
    this.#host = host;
    this.#store = host.settings.store;
    this.task = task;
    this.#work = work;
    this.#origin = origin;
    this.track = track;
    this.#timer = setInterval(() => this.kick(), Math.max(1, Math.floor(host.settings.leaseMs / 3)));
    this.#timer.unref();
  }

  get id(): string {
    return this.task.id;
  }

  get owner(): string {
    return this.task.owner;
  }

  /** Call the work for its first round. */
  start(): void {
    if (this.#done) return;
    this.#call(this.#origin.inputResponses, this.#origin.requestState);
  }

  /** Look at the stored task now (after the looks already queued). */
  kick(): void {
    if (this.#done || this.#queued) return;
    this.#queued = true;
    this.#queue = this.#queue
      .then(() => {
        this.#queued = false;
        return this.#look();
      })
      .catch((err: unknown) => {
        log(this.#host.settings.logger, 'error', 'dispatch: a task look failed', {
          taskId: this.id,
          error: errorMeta(err),
        });
      });
  }

  /** This replica shuts down: the work is aborted and the task ends `failed` (`task_interrupted`). */
  async interrupt(): Promise<void> {
    if (this.#done) return;
    this.ac.abort(new Error('The server is shutting down'));
    this.#ending = { status: 'failed', error: { ...INTERRUPTED_ERROR } };
    this.kick();
    await this.#queue;
    // The write failed (the store is unreachable): the task lapses for its readers; this replica is done.
    if (!this.#done)
      this.#stop(
        {
          status: 'failed',
          outcome: 'error',
          code: INTERRUPTED_ERROR.code,
          elapsedMs: Date.now() - this.task.createdAt,
        },
        INTERRUPTED_ERROR.message,
      );
  }

  /** Run one round of the work; its outcome is written by the next look, asked for at once. */
  #call(inputResponses: CallContext['inputResponses'], requestState: unknown): void {
    const ctx = new TaskContext(this, this.#origin, inputResponses, requestState);
    const span = this.#origin.span;
    new Promise<unknown>((resolve) =>
      resolve(span === undefined ? this.#work(ctx) : span.run(() => this.#work(ctx))),
    ).then(
      (value) => this.#settled(value),
      (err: unknown) => this.#threw(err),
    );
  }

  #settled(value: unknown): void {
    if (this.#done || this.ac.signal.aborted) return;
    if (isInputRequiredResult(value)) {
      const check = checkInputRequired(value, this.#origin.ctx.clientCapabilities);
      const reqs = value.inputRequests;
      if (!check.ok || reqs === undefined || Object.keys(reqs).length === 0) {
        const why = check.ok ? 'it has no inputRequests' : check.reason;
        return this.#threw(
          new Error(`tools/call: the task's work returned an unusable input-required result (${why})`),
        );
      }
      this.#asking = reqs;
    } else {
      let result: JsonObject;
      try {
        result = resultOf(value);
      } catch (err) {
        return this.#threw(err);
      }
      this.#ending = { status: 'completed', result };
    }
    this.kick();
  }

  #threw(err: unknown): void {
    if (this.#done || this.ac.signal.aborted) return;
    const e = toRpcError(err, 'modern');
    let error: TaskError;
    if (e.hidden !== undefined) {
      log(this.#host.settings.logger, 'error', 'dispatch: a task failed', {
        taskId: this.id,
        tool: this.task.tool,
        error: errorMeta(err),
      });
      error = { ...INTERNAL_ERROR };
    } else {
      error = { code: e.code, message: e.message };
      if (e.data !== undefined) error.data = e.data;
    }
    this.#ending = { status: 'failed', error };
    this.kick();
  }

  /** Read the stored task, then write what is due: the ending, the input round, the answers taken, the lease. */
  async #look(): Promise<void> {
    for (let attempt = 0; attempt < ATTEMPTS && !this.#done; attempt++) {
      let fresh: StoredTask | undefined;
      try {
        fresh = await this.#store.get(this.owner, this.id);
      } catch (err) {
        return this.#storeFailed(err);
      }
      const now = Date.now();
      if (fresh === undefined) return this.#stop(goneEnd(this.task, now));
      // Ended by another writer, which recorded the end (a reader that found the lease lapsed).
      if (isTerminal(fresh.status) || fresh.worker !== this.#host.worker)
        return this.#stop({ ...endOf(fresh, now), elsewhere: true }, fresh.error?.message);
      this.task = fresh;
      if (this.#ending === undefined && fresh.cancelRequested === true) {
        this.ac.abort(new Error('The task was cancelled'));
        this.#ending = { status: 'cancelled' };
      }
      const step = this.#step(fresh, now);
      if (step === undefined) return;
      let w;
      try {
        w = await this.#store.replace(step.task, this.#host.settings.bounds);
      } catch (err) {
        return this.#storeFailed(err);
      }
      if (w.ok) {
        this.task = step.task;
        this.#host.written(step.task);
        return step.then();
      }
      if (w.reason === 'gone') return this.#stop(goneEnd(this.task, now));
      if (w.reason === 'task_bytes' || w.reason === 'task_limit') {
        // Only a result or an input round grows a task: it fails, and that smaller write is tried next.
        this.#asking = undefined;
        this.#ending = { status: 'failed', error: { ...TOO_LARGE_ERROR } };
      }
    }
  }

  /** The write due on `t` and what follows it once written. */
  #step(t: StoredTask, now: number): { task: StoredTask; then: () => void } | undefined {
    const { worker, settings } = this.#host;
    const lease = (n: StoredTask | undefined): StoredTask | undefined => {
      const r = n && renewLease(n, worker, now + settings.leaseMs, now, this.statusMessage);
      return r && { ...r, rev: t.rev + 1 };
    };
    if (this.#ending !== undefined) {
      const task = finish(t, this.#ending, now);
      return task && { task, then: () => this.#stop(endOf(task, now), task.error?.message) };
    }
    if (this.#asking !== undefined) {
      const task = lease(askInput(t, this.#asking, now, this.statusMessage));
      return (
        task && {
          task,
          then: () => {
            this.#asking = undefined;
            this.#waiting = true;
          },
        }
      );
    }
    const taken = this.#waiting ? takeResponses(t, now) : undefined;
    if (taken !== undefined) {
      const task = lease(taken.task);
      return (
        task && {
          task,
          then: () => {
            this.#waiting = false;
            this.#call(Object.freeze(taken.responses), undefined);
          },
        }
      );
    }
    const message = this.statusMessage;
    const task = lease(t);
    return (
      task && {
        task,
        then: () => {
          if (this.statusMessage === message) this.statusMessage = undefined;
        },
      }
    );
  }

  #storeFailed(err: unknown): void {
    // Tried again at the next renewal; a store down for longer than the lease lets the task lapse.
    log(this.#host.settings.logger, 'warn', 'dispatch: the task store failed; retrying at the next renewal', {
      taskId: this.id,
      error: errorMeta(err),
    });
  }

  /** The task ended (`message`: its error's, as stored and answered by `tasks/get`). */
  #stop(end: TaskEnd, message?: string): void {
    if (this.#done) return;
    this.#done = true;
    clearInterval(this.#timer);
    if (!this.ac.signal.aborted) this.ac.abort(new Error('The task ended'));
    this.#host.ended(this);
    this.#origin.span?.end(spanOutcome(end, message));
    this.track.end(end);
  }
}

/**
 * How a task's end ends its work's span: a failure's code (-32603 when the task is gone with none), a tool
 * error, and the task's status and outcome as attributes; a cancelled task is not an error.
 */
export function spanOutcome(end: TaskEnd, message: string | undefined): TraceOutcome {
  const out: TraceOutcome = {
    attributes: { 'mcpware.task.status': end.status, 'mcpware.task.outcome': end.outcome },
  };
  if (end.status === 'failed') {
    out.code = end.code ?? INTERNAL_ERROR.code;
    out.message = message ?? INTERNAL_ERROR.message;
  } else if (end.outcome === 'tool_error') out.toolError = true;
  return out;
}

/** The end recorded when the stored task is gone (purged at its TTL) while its work still ran. */
function goneEnd(t: StoredTask, now: number): TaskEnd {
  return { status: 'failed', outcome: 'lost', elapsedMs: Math.max(0, now - t.createdAt) };
}

/** The work's value as the stored result: a JSON object (`undefined` is `{}`), without `resultType`. */
function resultOf(value: unknown): JsonObject {
  if (value === undefined) return {};
  if (!isJsonObject(value)) throw new Error("tools/call: the task's work returned a non-object result");
  const rt = value.resultType;
  if (rt !== undefined && rt !== 'complete')
    throw new Error(`tools/call: the task's work returned resultType ${JSON.stringify(rt)}`);
  const text = JSON.stringify(value);
  const copy = JSON.parse(text) as JsonObject;
  delete copy.resultType;
  return copy;
}

/**
 * The context a task's work is called with: the creating request's identity and locals, `taskId`, a signal
 * aborted by `tasks/cancel` (or the shutdown, or a lost lease), `inputRequired()` that asks through the task,
 * `progress()` that sets the task's status message, `charge()` on the creating request. No `log` (the request
 * that could carry it has been answered) and no `tasks`.
 */
class TaskContext implements CallContext {
  method = 'tools/call';
  id: CallContext['id'];
  era: CallContext['era'] = 'modern';
  version: string | undefined;
  principal: CallContext['principal'];
  meta: CallContext['meta'];
  clientCapabilities: JsonObject;
  locals: CallContext['locals'];
  req: CallContext['req'];
  logger: CallContext['logger'];
  taskId: string;
  inputResponses: CallContext['inputResponses'];
  requestState: unknown;
  log: CallContext['log'] = undefined;
  tasks: CallContext['tasks'] = undefined;
  otel: unknown;
  readonly #run: TaskRun;

  constructor(run: TaskRun, from: RunOrigin, inputResponses: CallContext['inputResponses'], state: unknown) {
    const origin = from.ctx;
    this.#run = run;
    this.id = origin.id;
    this.version = origin.version;
    this.principal = origin.principal;
    this.meta = origin.meta;
    this.clientCapabilities = origin.clientCapabilities;
    this.locals = origin.locals;
    this.req = origin.req;
    this.logger = origin.logger;
    this.taskId = run.id;
    this.inputResponses = inputResponses;
    this.requestState = state;
    // The work's own span; without one (the request was not traced, or not sampled) the request's context.
    this.otel = from.span?.context ?? origin.otel;
  }

  get signal(): AbortSignal {
    return this.#run.ac.signal;
  }

  get charge(): (ms: number) => void {
    const locals = this.locals;
    return (ms) => addCharge(locals, ms);
  }

  get progress(): NonNullable<CallContext['progress']> {
    const run = this.#run;
    return (_progress, _total, message) => {
      if (typeof message !== 'string' || run.ac.signal.aborted) return false;
      run.statusMessage = message;
      return true;
    };
  }

  get inputRequired(): NonNullable<CallContext['inputRequired']> {
    const caps = this.clientCapabilities;
    return (request: InputRequiredRequest) => {
      if (request === null || typeof request !== 'object' || !isJsonObject(request.inputRequests))
        throw new TypeError('inputRequired(): a task asks with { inputRequests }');
      const out = { resultType: 'input_required' as const, inputRequests: request.inputRequests };
      const check = checkInputRequired(out, caps);
      if (!check.ok) {
        if (check.reason === 'missing_capability') throw missingCapabilityError(check.requiredCapabilities);
        throw new TypeError(`inputRequired(): ${check.message}`);
      }
      return out;
    };
  }

  get requireClientCapabilities(): NonNullable<CallContext['requireClientCapabilities']> {
    const caps = this.clientCapabilities;
    return (required) => {
      if (!isJsonObject(required))
        throw new TypeError('requireClientCapabilities(): expected an object of capabilities');
      const missing = missingCapabilities(required, caps);
      if (missing) throw missingCapabilityError(missing);
    };
  }
}
