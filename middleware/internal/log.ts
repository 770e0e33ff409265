/**
 * The one way the library writes to a logger: never throws, so a broken logger cannot take an answer down, and a
 * level the logger lacks falls back to `error` (for `warn`) or is dropped (for `info` and `debug`).
 */
import type { Logger } from '../types.js';

export type LogLevel = 'error' | 'warn' | 'info' | 'debug';

export function log(logger: Logger, level: LogLevel, message: string, meta?: Record<string, unknown>): void {
  try {
    const write =
      level === 'error' ? logger.error : level === 'warn' ? (logger.warn ?? logger.error) : logger[level];
    write?.call(logger, message, meta);
  } catch {
    // A broken logger must not break the request.
  }
}

/** An error as log metadata: its message and stack, never sent to a client. */
export function errorMeta(err: unknown): { message: string; stack?: string } | string {
  return err instanceof Error
    ? { message: err.message, ...(err.stack ? { stack: err.stack } : {}) }
    : String(err);
}
