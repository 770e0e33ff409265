/**
 * The pure parts of the limits middleware: the reasons a request is refused, the `Retry-After` arithmetic, how
 * work is priced, limit-value validation, and reading the limits from environment variables.
 *
 * Pure: no I/O, no timers, no clocks (callers pass `now` and durations in). {@link FixedWindows} and
 * {@link StandingRefusals} keep state, but only what their callers put in it.
 * @see docs/middleware/limits.md
 */

/** Which limit refused a request. Logs, metrics and the refusal's `data.limit` use these names. */
export type LimitReason = 'rpm' | 'user_concurrent' | 'global_concurrent' | 'cost_budget';

/** Every {@link LimitReason}, in the order the middleware checks them. */
export const LIMIT_REASONS: readonly LimitReason[] = [
  'cost_budget',
  'user_concurrent',
  'global_concurrent',
  'rpm',
];

/** The two concurrency scopes: slots per user, and slots for everyone together. */
export type InflightScope = 'user' | 'global';

/** `data` of a 429 written by the limits middleware. */
export interface LimitRefusalData {
  /** The limit that was hit. */
  limit: LimitReason;
  /** Seconds to wait, equal to the `Retry-After` header. */
  retryAfterSeconds: number;
}

/** Default values: the demo's environment defaults, so `limits()` protects out of the box. */
export const LIMIT_DEFAULTS = {
  perUserRpm: 600,
  perUserConcurrency: 8,
  globalConcurrency: 64,
  /** Milliseconds of work per user per hour (30 minutes). */
  costBudgetPerHour: 30 * 60 * 1000,
} as const;

/** The largest limit value accepted (it keeps every count an exact integer in Redis and in JavaScript). */
export const MAX_LIMIT_VALUE = 2 ** 48;

/** The per-user request window (the `perUserRpm` limit) and the budget window, in seconds. */
export const RPM_WINDOW_SECONDS = 60;
export const BUDGET_WINDOW_SECONDS = 3600;

/**
 * Seconds to put in `Retry-After` for a wait of `ms` milliseconds: rounded up to a whole second, at least 1.
 * A non-finite or negative wait gives 1 (retrying at once is pointless, and a header of 0 invites a busy loop).
 */
export function retryAfterSeconds(ms: number): number {
  if (!Number.isFinite(ms) || ms <= 0) return 1;
  return Math.max(1, Math.ceil(ms / 1000));
}

/** Concurrency refusals carry this wait: a slot usually frees within a request's lifetime. */
export const CONCURRENCY_RETRY_MS = 1000;

/** The message of a 429 for each limit. */
export const LIMIT_MESSAGES: Readonly<Record<LimitReason, string>> = {
  rpm: 'Rate limit exceeded: too many requests per minute',
  user_concurrent: 'Rate limit exceeded: too many concurrent requests for this user',
  global_concurrent: 'Rate limit exceeded: the server is at its concurrency limit',
  cost_budget: 'Rate limit exceeded: the hourly work budget is spent',
};

/** A limit value is a non-negative safe integer up to {@link MAX_LIMIT_VALUE}; 0 switches the limit off. */
export function isLimitValue(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 && v <= MAX_LIMIT_VALUE;
}

/**
 * The work a finished request costs, in whole milliseconds: what it charged when it charged anything (negative
 * totals count as 0), otherwise its wall-clock time. Whole numbers because a Redis counter only adds integers.
 */
export function workMs(
  chargedMs: number | undefined,
  wallMs: number,
): { ms: number; source: 'charged' | 'wall_clock' } {
  if (chargedMs !== undefined && Number.isFinite(chargedMs)) {
    return { ms: Math.min(Math.round(Math.max(chargedMs, 0)), MAX_LIMIT_VALUE), source: 'charged' };
  }
  return {
    ms: Math.min(Math.round(Math.max(Number.isFinite(wallMs) ? wallMs : 0, 0)), MAX_LIMIT_VALUE),
    source: 'wall_clock',
  };
}

