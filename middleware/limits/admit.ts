/**
 * Admission: the four checks of a request (a POST, a session's GET stream or its DELETE), asked of the limiter
 * in one operation that the memory store answers synchronously and the Redis store in one script call; the
 * refusals; what happens when an admitted request's response closes; and what the gate (gate.ts), which refuses
 * a caller known to be over its minute or budget before its body is read, learns from them.
 * @see docs/middleware/limits.md
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type Refusal, refusal } from '../../lib/errors.js';
import {
  type InflightScope,
  LIMIT_MESSAGES,
  type LimitReason,
  type LimitRefusalData,
  retryAfterSeconds,
  workMs,
} from '../../lib/limits.js';
import { isThenable } from '../../core/maybe-promise.js';
import { parseRequest } from '../../core/parse-step.js';
import { principalKey } from '../../lib/principal.js';
import type { McpRequest } from '../../lib/request.js';
import { localsOf, sendInternalError, sendRefusal } from '../../core/respond.js';
import { type RequestTrace, traceOf } from '../../core/trace.js';
import { Gate, REFUSED_EVENT, TASK_METHODS } from './gate.js';
import { type Limiter, StoreUnavailableError, type Ticket, type Verdict } from './limiter.js';
import type { LimitsConfig } from './options.js';
import { releaseBeforeAnswer } from './store.js';

const NAME = 'limits';

/** At most this much of a refused body is read to echo its id; longer bodies are answered without one. */
const ID_PEEK_BYTES = 64 * 1024;
/** How long a refusal waits for the body to find the id before it is sent without one. */
const ID_PEEK_MS = 1000;

/** One request on its way through the checks. */
interface Attempt {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  /** The bucket of the request's principal: its source and id ({@link principalKey}), or `anonymous`. */
  readonly key: string;
  /** A subscriptions/listen stream or a GET stream: it takes no concurrency slot. */
  readonly longLived: boolean;
  /** Counted among the key's requests in flight, for the gate. */
  tracked: boolean;
  /** The admission's ticket until it is given back, so that it is released once. */
  ticket: Ticket | undefined;
  /** The response closed (finished, or the client went away). */
  closed: boolean;
  /** When the request was admitted (`performance.now()`); -1 until then. */
  admittedAt: number;
  /** The response closed while its task ran: the release waits for the task's end. */
  waiting: boolean;
  /** The request's trace, when otel() runs in front: the store calls and the refusal are added to it. */
  readonly trace: RequestTrace | undefined;
}

export interface Admission {
  /**
   * Admit `req` (a POST, GET or DELETE) and call `next`, or refuse it; never throws. A parsed JSON-RPC response or
   * notification is no request: it goes on at once, and takes nothing.
   */
  admit(req: IncomingMessage, res: ServerResponse, next: () => void): void;
  /**
   * Refuse a POST of a caller refused until its window ends, before its body is read; else call `next`. A caller
   * with a request in flight here goes on: its answers to input requests and its cancellations must get through.
   */
  gate(req: IncomingMessage, res: ServerResponse, next: () => void): void;
  /** Requests of this process holding a slot, per scope. */
  readonly inflight: Readonly<Record<InflightScope, number>>;
}

/**
 * A subscriptions/listen stream lives as long as the client wants; holding concurrency slots for it would let a
 * few subscriptions lock their owner out. It still counts against rpm; the dispatcher caps open streams itself.
 * Seen only when the request was parsed before this middleware (the recommended order). A GET (a 2025-11-25
 * session's server stream, served by `sdk()` and `proxy()`) is one too, whatever was parsed.
 */
const isLongLived = (req: IncomingMessage, mcp: McpRequest | undefined): boolean =>
  req.method === 'GET' || mcp?.method === 'subscriptions/listen';

/**
 * A task's own request (see {@link TASK_METHODS}): no slot, no budget, one request of the minute. Known by the
 * parsed body only: a limiter mounted before parse() checks such a request as any other.
 */
