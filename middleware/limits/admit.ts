/**
 * Admission: the four checks of a POST, in order, each written once over values that may be promises, so the
 * memory store decides synchronously and the Redis store asynchronously; the refusals; and what happens when an
 * admitted request's response closes.
 * @see docs/middleware/limits.md
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type Refusal, refusal } from '../../lib/errors.js';
import {
  CONCURRENCY_RETRY_MS,
  type InflightScope,
  LIMIT_MESSAGES,
  type LimitReason,
  type LimitRefusalData,
  retryAfterSeconds,
  workMs,
} from '../../lib/limits.js';
import { type MaybePromise, isThenable } from '../internal/maybe-promise.js';
import { parseRequest } from '../internal/parse-step.js';
import { principalKey } from '../../lib/principal.js';
import { sendInternalError, sendRefusal } from '../internal/respond.js';
import { type Limiter, type Slot, StoreUnavailableError } from './limiter.js';
import type { LimitsConfig } from './options.js';
import type { BudgetUse, RpmResult } from './store.js';

const NAME = 'limits';

/** At most this much of a refused body is read to echo its id; longer bodies are answered without one. */
const ID_PEEK_BYTES = 64 * 1024;
/** How long a refusal waits for the body to find the id before it is sent without one. */
const ID_PEEK_MS = 1000;

/** One POST on its way through the checks. */
interface Attempt {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  /** The bucket of the request's principal: its source and id ({@link principalKey}), or `anonymous`. */
  readonly key: string;
  /** A subscriptions/listen stream: it takes no concurrency slot. */
  readonly longLived: boolean;
  /** The slots taken so far; emptied as they are given back, so each is released once. */
  readonly held: Slot[];
  /** The response closed (finished, or the client went away). */
  closed: boolean;
  /** When the request was admitted (`performance.now()`); -1 until then. */
  admittedAt: number;
}

/** Why a check refused, or `'gone'`: the client left before the checks ended. */
type Verdict = { reason: LimitReason; waitMs: number } | 'gone' | undefined;
/** One check: what it asks the limiter, and how it reads the answer. */
interface Check<T> {
  ask(a: Attempt): MaybePromise<T>;
  judge(a: Attempt, answer: T): Verdict;
}

export interface Admission {
  /** Admit `req` (a POST) and call `next`, or refuse it; never throws. */
  admit(req: IncomingMessage, res: ServerResponse, next: () => void): void;
  /** Requests of this process holding a slot, per scope. */
  readonly inflight: Readonly<Record<InflightScope, number>>;
}

/**
 * A subscriptions/listen stream lives as long as the client wants; holding concurrency slots for it would let a
 * few subscriptions lock their owner out. It still counts against rpm; the dispatcher caps open streams itself.
 * Seen only when the request was parsed before this middleware (the recommended order).
 */
function isLongLived(req: IncomingMessage): boolean {
  const mcp = req.locals?.mcp;
  return mcp?.kind === 'request' && mcp.method === 'subscriptions/listen';
}