/**
 * Fixed-window counters in process memory, one per key: a window opens at the key's first {@link add} and ends
 * `durationMs` later; the next add after that opens a new one at 0. The same arithmetic as rate-limiter-flexible's
 * `RateLimiterMemory` (its `consume` and `penalty` add, its `get` reads, its `msBeforeNext` is {@link msLeft}),
 * without the promise and the result object per call and without a timer per window.
 *
 * Synchronous, and the caller passes the time (`now`, in ms, from a clock that does not go back). A window that
 * has ended counts as absent. Ended windows are dropped when a new window opens: the map keeps its keys in the
 * order their windows opened, which is the order they end, so the dropping walks only ended windows and stops at
 * the first live one. The map holds the windows opened within the last `durationMs`, plus ended ones until the
 * next window opens.
 * @example
 * ```ts
 * import { FixedWindows } from 'mcpware/lib';
 *
 * const minute = new FixedWindows(60_000);
 * const now = performance.now();
 * if (minute.add('alice', 1, now) > 600) console.log(`retry in ${minute.msLeft('alice', now)} ms`);
 * ```
 */
export class FixedWindows {
  private readonly windows = new Map<string, { count: number; endsAt: number }>();
  /** No window ends before this (Infinity: none is open); spares the walk when nothing can have ended. */
  private sweepAt = Infinity;

  constructor(readonly durationMs: number) {}

  /** The count of the key's current window; 0 when none is open. */
  count(key: string, now: number): number {
    const w = this.windows.get(key);
    return w !== undefined && w.endsAt > now ? w.count : 0;
  }

  /** Milliseconds until the key's current window ends; 0 when none is open. */
  msLeft(key: string, now: number): number {
    const w = this.windows.get(key);
    return w !== undefined && w.endsAt > now ? w.endsAt - now : 0;
  }

  /** Add `n` to the key's current window, opening one at `now` when none is open; returns the window's count. */
  add(key: string, n: number, now: number): number {
    const w = this.windows.get(key);
    if (w !== undefined && w.endsAt > now) return (w.count += n);
    // The key's ended window, if any, is among the ended ones at the front: the sweep drops it, so the new window
    // is inserted at the end, in order.
    if (now >= this.sweepAt) this.sweep(now);
    const endsAt = now + this.durationMs;
    this.windows.set(key, { count: n, endsAt });
    if (this.sweepAt === Infinity) this.sweepAt = endsAt;
    return n;
  }

  /** Keys held, ended windows not yet dropped included. */
  get size(): number {
    return this.windows.size;
  }

  private sweep(now: number): void {
    this.sweepAt = Infinity;
    for (const [key, w] of this.windows) {
      if (w.endsAt > now) {
        this.sweepAt = w.endsAt;
        return;
      }
      this.windows.delete(key);
    }
  }
}

/** A refusal that lasts until a window ends: the limit, and when (ms, on the caller's clock) it ends. */
export interface StandingRefusal {
  readonly reason: LimitReason;
  readonly until: number;
}

/**
 * The limits that refuse a key until their window ends, whatever the key sends meanwhile: the minute and the
 * budget only grow within a window. A concurrency refusal can end at any moment, so it is not one of them.
 */
export function refusesUntilWindowEnds(reason: LimitReason): boolean {
  return reason === 'rpm' || reason === 'cost_budget';
}

/**
 * Keys known to be refused until a time, at most `maxKeys` of them: what lets a limiter refuse a caller before
 * reading its request. The map keeps its keys in the order they were set (a key set again moves to the end).
 * Each {@link set} drops the ended entries at the front, up to the first live one, and at the bound the oldest
 * entry goes, so the map never holds more than `maxKeys`; a {@link get} drops the ended entry it finds.
 *
 * Synchronous, and the caller passes the time (`now`, in ms, from a clock that does not go back).
 */
export class StandingRefusals {
  private readonly entries = new Map<string, StandingRefusal>();

  constructor(readonly maxKeys: number) {}

