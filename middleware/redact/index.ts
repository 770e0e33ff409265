/**
 * `redact()`: mask secrets and personal data in what leaves the server. For every POST, and every GET (a
 * session's server stream, whose events `sdk()` and `proxy()` relay through the same transforms), it registers an
 * outbound transform on `req.locals.outbound`, which the final handler applies to each result and notification
 * before encoding (what is masked, by method: `walk.ts`). Modes: `mask` (default) replaces matches, `warn` counts
 * them and changes nothing, `off` does nothing. The rules that fired are recorded on `req.locals.redaction` for
 * audit and metrics. It refuses nothing it serves: DELETE (a session's end, no messages) and OPTIONS go on, and
 * any other method gets the POST-only 405. When the first answers show a final handler that does not apply the
 * transforms (not mcpware's), it says so once (core/final-handler.ts).
 * @see docs/middleware/redact.md
 */
import { compileRedactor, parseRedactMode } from '../../lib/redact/index.js';
import {
  type RedactMode,
  type RedactOptions,
  type RedactTally,
  type Redactor,
  type RuleName,
  RULE_NAMES,
  newTally,
  redactResultOf,
} from '../../lib/redact/types.js';
import type { ServerResponse } from 'node:http';
import { clip } from '../../lib/clip.js';
import { finalHandlerCheck } from '../../core/final-handler.js';
import { localsOf } from '../../core/respond.js';
import { mountOrderCheck } from '../../core/mount-order.js';
import { notPost } from '../../core/post-only.js';
import { badOption, fnOption, knownKeys, optionsObject } from '../../core/options.js';
import { type RequestTrace, TRACE, TRACE_REDACTOR, type TraceRedactor } from '../../core/trace.js';
import type {
  Middleware,
  OutboundKind,
  OutboundTransform,
  RedactionRecord,
  RequestLocals,
} from '../../core/types.js';
import { maskOutbound } from './walk.js';

export interface RedactMiddlewareOptions extends RedactOptions {
  /**
   * Called after each outgoing value in which at least one rule fired (warn and mask modes), e.g. to alert.
   * Exceptions thrown by it are ignored.
   */
  onFired?: (
    fired: readonly RuleName[],
    hits: Readonly<Partial<Record<RuleName, number>>>,
    info: { method: string },
  ) => void;
}

export type RedactMiddleware = Middleware & {
  /** The compiled redactor, for masking your own values the same way. */
  readonly redactor: Redactor;
};

/** What the outbound transforms of one `redact()` share. */
interface TransformState {
  readonly redactor: Redactor;
  readonly onFired: RedactMiddlewareOptions['onFired'];
}

/** What a traced request's transform binds beside its record: its trace (under `otel()`), and where it is. */
interface TracedScope {
  readonly record: RedactionRecord;
  readonly locals: RequestLocals;
  readonly trace: RequestTrace;
  /** A GET (a session's stream): its messages are notifications, with no answer after them. */
  readonly stream: boolean;
}

/** The event on the request's span that says what redaction did to what the request sent. */
const REDACTION_EVENT = 'mcpware.redaction';

/** The rule names on the event are a fixed vocabulary; the cut is a guard. */
const RULES_ATTRIBUTE_CAP = 128;

function anyHit(tally: RedactTally): boolean {
  for (const r of RULE_NAMES) if (tally.hits[r] > 0) return true;
  return false;
}

/** `mcpware.redaction` on the request's span: how many matches, and which rules (comma-joined, in rule order). */
function traceEvent(trace: RequestTrace, hits: RedactionRecord['hits']): void {
  let count = 0;
  const rules: string[] = [];
  for (const r of RULE_NAMES) {
    const n = hits[r] ?? 0;
    if (n > 0) {
      count += n;
      rules.push(r);
    }
  }
  if (count > 0) trace.event(REDACTION_EVENT, { count, rules: clip(rules.join(','), RULES_ATTRIBUTE_CAP) });
}

/**
 * Under `otel()`, what the request's redaction did goes on its span once, when its answer (a result or a relayed
 * error) passes: the request's totals, notifications sent before the answer included. A stream (a session's GET,
 * `subscriptions/listen`) has no answer: each of its notifications in which a rule fired gets an event of its own.
 */
function traceRedaction(
  scope: TracedScope,
  found: RedactionRecord['hits'] | undefined,
  kind: OutboundKind,
): void {
  const { trace } = scope;
  if (kind !== 'notification') return traceEvent(trace, scope.record.hits);
  if (found !== undefined && (scope.stream || scope.locals.mcp?.method === 'subscriptions/listen')) {
    traceEvent(trace, found);
  }
}

/** The outbound transform: mask (or count) one value and add what fired to the request's record. */
function applyRedaction(
  state: TransformState,
  record: RedactionRecord,
  value: unknown,
  info: { method: string; kind: OutboundKind },
  traced?: TracedScope,
): unknown {
  const redactor = state.redactor;
  const tally = newTally();
  let out: unknown;
  try {
    out = maskOutbound(value, info, redactor, tally);
  } catch (err) {
    // Only a throwing getter on a handler's result can land here. Fail closed in mask mode: the dispatcher
    // answers -32603 and nothing unscanned leaves.
    if (redactor.mode === 'mask')
      throw new Error('redact: the outgoing value could not be scanned', { cause: err });
    out = value;
  }
  record.truncated += tally.truncated;
  // Nothing fired (the usual case): no result view is built.
  let found: ReturnType<typeof redactResultOf> | undefined;
  if (anyHit(tally)) {
    found = redactResultOf(tally);
    for (const r of found.fired) record.hits[r] = (record.hits[r] ?? 0) + found.hits[r]!;
    record.fired = RULE_NAMES.filter((r) => (record.hits[r] ?? 0) > 0);
    try {
      state.onFired?.(found.fired, found.hits, { method: info.method });
    } catch {
      // An observer must not change the answer.
    }
  }
  if (traced !== undefined) traceRedaction(traced, found?.hits, info.kind);
  return redactor.mode === 'mask' ? out : value;
}

