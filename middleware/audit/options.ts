/**
 * `audit()`'s options: the public type and their validation, all at construction.
 * @see docs/middleware/audit.md
 */
import type { IncomingMessage } from 'node:http';
import { type Redactor, type RuleName, compileRedactor } from '../../lib/redact/index.js';
import { rawBudget } from '../../lib/sanitize.js';
import { log } from '../../core/log.js';
import {
  OPTION_ERRORS,
  badOption,
  fnOption,
  knownKeys,
  optionError,
  optionsObject,
  stringOption,
} from '../../core/options.js';
import { stderrLogger } from '../../core/respond.js';
import { MAX_CAP } from './record.js';
import type { AuditLogger } from './winston.js';

export interface AuditOptions {
  /** Where records go: a winston Logger (required). */
  logger: AuditLogger;
  /** Log level of the records. Default `info`. */
  level?: string;
  /** Log message of the records. Default `mcp call`. It must not contain printf tokens such as `%s`. */
  message?: string;
  /** Redaction applied to caller-authored strings (always in mask mode). Default: all rules. */
  redact?: { rules?: readonly RuleName[]; maskEmailDomain?: boolean };
  /**
   * Names of tool/prompt arguments whose values are recorded under `args` (sanitized, masked, capped at 256
   * characters; objects as depth-bounded JSON). Default: none (only the digest). Deny by default.
   */
  arguments?: readonly string[];
  /** The `request_id` of a record. Default: a random UUID. Its result is sanitized and capped at 128. */
  requestId?: (req: IncomingMessage) => string;
  /**
   * Called when the logger throws or emits `error`, and (at most once a second) while records are dropped
   * because of `maxBacklog` (an Error with `code: 'AUDIT_BACKLOG'`). Default: one line on stderr.
   */
  onError?: (err: unknown) => void;
  /**
   * How many records the logger may have queued before audit stops handing it new ones. Default 10 000;
   * `Infinity` never drops.
   *
   * Why: `logger.log()` never waits. A winston Logger is an object-mode stream: when its transports cannot keep
   * up, records queue in it without bound. Under saturation a File transport with winston's default buffer
   * (fs.WriteStream's `highWaterMark`) writes fewer records per round trip to the disk than the server answers
   * requests, so the queue, and the process's memory, grow for as long as the load lasts. When the logger is a
   * stream (it has `writableLength`) and that many records or more are queued in it, the record is not logged
   * but counted as dropped (see `stats()`), and `onError` hears about it (at most once a second). The bound is
   * on the Logger's own queue: the few records in its and its transports' buffers come on top. Loggers that are
   * not streams are never bounded; neither is a winston Stream transport's destination (that transport does not
   * wait for its stream, so its backlog never reaches the Logger).
   *
   * Give the File transport a larger buffer so that it does not fall behind in the first place:
   * `new winston.transports.File({ filename, options: { flags: 'a', highWaterMark: 1024 * 1024 } })`.
   */
  maxBacklog?: number;
}

/** The validated options of one audit instance. */
export interface AuditConfig {
  readonly logger: AuditLogger;
  readonly level: string;
  readonly message: string;
  /** Always in mask mode, sized for the largest field cap. */
  readonly redactor: Redactor;
  /** The `arguments` option without duplicates. */
  readonly recorded: readonly string[];
  readonly requestId: ((req: IncomingMessage) => string) | undefined;
  /** The `onError` option (or the stderr line), wrapped so that it never throws. */
  readonly onError: (err: unknown) => void;
  readonly maxBacklog: number;
}

const FACTORY = 'audit';
const KNOWN: readonly (keyof AuditOptions)[] = [
  'logger',
  'level',
  'message',
  'redact',
  'arguments',
  'requestId',
  'onError',
  'maxBacklog',
];
const KNOWN_REDACT = ['rules', 'maskEmailDomain'];

/** Default of {@link AuditOptions.maxBacklog}. */
const DEFAULT_MAX_BACKLOG = 10_000;
const BACKLOG_EXPECTED = 'a whole number >= 1, or Infinity (never drop)';