  /** The key's refusal while it lasts, else undefined. */
  get(key: string, now: number): StandingRefusal | undefined {
    const r = this.entries.get(key);
    if (r === undefined || r.until > now) return r;
    this.entries.delete(key);
    return undefined;
  }

  /** Remember that `key` is refused for `reason` until `until`. */
  set(key: string, reason: LimitReason, until: number, now: number): void {
    this.entries.delete(key);
    for (const [k, r] of this.entries) {
      if (r.until > now && this.entries.size < this.maxKeys) break;
      this.entries.delete(k);
    }
    this.entries.set(key, { reason, until });
  }

  /** Keys held, ended ones not yet dropped included. */
  get size(): number {
    return this.entries.size;
  }
}

/**
 * ioredis options that keep a limiter's answers bounded while Redis is away: no offline queue (commands fail at
 * once instead of waiting for a reconnect and then running late), one retry per command, a command timeout,
 * and no re-sending of commands that were in flight when the connection dropped (they would count twice).
 * Reconnection itself stays on, so limiting resumes when Redis returns.
 */
export const redisClientOptions = {
  enableOfflineQueue: false,
  maxRetriesPerRequest: 1,
  commandTimeout: 500,
  connectTimeout: 2000,
  autoResendUnfulfilledCommands: false,
} as const;

/** The environment variables the demo server reads its limits from. */
export const LIMITS_ENV = {
  perUserRpm: 'MCP_RPM',
  perUserConcurrency: 'MCP_USER_CONCURRENCY',
  globalConcurrency: 'MCP_GLOBAL_CONCURRENCY',
  costBudgetPerHour: 'MCP_COST_BUDGET_MS',
} as const;

export interface LimitsEnvValues {
  perUserRpm: number;
  perUserConcurrency: number;
  globalConcurrency: number;
  costBudgetPerHour: number;
  /** `REDIS_URL` when set and non-empty: the limits live in that Redis. */
  redisUrl?: string;
}

export type LimitsEnvResult =
  | { ok: true; value: LimitsEnvValues }
  | { ok: false; reason: 'invalid_env'; variable: string; value: string; message: string };

// Digits only, bounded: 16 digits is already beyond MAX_LIMIT_VALUE, so longer input cannot be valid.
const DECIMAL = /^\d{1,16}$/;

/**
 * Read the limits from the environment: `MCP_RPM` (600), `MCP_USER_CONCURRENCY` (8), `MCP_GLOBAL_CONCURRENCY`
 * (64), `MCP_COST_BUDGET_MS` per user per hour (1800000), each `0` = off, and `REDIS_URL`. Unset or empty
 * variables take the default. Anything else that is not a whole number fails, naming the variable.
 */
export function parseLimitsEnv(env: Readonly<Record<string, string | undefined>>): LimitsEnvResult {
  const value: LimitsEnvValues = { ...LIMIT_DEFAULTS };
  for (const option of Object.keys(LIMITS_ENV) as (keyof typeof LIMITS_ENV)[]) {
    const variable = LIMITS_ENV[option];
    const raw = env[variable];
    if (raw === undefined || raw.trim() === '') continue;
    const text = raw.trim();
    const n = DECIMAL.test(text) ? Number(text) : NaN;
    if (!isLimitValue(n)) {
      return {
        ok: false,
        reason: 'invalid_env',
        variable,
        value: raw,
        message: `${variable} must be a whole number from 0 (off) to ${MAX_LIMIT_VALUE}, got ${JSON.stringify(raw)}`,
      };
    }
    value[option] = n;
  }
  const url = env.REDIS_URL?.trim();
  if (url) {
    if (!/^rediss?:\/\//i.test(url)) {
      // The value is not repeated: a Redis URL may carry a password.
      return {
        ok: false,
        reason: 'invalid_env',
        variable: 'REDIS_URL',
        value: '[hidden]',
        message: 'REDIS_URL must start with redis:// or rediss://',
      };
    }
    value.redisUrl = url;
  }
  return { ok: true, value };
}