const isTaskRequest = (mcp: McpRequest | undefined): boolean =>
  typeof mcp?.method === 'string' && TASK_METHODS.has(mcp.method);

/** A request before its checks. */
const newAttempt = (req: IncomingMessage, res: ServerResponse, mcp: McpRequest | undefined): Attempt => ({
  req,
  res,
  key: principalKey(req.locals?.principal),
  longLived: isLongLived(req, mcp),
  tracked: false,
  ticket: undefined,
  closed: false,
  admittedAt: -1,
  waiting: false,
  trace: traceOf(req.locals),
});

/** The id of the request, read from at most 64 KiB of body and within a second; undefined when not readable. */
async function peekId(req: IncomingMessage): Promise<unknown> {
  const known = req.locals?.mcp;
  if (known) return known.id;
  // A GET or DELETE carries no message, so no id.
  if (req.method !== 'POST') return undefined;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(resolve, ID_PEEK_MS, undefined);
  });
  try {
    const p = await Promise.race([parseRequest(req, { limit: ID_PEEK_BYTES, maxDepth: 64 }), late]);
    if (!p) return undefined;
    return 'kind' in p ? p.id : (p as Refusal & { id?: unknown }).id;
  } catch {
    return undefined;
  } finally {
    clearTimeout(timer);
  }
}

/** 429 for `reason`, with `Retry-After` and the request's id when it can be read. */
async function sendLimited(req: IncomingMessage, res: ServerResponse, reason: LimitReason, waitMs: number) {
  const secs = retryAfterSeconds(waitMs);
  traceOf(req.locals)?.event(REFUSED_EVENT, { limit: reason, retry_after_s: secs });
  const data: LimitRefusalData = { limit: reason, retryAfterSeconds: secs };
  const id = await peekId(req);
  sendRefusal(req, res, refusal('rate_limited', { message: LIMIT_MESSAGES[reason], data }), NAME, {
    id,
    headers: { 'Retry-After': String(secs) },
    detail: reason,
  });
}

/** 503: the store cannot answer and the policy is fail-closed. */
async function sendUnavailable(req: IncomingMessage, res: ServerResponse) {
  const id = await peekId(req);
  const r = refusal('unavailable', {
    message: 'Rate limiting is unavailable; retry shortly',
    data: { retryAfterSeconds: 1 },
  });
  sendRefusal(req, res, r, NAME, { id, headers: { 'Retry-After': '1' }, detail: 'store_unavailable' });
}

/**
 * The admission of one middleware. The limiter runs the checks in order and stops at the first refusal, so that
 * a refusal by an earlier one takes nothing from a later one. An admitted request gives its slots back when its
 * response closes, and its work is added to the budget then, in the same call; a client gone before the verdict
 * gives them back at once.
 *
 * Once the gate has run, it learns each verdict (a refusal that lasts until its window ends, an admission that
 * took the key's last request of the minute) and each key's admitted requests in flight (see {@link Gate}), so
 * that it refuses the key's next POSTs without a store call and lets through those of a key with a request
 * under way. Without the gate, neither is kept.
 */