/** The id of the request, read from at most 64 KiB of body and within a second; undefined when not readable. */
async function peekId(req: IncomingMessage): Promise<unknown> {
  const known = req.locals?.mcp;
  if (known) return known.id;
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
 * The checks of the limits that are on, in their order: the budget, a per-user slot, a global slot, one request
 * of the minute window. `hold` keeps a slot a check took.
 */
function checksOf(
  config: LimitsConfig,
  limiter: Limiter,
  hold: (a: Attempt, slot: Slot) => void,
): Check<unknown>[] {
  const budget: Check<BudgetUse | null> = {
    ask: (a) => limiter.budgetUsed(a.key),
    judge: (_a, use) =>
      use && use.used >= config.costBudgetPerHour
        ? { reason: 'cost_budget', waitMs: use.msBeforeNext }
        : undefined,
  };

  const slot = (scope: InflightScope, limit: number, reason: LimitReason): Check<Slot | undefined> => ({
    ask: (a) => (a.longLived ? undefined : limiter.acquire(scope, scope === 'global' ? 'all' : a.key, limit)),
    judge(a, s) {
      if (a.longLived) return undefined;
      if (!s) return { reason, waitMs: CONCURRENCY_RETRY_MS };
      hold(a, s);
      return undefined;
    },
  });

  const rpm: Check<RpmResult> = {
    ask: (a) => limiter.takeRpm(a.key),
    judge: (_a, r) => (r.ok ? undefined : { reason: 'rpm', waitMs: r.msBeforeNext }),
  };

  const checks: Check<unknown>[] = [];
  if (config.costBudgetPerHour > 0) checks.push(budget);
  if (config.perUserConcurrency > 0) checks.push(slot('user', config.perUserConcurrency, 'user_concurrent'));
  if (config.globalConcurrency > 0)
    checks.push(slot('global', config.globalConcurrency, 'global_concurrent'));
  if (config.perUserRpm > 0) checks.push(rpm);

  return checks;
}

/**
 * The admission of one middleware. The checks run in order and stop at the first refusal, so that a refusal
 * by an earlier one takes nothing from a later one. A refusal gives back the slots taken; an admitted request
 * gives them back when its response closes, and its work is added to the budget then.
 */
export function createAdmission(config: LimitsConfig, limiter: Limiter): Admission {
  const { hooks, logger } = config;
  const inflight: Record<InflightScope, number> = { user: 0, global: 0 };

  const count = (scope: InflightScope, delta: number): void => {
    inflight[scope] += delta;
    hooks.onInflight(scope, inflight[scope]);
  };

  const releaseAll = (a: Attempt): void => {
    for (let slot = a.held.shift(); slot; slot = a.held.shift()) {
      limiter.release(slot);
      count(slot.scope, -1);
    }
  };

  const checks = checksOf(config, limiter, (a, slot) => {
    a.held.push(slot);
    count(slot.scope, 1);
  });

  /** The checks from `from` on; stops at the first refusal, or when the client has gone. */
  const runChecks = (a: Attempt, from: number): MaybePromise<Verdict> => {
    for (let i = from; i < checks.length; i++) {
      if (a.closed) return 'gone';
      const check = checks[i]!;
      const answer = check.ask(a);
      if (isThenable(answer)) {
        return (answer as Promise<unknown>).then((x) => check.judge(a, x) ?? runChecks(a, i + 1));
      }
      const verdict = check.judge(a, answer);
      if (verdict !== undefined) return verdict;
    }
    return undefined;
  };

  const decide = (a: Attempt, verdict: Verdict, next: () => void): void => {
    if (verdict === undefined && a.closed) verdict = 'gone';
    if (verdict !== undefined) {
      releaseAll(a);
      if (verdict !== 'gone') refuse(a, verdict.reason, verdict.waitMs);
      return;
    }
    a.admittedAt = performance.now();
    next();
  };

  const refuse = (a: Attempt, reason: LimitReason, waitMs: number): void => {
    hooks.onDenied(reason);
    // Not awaited: the refusal may read the body for the id.
    sendLimited(a.req, a.res, reason, waitMs).catch((e: unknown) =>
      sendInternalError(a.req, a.res, e, NAME, logger),
    );
  };

  /** A check or next() threw: a store that cannot answer is a 503, anything else a 500. */
  const fail = (a: Attempt, e: unknown): void => {
    if (a.admittedAt < 0) releaseAll(a);
    if (!(e instanceof StoreUnavailableError)) {
      sendInternalError(a.req, a.res, e, NAME, logger);
      return;
    }
    sendUnavailable(a.req, a.res).catch((err: unknown) => sendInternalError(a.req, a.res, err, NAME, logger));
  };

  /** The response closed: an admitted request gives its slots back and adds its work to the budget. */
  const settle = (a: Attempt): void => {
    a.closed = true;
    if (a.admittedAt < 0) return; // before admission, the checks see `closed` and give the slots back
    releaseAll(a);
    if (config.costBudgetPerHour === 0) return;
    const work = workMs(a.req.locals?.chargedMs, performance.now() - a.admittedAt);
    hooks.onCharge(work.ms, work.source);
    if (work.ms > 0) limiter.charge(a.key, work.ms);
  };

  return {
    admit(req, res, next) {
      if (res.closed || res.destroyed) return; // the client is gone already: nothing to answer, nothing to hold
      const a: Attempt = {
        req,
        res,
        key: principalKey(req.locals?.principal),
        longLived: isLongLived(req),
        held: [],
        closed: false,
        admittedAt: -1,
      };
      res.once('close', () => settle(a));
      try {
        const verdict = runChecks(a, 0);
        if (!isThenable(verdict)) decide(a, verdict, next);
        else verdict.then((v) => decide(a, v, next)).catch((e: unknown) => fail(a, e));
      } catch (e) {
        fail(a, e);
      }
    },
    inflight,
  };
}