/**
 * What `otel()` may capture on a traced request (core/trace.ts `TRACE_REDACTOR`): a value walked whole with the
 * middleware's rules, strings masked, the input never changed. It masks in `warn` mode too: `warn` leaves the
 * answer as it was, but a span is somewhere else the value would go. A value that cannot be walked (a throwing
 * getter) gives undefined: nothing is captured.
 */
function traceRedactorOf(o: RedactMiddlewareOptions, redactor: Redactor): TraceRedactor | undefined {
  if (redactor.mode === 'off') return undefined;
  const masking = redactor.mode === 'mask' ? redactor : redactorOf({ ...o, mode: 'mask' });
  return (value) => {
    try {
      return masking.scanValue ? masking.scanValue(value, newTally()) : masking.value(value).value;
    } catch {
      return undefined;
    }
  };
}

const OPTIONS = ['mode', 'rules', 'maskEmailDomain', 'maxLength', 'maxDepth', 'onFired'] as const;

/** What each redactor option must be, for the message when `compileRedactor` refuses it. */
const EXPECTED: Readonly<Record<string, string>> = {
  mode: 'one of "off", "warn", "mask"',
  rules: `an array of rule names (${RULE_NAMES.join(', ')})`,
  maskEmailDomain: 'a boolean',
  maxLength: 'a positive integer',
  maxDepth: 'a positive integer',
};

/** The compiled redactor of the options; a TypeError naming the option when one is wrong. */
function redactorOf(o: RedactMiddlewareOptions): Redactor {
  let mode: RedactMode | undefined = o.mode;
  // Accept what an operator types (`' Mask '`, `redact`), so an environment variable can be passed through.
  if (typeof mode === 'string') mode = parseRedactMode(mode) ?? mode;
  const compiled = compileRedactor({
    mode: mode ?? 'mask',
    rules: o.rules,
    maskEmailDomain: o.maskEmailDomain,
    maxLength: o.maxLength,
    maxDepth: o.maxDepth,
  });
  if (!compiled.ok) {
    throw badOption('redact', compiled.option, compiled.value, EXPECTED[compiled.option] ?? 'valid');
  }
  return compiled.redactor;
}

/**
 * Mask personal data and secrets (JWTs, PEM keys, e-mail addresses, card numbers, …) in the text of results
 * and notifications before they leave, and record what fired on `req.locals.redaction`. Mount it before
 * `dispatch()`.
 * @param options - {@link RedactMiddlewareOptions}
 * @see docs/middleware/redact.md
 * @example
 * ```ts
 * import { dispatch } from 'mcpware/dispatch';
 * import { redact } from 'mcpware/redact';
 *
 * const serverInfo = { name: 'my-server', version: '1.0.0' };
 * app.use('/mcp', redact({ mode: 'mask' }), dispatch({ anonymous: true, handlers: {}, serverInfo }));
 * ```
 */
export function redact(options?: RedactMiddlewareOptions): RedactMiddleware {
  const o = optionsObject('redact', options);
  knownKeys('redact', o, OPTIONS);
  const onFired = fnOption<NonNullable<RedactMiddlewareOptions['onFired']>>('redact', 'onFired', o.onFired);
  const state: TransformState = { redactor: redactorOf(o), onFired };
  const redactor = state.redactor;
  const active = redactor.mode !== 'off';
  const forTrace = traceRedactorOf(o, redactor);

  const late = mountOrderCheck('redact');
  // Listens to the first requests only: once an answer showed who writes them, nothing is added per request.
  const check = finalHandlerCheck({
    by: 'redact',
    lacks: 'does not apply req.locals.outbound',
    consequence: 'nothing was masked',
    docs: 'docs/middleware/redact.md#in-front-of-another-final-handler',
  });
  function onFinish(this: ServerResponse): void {
    if (this.req) check.finished(this.req, this);
  }
  const mw = function mcpRedact(req, res, next) {
    if (late(req, res)) return next();
    const method = req.method;
    // A GET stream's answer carries messages: it is masked as a POST's answer is. A DELETE carries none.
    if (method === 'DELETE') return next();
    if (method !== 'POST' && method !== 'GET') return notPost(req, res, next, 'redact');
    const locals = localsOf(req);
    const record: RedactionRecord = { mode: redactor.mode, fired: [], hits: {}, truncated: 0 };
    locals.redaction = record;
    if (active) {
      // The dispatcher calls a transform with the value only: the closure binds this request's record (and, under
      // otel(), its trace).
      const trace = locals[TRACE];
      let transform: OutboundTransform;
      if (trace === undefined) transform = (value, info) => applyRedaction(state, record, value, info);
      else {
        locals[TRACE_REDACTOR] = forTrace;
        const traced: TracedScope = { record, locals, trace, stream: method === 'GET' };
        transform = (value, info) => applyRedaction(state, record, value, info, traced);
      }
      (locals.outbound ??= []).push(transform);
      // A stand-in response without events (a direct call in a unit test) is not checked.
      // The check concludes on a POST only.
      if (check.pending && method === 'POST' && typeof res.once === 'function') res.once('finish', onFinish);
    }
    next();
  } as RedactMiddleware;
  Object.defineProperty(mw, 'redactor', { value: redactor, enumerable: true });
  return mw;
}