export function createAdmission(config: LimitsConfig, limiter: Limiter): Admission {
  const { hooks, logger } = config;
  const inflight: Record<InflightScope, number> = { user: 0, global: 0 };
  const gate = new Gate(config, limiter);

  const count = (held: Ticket['held'], delta: number): void => {
    if (held.user) hooks.onInflight('user', (inflight.user += delta));
    if (held.global) hooks.onInflight('global', (inflight.global += delta));
  };

  /** Give the ticket back, with `chargeMs` of work; a promise when the answer must wait for the release. */
  const releaseAll = (a: Attempt, chargeMs: number): Promise<void> | void => {
    const t = a.ticket;
    a.ticket = undefined;
    if (!t) return;
    count(t.held, -1);
    if (t.held.user || t.held.global || chargeMs > 0) return limiter.release(t, chargeMs, a.trace);
  };

  const decide = (a: Attempt, verdict: Verdict, next: () => void): void => {
    if (!verdict.ok) {
      refuse(a, verdict.reason, verdict.waitMs);
      return;
    }
    if (gate.on) gate.learn(a.key, verdict);
    a.ticket = verdict.ticket;
    count(verdict.ticket.held, 1);
    if (a.closed) {
      releaseAll(a, 0); // the client left before the verdict
      return;
    }
    a.admittedAt = performance.now();
    if (gate.on && !a.longLived) {
      a.tracked = true;
      gate.track(a.key, true);
    }
    next();
  };

  const refuse = (a: Attempt, reason: LimitReason, waitMs: number): void => {
    hooks.onDenied(reason);
    if (gate.on) {
      gate.learn(a.key, { ok: false, reason, waitMs });
      gate.refused(a.req, reason);
    }
    // Not awaited: the refusal may read the body for the id.
    sendLimited(a.req, a.res, reason, waitMs).catch((e: unknown) =>
      sendInternalError(a.req, a.res, e, NAME, logger),
    );
  };

  /** A check or next() threw: a store that cannot answer is a 503, anything else a 500. */
  const fail = (a: Attempt, e: unknown): void => {
    if (a.admittedAt < 0) releaseAll(a, 0);
    if (!(e instanceof StoreUnavailableError)) {
      sendInternalError(a.req, a.res, e, NAME, logger);
      return;
    }
    sendUnavailable(a.req, a.res).catch((err: unknown) => sendInternalError(a.req, a.res, err, NAME, logger));
  };

  /** Give the slots back and add the request's work: what it charged, else its time since admission. */
  const finish = (a: Attempt): Promise<void> | void => {
    if (config.costBudgetPerHour === 0) return releaseAll(a, 0);
    const work = workMs(a.req.locals?.chargedMs, performance.now() - a.admittedAt);
    hooks.onCharge(work.ms, work.source);
    return releaseAll(a, work.ms);
  };

  /**
   * The answer ends, or the response closed: an admitted request gives its slots back and adds its work. A
   * request answered with a task that still runs (`locals.task`) keeps its slots, and its work is measured and
   * charged, when the task ends.
   */
  const settle = (a: Attempt): Promise<void> | void => {
    a.closed = true;
    if (a.tracked) {
      a.tracked = false;
      gate.track(a.key, false);
    }
    if (a.admittedAt < 0 || !a.ticket || a.waiting) return; // before admission, the verdict sees `closed`
    const task = a.req.locals?.task;
    if (task === undefined || task.ended !== undefined) return finish(a);
    a.waiting = true;
    task.onEnd(() => void finish(a));
  };

  return {
    admit(req, res, next) {
      if (gate.on) gate.reached(req);
      const mcp = req.locals?.mcp;
      // A response to the server's own request, or a notification: the client answers or informs, it asks for no
      // work. Holding a slot or a request of the minute for it could stall the call waiting on that answer.
      if (mcp !== undefined && mcp.kind !== 'request') return next();
      if (res.closed || res.destroyed) return; // the client is gone already: nothing to answer, nothing to hold
      const a = newAttempt(req, res, mcp);
      // A GET stream's duration is the client's listening, not work: it charges the budget what the final
      // handler charges (nothing, unless it says otherwise), as the dispatcher does for a listen stream.
      if (req.method === 'GET') localsOf(req).chargedMs ??= 0;
      // Settled when the response closes, or before the answer's last bytes when it holds a set's last slot.
      releaseBeforeAnswer(res, a, settle);
      try {
        const task = isTaskRequest(mcp);
        const verdict = limiter.admit(a.key, !a.longLived && !task, !task, a.trace);
        if (!isThenable(verdict)) decide(a, verdict, next);
        else verdict.then((v) => decide(a, v, next)).catch((e: unknown) => fail(a, e));
      } catch (e) {
        fail(a, e);
      }
    },
    gate: gate.middleware,
    inflight,
  };
}