/** Validates every option of `audit()`; throws a TypeError naming the option on the first bad one. */
export function resolveAuditOptions(options: AuditOptions): AuditConfig {
  if (options === undefined) {
    throw optionError(OPTION_ERRORS.missing, FACTORY, `${FACTORY}: options must be an object with a logger`);
  }
  const o = optionsObject(FACTORY, options);
  knownKeys(FACTORY, o, KNOWN);
  return Object.freeze({
    logger: loggerOf(o.logger),
    level: stringOption(FACTORY, 'level', o.level, 'info'),
    message: messageOf(o.message),
    redactor: redactorOf(o.redact),
    recorded: argumentNamesOf(o.arguments),
    requestId: fnOption<(req: IncomingMessage) => string>(FACTORY, 'requestId', o.requestId),
    onError: neverThrowing(fnOption(FACTORY, 'onError', o.onError) ?? logToStderr),
    maxBacklog: maxBacklogOf(o.maxBacklog),
  });
}

function neverThrowing(onError: (err: unknown) => void): (err: unknown) => void {
  return (err) => {
    try {
      onError(err);
    } catch {
      // nothing left to report to
    }
  };
}

function logToStderr(err: unknown): void {
  log(stderrLogger, 'error', `audit: logging failed: ${err instanceof Error ? err.message : String(err)}`);
}

function loggerOf(logger: unknown): AuditLogger {
  if (logger === null || typeof logger !== 'object' || typeof (logger as AuditLogger).log !== 'function') {
    throw badOption(
      FACTORY,
      'logger',
      logger,
      'a winston Logger (an object with a log(level, message, meta) method)',
    );
  }
  return logger as AuditLogger;
}

function messageOf(value: unknown): string {
  const message = stringOption(FACTORY, 'message', value, 'mcp call');
  // winston's log(level, message, meta) treats a message with printf tokens as a format and drops `meta`.
  if (/%[scdjifoO%]/.test(message)) {
    throw badOption(FACTORY, 'message', message, 'a non-empty string without printf tokens (%s, %d, …)');
  }
  return message;
}

function redactorOf(value: AuditOptions['redact'] | undefined): Redactor {
  const r = value ?? {};
  if (typeof r !== 'object') throw badOption(FACTORY, 'redact', r, 'an object');
  knownKeys(FACTORY, r, KNOWN_REDACT, 'redact.');
  const compiled = compileRedactor({
    mode: 'mask', // the audit trail always masks, whatever redact()'s mode is
    ...(r.rules !== undefined ? { rules: r.rules } : {}),
    ...(r.maskEmailDomain !== undefined ? { maskEmailDomain: r.maskEmailDomain } : {}),
    maxLength: rawBudget(MAX_CAP),
  });
  if (!compiled.ok) {
    const expected = compiled.message.replace(/^.*?, want /, '');
    throw badOption(FACTORY, `redact.${compiled.option}`, compiled.value, expected);
  }
  return compiled.redactor;
}

function argumentNamesOf(value: unknown): readonly string[] {
  const names = value ?? [];
  if (!Array.isArray(names) || names.some((n) => typeof n !== 'string' || n.length === 0)) {
    throw badOption(FACTORY, 'arguments', names, 'an array of argument names');
  }
  return Object.freeze([...new Set(names as string[])]);
}

function maxBacklogOf(value: unknown): number {
  if (value === undefined) return DEFAULT_MAX_BACKLOG;
  if (value === Infinity || (Number.isSafeInteger(value) && (value as number) >= 1)) return value as number;
  // badOption shows values as JSON, where NaN and -Infinity would read `null`.
  throw typeof value === 'number'
    ? optionError(
        OPTION_ERRORS.invalid,
        FACTORY,
        `${FACTORY}: option "maxBacklog" must be ${BACKLOG_EXPECTED}, got ${String(value)}`,
      )
    : badOption(FACTORY, 'maxBacklog', value, BACKLOG_EXPECTED);
}
