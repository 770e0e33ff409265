/**
 * The limiter's gate, mounted after authentication and before the body is read: it refuses a POST of a caller
 * known to be refused until its minute or budget window ends (a caller refused for its budget still reaches its
 * tasks), and it makes a refusal written for a POST before the limiter admits it count as one request of the
 * caller's minute.
 * @see docs/middleware/limits.md#the-gate
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { refusal } from '../../lib/errors.js';
import {
  LIMIT_MESSAGES,
  type LimitReason,
  type LimitRefusalData,
  StandingRefusals,
  refusesUntilWindowEnds,
  retryAfterSeconds,
} from '../../lib/limits.js';
import { principalKey } from '../../lib/principal.js';
import { type Awaitable, isThenable } from '../../core/maybe-promise.js';
import { type EarlyRefusalLocals, ON_EARLY_REFUSAL, localsOf, sendRefusal } from '../../core/respond.js';
import { traceOf } from '../../core/trace.js';
import type { Limiter, Verdict } from './limiter.js';
import type { LimitsConfig } from './options.js';

/** The most callers the gate remembers as refused until their window ends (the oldest is forgotten first). */
export const MAX_STANDING_REFUSALS = 10_000;

/**
 * A task's own requests: each reads or writes the stored task and answers at once. They take no concurrency
 * slot (a caller's running tasks, each holding its creating call's slot, must not lock it out of polling,
 * answering and cancelling them) and are not refused for the budget (a caller whose budget its tasks spent must
 * still reach them). They count against the minute like any request.
 */
export const TASK_METHODS: ReadonlySet<string> = new Set(['tasks/get', 'tasks/update', 'tasks/cancel']);

/** The trace event of a refusal, with the limit and the `Retry-After` seconds. */
export const REFUSED_EVENT = 'mcpware.limits.refused';

/** The gate's 429: sent without reading the body, so without an id. */
function sendStanding(req: IncomingMessage, res: ServerResponse, reason: LimitReason, waitMs: number) {
  const secs = retryAfterSeconds(waitMs);
  traceOf(req.locals)?.event(REFUSED_EVENT, { limit: reason, retry_after_s: secs });
  const data: LimitRefusalData = { limit: reason, retryAfterSeconds: secs };
  sendRefusal(req, res, refusal('rate_limited', { message: LIMIT_MESSAGES[reason], data }), 'limits', {
    id: undefined,
    headers: { 'Retry-After': String(secs) },
    detail: reason,
  });
}

/** The POST's `Mcp-Method` header names a task's own request (the tasks methods are modern-only). */
const namesTaskMethod = (req: IncomingMessage): boolean => {
  const m = req.headers['mcp-method'];
  return typeof m === 'string' && TASK_METHODS.has(m);
};

/** A count per key; a key is deleted when its count returns to 0, so the map holds only keys with a count. */
class KeyCounts {
  private readonly counts = new Map<string, number>();

  up(key: string): void {
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }

  down(key: string): void {
    const n = this.counts.get(key) ?? 0;
    if (n > 1) this.counts.set(key, n - 1);
    else this.counts.delete(key);
  }

  has(key: string): boolean {
    return this.counts.has(key);
  }
}

/**
 * What the gate knows, kept only once it runs ({@link on}): the keys refused until their window ends (told by
 * {@link learn}: a refusal for the minute or the budget, or an admission that took the minute's last request),
 * and each key's admitted requests in flight ({@link track}), whose POSTs go through. With a minute to count, a
 * POST the gate lets through carries {@link countEarly} on its locals until the limiter sees it
 * ({@link reached}): a refusal written before then (a malformed body, a batch, a body too large, …) counts as
 * one request of the key's minute, so that such bodies alone run into the minute and then into the gate.
 */
