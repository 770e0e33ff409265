/**
 * Handing audit records to the logger: a winston Logger is recognized and gets each record as one `info`
 * object, a stream logger gets the records of one event-loop turn as one corked batch, and a logger that falls
 * `maxBacklog` records behind gets no new ones until it catches up. Also `auditJsonFormat()`, the winston
 * format for audit lines.
 * @see docs/middleware/audit.md
 */
import type { Logform } from 'winston';
import type { AuditRecord } from './record.js';

/** The logger audit writes to: a winston Logger fits (`log(level, message, meta)`). */
export interface AuditLogger {
  log(level: string, message: string, meta: Record<string, unknown>): unknown;
}

/** A winston format: an object with `transform` (what `winston.format(...)()` makes). */
export type AuditJsonFormat = Logform.Format;

/** winston's (triple-beam's) key for the finished log line. */
const MESSAGE = Symbol.for('message');

/**
 * A winston format for the audit logger: one JSON line per record with plain `JSON.stringify`, keys in the
 * record's fixed order followed by `level` and `message`. `winston.format.json()` gives the same values but
 * sorts the keys of every record through a replacer. Audit records hold only strings, numbers, booleans, null
 * and flat objects/arrays of them, so the plain stringifier is enough; should a value be unserializable anyway
 * (a BigInt or a cycle from another caller of the same logger), the line says so instead of throwing inside the
 * logger. Combine as usual: `winston.format.combine(winston.format.timestamp(), auditJsonFormat())`.
 * @see docs/middleware/audit.md
 * @example
 * ```ts
 * import winston from 'winston';
 * import { audit, auditJsonFormat } from 'mcpware/audit';
 *
 * const logger = winston.createLogger({
 *   format: winston.format.combine(winston.format.timestamp(), auditJsonFormat()),
 *   transports: [new winston.transports.Console()],
 * });
 * app.use('/mcp', audit({ logger }));
 * ```
 */
export function auditJsonFormat(): AuditJsonFormat {
  return {
    transform(info: Logform.TransformableInfo) {
      let line: string;
      try {
        line = JSON.stringify(info);
      } catch {
        line = JSON.stringify({
          level: info.level,
          message: info.message,
          error: 'unserializable log record',
        });
      }
      info[MESSAGE] = line;
      return info;
    },
  };
}

/**
 * A winston Logger (3.x), recognized by what only it has together: a stream (`write`, `cork`), `transports`,
 * `levels`, `configure` and `isLevelEnabled`. Anything else is called as an AuditLogger.
 */
export function isWinstonLogger(l: unknown): boolean {
  const w = l as Record<string, unknown>;
  return (
    typeof w.write === 'function' &&
    typeof w.cork === 'function' &&
    typeof w.configure === 'function' &&
    typeof w.isLevelEnabled === 'function' &&
    Array.isArray(w.transports) &&
    w.levels !== null &&
    typeof w.levels === 'object'
  );
}

export interface AuditSinkOptions {
  readonly logger: AuditLogger;
  readonly level: string;
  readonly message: string;
  /** Records the logger may have queued before new ones are dropped (`Infinity`: never). */
  readonly maxBacklog: number;
  /** Hears logger failures and backlog drops; never throws. */
  readonly onError: (err: unknown) => void;
}

export interface AuditSink {
  /**
   * Whether the logger has room for a record. `false` counts a dropped record and reports it (at most once a
   * second); only a stream logger says how far behind it is, so any other logger always has room.
   */
  accepts(): boolean;
  /** Hands `record` to the logger; a throwing logger is reported, never rethrown. */
  write(record: AuditRecord): void;
  /** Records dropped so far. */
  readonly dropped: number;
}

/** How often (ms) `onError` hears that records are being dropped. */
const BACKLOG_REPORT_INTERVAL = 1000;

export function createAuditSink(options: AuditSinkOptions): AuditSink {
  const { logger, level, message, maxBacklog, onError } = options;
  // Only a stream (a winston Logger is an object-mode Transform) says how far behind it is.
  const queue = logger as { writableLength?: unknown };
  const bounded = maxBacklog !== Infinity && typeof queue.writableLength === 'number';
  let dropped = 0;
  let reportedAt = -Infinity;

  // A stream logger is corked at the first record of a turn and uncorked on setImmediate, so its transports get
  // the turn's records together; nothing waits longer than that turn. @see docs/performance.md#audits-corked-batch
  const stream = logger as { cork?: () => void; uncork?: () => void };
  const batches = typeof stream.cork === 'function' && typeof stream.uncork === 'function';
  let corked = false;
  const uncork = (): void => {
    corked = false;
    try {
      stream.uncork!.call(logger);
    } catch (err) {
      onError(err);
    }
  };

  // A winston Logger without `defaultMeta` gets the record itself as its `info` object (`log(info)`), which
  // writes the line `log(level, message, meta)` writes (the record's keys, then `level` and `message`) without
  // copying the record; with `defaultMeta` the three-argument form stays, where the record's keys win.
  // @see docs/performance.md#audits-info-object
  const winston = isWinstonLogger(logger);
  listenForErrors(logger, onError);

  return {
    accepts() {
      if (!bounded || (queue.writableLength as number) < maxBacklog) return true;
      dropped++;
      const now = Date.now();
      if (now - reportedAt >= BACKLOG_REPORT_INTERVAL) {
        reportedAt = now;
        const err = new Error(
          `audit records are being dropped: the logger is ${maxBacklog} or more records behind (maxBacklog)`,
        );
        onError(Object.assign(err, { code: 'AUDIT_BACKLOG', dropped }));
      }
      return false;
    },
    write(record) {
      if (batches && !corked) {
        try {
          stream.cork!.call(logger);
          corked = true;
          setImmediate(uncork);
        } catch (err) {
          onError(err);
        }
      }
      try {
        if (winston && !(logger as { defaultMeta?: unknown }).defaultMeta) {
          // Set one by one: Object.assign defines them through V8's generic path, a runtime call per record.
          // see docs/performance.md#audits-info-object
          const info = record as AuditRecord & { level: string; message: string };
          info.level = level;
          info.message = message;
          (logger as unknown as { log(info: object): unknown }).log(info);
        } else logger.log(level, message, record as unknown as Record<string, unknown>);
      } catch (err) {
        onError(err);
      }
    },
    get dropped() {
      return dropped;
    },
  };
}

/**
 * winston emits 'error' when a transport fails; with no listener that is an uncaught exception. Logging must
 * never take the server down, so audit listens when nobody else does.
 */
function listenForErrors(logger: AuditLogger, onError: (err: unknown) => void): void {
  const emitter = logger as {
    on?: (event: string, listener: (err: unknown) => void) => unknown;
    listenerCount?: (event: string) => number;
  };
  if (typeof emitter.on !== 'function' || typeof emitter.listenerCount !== 'function') return;
  if (emitter.listenerCount.call(logger, 'error') === 0) emitter.on.call(logger, 'error', onError);
}
