/**
 * `audit()`: one log record per HTTP request to the MCP endpoint, written when the response finishes (or the
 * client goes away), refused requests included, and one more when a task the request made (or found ended) ends.
 * Mount it first, before every middleware that can refuse.
 *
 * The record has fixed keys ({@link AUDIT_KEYS}), every one always present. It never holds the answer nor the
 * arguments (only their SHA-256, unless `arguments` names some to record); every caller-authored string is
 * sanitized, masked and only then cut to its cap, and appears only as a value, never as a key. It refuses
 * nothing: a failing or lagging logger never affects the answer. When the first answers show a final handler
 * that records no outcome (not mcpware's), it says so once on stderr (core/final-handler.ts).
 * @see docs/middleware/audit.md
 */
import { finalHandlerCheck } from '../../core/final-handler.js';
import { mountOrderCheck } from '../../core/mount-order.js';
import type { Middleware } from '../../core/types.js';
import { createByteCounter } from './byte-count.js';
import { type AuditOptions, resolveAuditOptions } from './options.js';
import { type AuditRecord, type BuildRecord, createRecordBuilder, taskEndRecord } from './record.js';
import { createAuditSink } from './winston.js';

export { AUDIT_CAPS, AUDIT_KEYS, type AuditKey, type AuditRecord } from './record.js';
export { auditJsonFormat, type AuditJsonFormat, type AuditLogger } from './winston.js';
export type { AuditOptions } from './options.js';

/** What {@link AuditMiddleware.stats} reports. */
export interface AuditStats {
  /** Records not handed to the logger because it was `maxBacklog` records or more behind. */
  dropped: number;
}

/** The audit middleware, with its counters. */
export type AuditMiddleware = Middleware & {
  /** Counters of this instance (a new object per call). */
  stats(): AuditStats;
};

/**
 * Write one audit record per request (who, what, outcome, refusal reason, timings) to a winston logger when
 * the response ends. Mount it first, so that refusals are recorded too.
 * @param options - {@link AuditOptions}
 * @see docs/middleware/audit.md
 * @example
 * ```ts
 * import winston from 'winston';
 * import { audit, auditJsonFormat } from 'mcpware/audit';
 *
 * const logger = winston.createLogger({
 *   format: auditJsonFormat(),
 *   transports: [new winston.transports.File({ filename: 'audit.log' })],
 * });
 * app.use('/mcp', audit({ logger }));
 * ```
 */
export function audit(options: AuditOptions): AuditMiddleware {
  const config = resolveAuditOptions(options);
  const { onError } = config;
  const sink = createAuditSink(config);
  const buildRecord = createRecordBuilder(config);
  // Not the audit logger: its lines are records, each with every key of AUDIT_KEYS.
  const check = finalHandlerCheck({
    by: 'audit',
    lacks: 'records neither req.locals.response nor req.locals.refusal',
    consequence: 'its outcome is unknown and is recorded as ok',
    docs: 'docs/middleware/audit.md#in-front-of-another-final-handler',
  });
  /** The record of `req`, or undefined when building it threw (reported). */
  const recordOf: (...args: Parameters<BuildRecord>) => AuditRecord | undefined = (
    req,
    res,
    arrival,
    finished,
  ) => {
    try {
      return buildRecord(req, res, arrival, finished);
    } catch (err) {
      onError(err);
      return undefined;
    }
  };
  const counter = createByteCounter({
    onEnd(res, tracking, finished) {
      if (finished && check.pending) check.finished(tracking.req, res);
      const task = tracking.req.locals?.task;
      const record = sink.accepts() ? recordOf(tracking.req, res, tracking, finished) : undefined;
      // The task's end gets a record of its own, after the request's (at once when the task has ended already).
      const base = task && record ? { ...record } : undefined;
      if (record) sink.write(record);
      if (task === undefined) return;
      task.onEnd((end) => {
        // Recorded by the request that ended it.
        if (end.elsewhere === true || !sink.accepts()) return;
        const from = base ?? recordOf(tracking.req, res, tracking, finished);
        if (!from) return;
        let ended: AuditRecord;
        try {
          ended = taskEndRecord(from, task, end, Date.now());
        } catch (err) {
          onError(err);
          return;
        }
        sink.write(ended);
      });
    },
    onLost() {
      onError(
        new Error(
          'audit: req.locals was replaced during a request, so its record is lost (add to req.locals, never replace it)',
        ),
      );
    },
  });

  const late = mountOrderCheck('audit');
  const middleware: Middleware = function mcpAudit(req, res, next) {
    if (late(req, res)) return next();
    // One record per request, even if the chain runs this instance twice.
    counter.track(req, res);
    next();
  };
  return Object.assign(middleware, {
    stats: (): AuditStats => ({ dropped: sink.dropped }),
  });
}