export class Gate {
  /** The gate has run: the limiter tells it what it learns. */
  on = false;
  private readonly standing = new StandingRefusals(MAX_STANDING_REFUSALS);
  private readonly active = new KeyCounts();
  /**
   * POSTs let through although their caller is refused for its budget, because their `Mcp-Method` header names a
   * task method: each counts in the minute whatever is refused, budget included (see {@link refused}).
   */
  private readonly taskPasses = new WeakSet<IncomingMessage>();
  private readonly countsEarly: boolean;
  private readonly hooks: LimitsConfig['hooks'];

  constructor(
    config: LimitsConfig,
    private readonly limiter: Limiter,
  ) {
    this.countsEarly = config.perUserRpm > 0;
    this.hooks = config.hooks;
  }

  /** What a verdict for `key` tells the gate: a refusal until its window ends, or the minute's last request. */
  learn(key: string, verdict: Verdict): void {
    if (!verdict.ok) this.remember(key, verdict.reason, verdict.waitMs);
    else if (verdict.lastRequestMs !== undefined) this.remember(key, 'rpm', verdict.lastRequestMs);
  }

  /** An admitted request of `key` is in flight (true) or over (false). */
  track(key: string, inFlight: boolean): void {
    if (inFlight) this.active.up(key);
    else this.active.down(key);
  }

  /** The limiter sees the request: a refusal written from now on is its own, not one to count. */
  reached(req: IncomingMessage): void {
    const locals = req.locals as EarlyRefusalLocals | undefined;
    if (locals?.[ON_EARLY_REFUSAL] !== undefined) locals[ON_EARLY_REFUSAL] = undefined;
  }

  /**
   * The middleware: refuse a POST of a key refused until its window ends, unless it has a request in flight. A
   * key refused for its budget has its POSTs that name a task method in `Mcp-Method` let through: the limiter
   * then admits them by the method of their body (a header that does not match the body is refused by
   * checkHeaders() before any handler), and each counts in the minute, even when refused for the budget.
   */
  readonly middleware = (req: IncomingMessage, res: ServerResponse, next: () => void): void => {
    this.on = true;
    if (req.method !== 'POST') return next();
    if (this.standing.size > 0) {
      const key = principalKey(req.locals?.principal);
      const now = performance.now();
      const r = this.standing.get(key, now);
      if (r !== undefined && !this.active.has(key)) {
        if (r.reason !== 'cost_budget' || !namesTaskMethod(req)) {
          this.hooks.onDenied(r.reason);
          return sendStanding(req, res, r.reason, r.until - now);
        }
        this.taskPasses.add(req);
      }
    }
    if (this.countsEarly) (localsOf(req) as EarlyRefusalLocals)[ON_EARLY_REFUSAL] = this.countEarly;
    next();
  };

  /**
   * The limiter refused a POST for `reason`. One the gate let through for its task header and that the limiter
   * refused for the budget (its body is no task request) counts as one request of the minute, so that a caller
   * refused for its budget has no more bodies read than its minute allows, whatever header it sends.
   */
  refused(req: IncomingMessage, reason: LimitReason): void {
    if (reason === 'cost_budget' && this.countsEarly && this.taskPasses.has(req)) this.countEarly(req);
  }

  /**
   * A refusal written for a POST the gate let through, before its admission: one request of the key's minute,
   * taken as an admission without slots (it holds nothing, so there is nothing to give back), and without the
   * budget for a POST let through for its task header. The refusal is already written; a store that cannot
   * answer only loses the count (the limiter reports the failure).
   */
  private readonly countEarly = (req: IncomingMessage): void => {
    const key = principalKey(req.locals?.principal);
    let verdict: Awaitable<Verdict>;
    try {
      verdict = this.limiter.admit(key, false, !this.taskPasses.has(req), traceOf(req.locals));
    } catch {
      return;
    }
    if (!isThenable(verdict)) this.learn(key, verdict);
    else verdict.then((v) => this.learn(key, v)).catch(() => {});
  };

  private remember(key: string, reason: LimitReason, waitMs: number): void {
    if (!this.on || !(waitMs > 0) || !refusesUntilWindowEnds(reason)) return;
    const now = performance.now();
    this.standing.set(key, reason, now + waitMs, now);
  }
}
