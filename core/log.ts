/**
 * The one way the library writes to a logger: never throws, so a broken logger cannot take an answer down, and a
 * level the logger lacks falls back to `error` (for `warn`) or is dropped (for `info` and `debug`).
 *
 * Every string of the message and of the metadata (keys included, at any depth) goes through the audit
 * sanitizer (lib/sanitize.ts `cleanText`) before the logger sees it: log lines carry request data (a method
 * name, an unverified token's `kid` and claims, a handler's error message), and JSON formats escape C0 controls
 * but leave C1 controls, bidi controls and U+2028/U+2029 raw. Doing it here means no call site can forget. The
 * metadata is copied with bounds on depth, members and length, and a cycle is written as `[cycle]`.
 */
import { cleanText } from '../lib/sanitize.js';
import type { Logger } from './types.js';

export type LogLevel = 'error' | 'warn' | 'info' | 'debug';

/** Longest string (code points) a log line keeps, a stack trace included. */
export const LOG_TEXT_CAP = 4096;
/** Longest metadata key (code points). */
const LOG_KEY_CAP = 128;
/** Deepest metadata nesting copied (the meta object is depth 1); deeper values become `[too deep]`. */
const LOG_MAX_DEPTH = 6;
/** Most members of one object or items of one array copied; the rest is counted in a `…` member. */
const LOG_MAX_MEMBERS = 64;

export function log(logger: Logger, level: LogLevel, message: string, meta?: Record<string, unknown>): void {
  try {
    const write =
      level === 'error' ? logger.error : level === 'warn' ? (logger.warn ?? logger.error) : logger[level];
    if (typeof write !== 'function') return;
    const clean =
      meta === undefined ? undefined : (cleanValue(meta, 1, new Set()) as Record<string, unknown>);
    write.call(logger, cleanText(String(message), LOG_TEXT_CAP), clean);
  } catch {
    // A broken logger must not break the request.
  }
}

/** A log-safe copy of `v`: strings cleaned, containers bounded, cycles and errors made plain. */
function cleanValue(v: unknown, depth: number, path: Set<object>): unknown {
  if (typeof v === 'string') return cleanText(v, LOG_TEXT_CAP);
  if (v === null || typeof v === 'number' || typeof v === 'boolean' || v === undefined) return v;
  if (typeof v === 'bigint') return String(v);
  if (typeof v !== 'object') return undefined; // functions and symbols: JSON formats drop them too
  if (path.has(v)) return '[cycle]';
  if (depth > LOG_MAX_DEPTH) return '[too deep]';
  path.add(v);
  try {
    if (v instanceof Error) return cleanObject(errorMeta(v) as Record<string, unknown>, depth, path);
    if (Array.isArray(v)) {
      const out = v.slice(0, LOG_MAX_MEMBERS).map((x) => cleanValue(x, depth + 1, path));
      if (v.length > LOG_MAX_MEMBERS) out.push(`… ${v.length - LOG_MAX_MEMBERS} more`);
      return out;
    }
    return cleanObject(v as Record<string, unknown>, depth, path);
  } finally {
    path.delete(v);
  }
}

/** The own enumerable members of `o`, keys and values cleaned; a member whose getter throws is left out. */
function cleanObject(o: Record<string, unknown>, depth: number, path: Set<object>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const keys = Object.keys(o);
  const n = Math.min(keys.length, LOG_MAX_MEMBERS);
  for (let i = 0; i < n; i++) {
    const key = cleanText(keys[i]!, LOG_KEY_CAP);
    // `__proto__` would set the copy's prototype (and a logger's Object.assign would do the same to its record).
    if (key === '__proto__') continue;
    let value: unknown;
    try {
      value = o[keys[i]!];
    } catch {
      continue;
    }
    out[key] = cleanValue(value, depth + 1, path);
  }
  if (keys.length > n) out['…'] = `${keys.length - n} more`;
  return out;
}

/** An error as log metadata: its message and stack, never sent to a client. */
export function errorMeta(err: unknown): { message: string; stack?: string } | string {
  return err instanceof Error
    ? { message: err.message, ...(err.stack ? { stack: err.stack } : {}) }
    : String(err);
}
