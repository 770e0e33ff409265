/**
 * `redact()`: mask secrets and personal data in what leaves the server.
 *
 * For every POST it registers an outbound transform on `req.locals.outbound`; the dispatcher applies it to each
 * result and notification before encoding. Masked, by method:
 * - `tools/call`: `content[]` text blocks, embedded `resource` blocks' `text`, and `structuredContent` (walked);
 * - `resources/read`: `contents[].text`;
 * - `prompts/get`: `messages[].content` (a block or an array of blocks: text and embedded resource text);
 * - notifications: `notifications/message` `params.data` (walked) and `notifications/progress` `params.message`.
 * Binary blobs, images, audio, names, URIs, `_meta` and object keys are left alone. Other methods pass as is.
 *
 * Modes: `mask` (default) replaces matches; `warn` counts them and changes nothing; `off` does nothing. The
 * rules that fired are recorded on `req.locals.redaction` for audit and metrics. It refuses nothing.
 * Non-POST requests pass through.
 */
import {
  type RedactMode,
  type RedactOptions,
  type RedactTally,
  type Redactor,
  type RuleName,
  RULE_NAMES,
  compileRedactor,
  newTally,
  parseRedactMode,
} from '../../lib/redact/index.js';
import { localsOf } from '../internal/respond.js';
import { badOption } from '../internal/options.js';
import type { Middleware, OutboundTransform, RedactionRecord } from '../types.js';

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

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Set one key on a copy-on-write copy. */
function withKey(o: Obj, k: string, v: unknown): Obj {
  const copy = { ...o };
  Object.defineProperty(copy, k, { value: v, enumerable: true, writable: true, configurable: true });
  return copy;
}

const hasOwn = (o: Obj, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k);

// The redactor's result-less entry points when it has them (compileRedactor's always do): no result object per
// string. A hand-written Redactor may lack them.
const scanText = (r: Redactor, s: string, t: RedactTally): string =>
  r.scanText ? r.scanText(s, t) : r.text(s, t).text;
const scanValue = (r: Redactor, v: unknown, t: RedactTally): unknown =>
  r.scanValue ? r.scanValue(v, t) : r.value(v, t).value;

// The walk below is written as plain functions taking the redactor and the tally, not as callbacks built per
// value: it runs for every result and notification, and most of them have nothing to mask. Everything is
// copy-on-write: an object or array is copied only when something in it changed, so a clean value comes back
// as the very same object.

/** Mask a content block (text, or an embedded resource's text). */
function maskBlock(b: unknown, r: Redactor, t: RedactTally): unknown {
  if (!isObj(b)) return b;
  if (b.type === 'text') {
    const s = b.text;
    if (typeof s !== 'string') return b;
    const x = scanText(r, s, t);
    return x === s ? b : withKey(b, 'text', x);
  }
  if (b.type === 'resource') {
    const res = b.resource;
    if (!isObj(res)) return b;
    const s = res.text;
    if (typeof s !== 'string') return b;
    const x = scanText(r, s, t);
    return x === s ? b : withKey(b, 'resource', withKey(res, 'text', x));
  }
  return b;
}

/** Mask an array of content blocks; anything else is returned as is. */
function maskBlocks(a: unknown, r: Redactor, t: RedactTally): unknown {
  if (!Array.isArray(a)) return a;
  let copy: unknown[] | undefined;
  for (let i = 0; i < a.length; i++) {
    const x: unknown = a[i];
    const y = maskBlock(x, r, t);
    if (y !== x) {
      copy ??= a.slice();
      copy[i] = y;
    }
  }
  return copy ?? a;
}

/** `resources/read` contents: each entry's `text` (an own string property). */
function maskContents(a: unknown, r: Redactor, t: RedactTally): unknown {
  if (!Array.isArray(a)) return a;
  let copy: unknown[] | undefined;
  for (let i = 0; i < a.length; i++) {
    const c: unknown = a[i];
    if (!isObj(c)) continue;
    const s = c.text;
    if (typeof s !== 'string' || !hasOwn(c, 'text')) continue;
    const x = scanText(r, s, t);
    if (x !== s) {
      copy ??= a.slice();
      copy[i] = withKey(c, 'text', x);
    }
  }
  return copy ?? a;
}

/** `prompts/get` messages: each message's `content`, a block or an array of blocks (an own property). */
function maskMessages(a: unknown, r: Redactor, t: RedactTally): unknown {
  if (!Array.isArray(a)) return a;
  let copy: unknown[] | undefined;
  for (let i = 0; i < a.length; i++) {
    const m: unknown = a[i];
    if (!isObj(m) || !hasOwn(m, 'content')) continue;
    const c = m.content;
    const y = Array.isArray(c) ? maskBlocks(c, r, t) : maskBlock(c, r, t);
    if (y !== c) {
      copy ??= a.slice();
      copy[i] = withKey(m, 'content', y);
    }
  }
  return copy ?? a;
}

/**
 * Mask one outgoing value for `method`. Pure apart from the tally; exported for tests and for applications
 * that encode results themselves.
 */
export function maskOutbound(
  value: unknown,
  info: { method: string; kind: 'result' | 'notification' },
  r: Redactor,
  t: RedactTally,
): unknown {
  if (!isObj(value)) return value;
  if (info.kind === 'notification') {
    // The dispatcher may pass the whole message ({method, params}) or just its params: accept both, by shape.
    if (typeof value.method === 'string') {
      const p = value.params;
      if (isObj(p)) {
        if (!hasOwn(value, 'params')) return value;
        const y = maskNotificationParams(p, r, t);
        return y === p ? value : withKey(value, 'params', y);
      }
    }
    return maskNotificationParams(value, r, t);
  }
  let v = value;
  switch (info.method) {
    case 'tools/call': {
      if (hasOwn(v, 'content')) {
        const x = v.content;
        const y = maskBlocks(x, r, t);
        if (y !== x) v = withKey(v, 'content', y);
      }
      if (hasOwn(v, 'structuredContent')) {
        const x = v.structuredContent;
        const y = scanValue(r, x, t);
        if (y !== x) v = withKey(v, 'structuredContent', y);
      }
      return v;
    }
    case 'resources/read':
      if (hasOwn(v, 'contents')) {
        const x = v.contents;
        const y = maskContents(x, r, t);
        if (y !== x) v = withKey(v, 'contents', y);
      }
      return v;
    case 'prompts/get':
      if (hasOwn(v, 'messages')) {
        const x = v.messages;
        const y = maskMessages(x, r, t);
        if (y !== x) v = withKey(v, 'messages', y);
      }
      return v;
    default:
      return value;
  }
}

function maskNotificationParams(p: Obj, r: Redactor, t: RedactTally): Obj {
  // notifications/message: {level, logger?, data}; notifications/progress: {progressToken, progress, message?}.
  let out = p;
  if ('level' in p && 'data' in p && hasOwn(out, 'data')) {
    const x = out.data;
    const y = scanValue(r, x, t);
    if (y !== x) out = withKey(out, 'data', y);
  }
  if ('progressToken' in p && typeof p.message === 'string' && hasOwn(out, 'message')) {
    const x = out.message;
    const y = scanText(r, x as string, t);
    if (y !== x) out = withKey(out, 'message', y);
  }
  return out;
}

/** What the outbound transforms of one `redact()` share. */
interface TransformState {
  readonly redactor: Redactor;
  readonly onFired: RedactMiddlewareOptions['onFired'];
}

/** The outbound transform: mask (or count) one value and add what fired to the request's record. */
function applyRedaction(
  state: TransformState,
  record: RedactionRecord,
  value: unknown,
  info: { method: string; kind: 'result' | 'notification' },
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
  let any = false;
  for (const r of RULE_NAMES) {
    const n = tally.hits[r];
    if (n > 0) {
      any = true;
      record.hits[r] = (record.hits[r] ?? 0) + n;
    }
  }
  record.truncated += tally.truncated;
  if (any) {
    record.fired = RULE_NAMES.filter((r) => (record.hits[r] ?? 0) > 0);
    const onFired = state.onFired;
    if (onFired) {
      try {
        const hits: Partial<Record<RuleName, number>> = {};
        for (const r of RULE_NAMES) if (tally.hits[r] > 0) hits[r] = tally.hits[r];
        onFired(
          RULE_NAMES.filter((r) => tally.hits[r] > 0),
          hits,
          { method: info.method },
        );
      } catch {
        // An observer must not change the answer.
      }
    }
  }
  return redactor.mode === 'mask' ? out : value;
}

const OPTION_NAMES = new Set(['mode', 'rules', 'maskEmailDomain', 'maxLength', 'maxDepth', 'onFired']);

export function redact(options: RedactMiddlewareOptions = {}): RedactMiddleware {
  if (options === null || typeof options !== 'object')
    throw new TypeError('redact: options must be an object');
  for (const k of Object.keys(options)) {
    if (!OPTION_NAMES.has(k))
      throw new TypeError(`redact: unknown option "${k}" (known: ${[...OPTION_NAMES].join(', ')})`);
  }
  let mode: RedactMode | undefined = options.mode;
  // Accept what an operator types (`' Mask '`, `redact`), so an environment variable can be passed through.
  if (typeof mode === 'string') mode = parseRedactMode(mode) ?? mode;
  const compiled = compileRedactor({ ...options, mode: mode ?? 'mask' });
  if (!compiled.ok) {
    const expected: Record<string, string> = {
      mode: 'one of "off", "warn", "mask"',
      rules: `an array of rule names (${RULE_NAMES.join(', ')})`,
      maskEmailDomain: 'a boolean',
      maxLength: 'a positive integer',
      maxDepth: 'a positive integer',
    };
    throw badOption('redact', compiled.option, compiled.value, expected[compiled.option] ?? 'valid');
  }
  const onFired = options.onFired;
  if (onFired !== undefined && typeof onFired !== 'function')
    throw badOption('redact', 'onFired', onFired, 'a function');
  const state: TransformState = { redactor: compiled.redactor, onFired };
  const redactor = state.redactor;
  const active = redactor.mode !== 'off';

  const mw = function mcpRedact(req, _res, next) {
    if (req.method !== 'POST') return next();
    const locals = localsOf(req);
    const record: RedactionRecord = { mode: redactor.mode, fired: [], hits: {}, truncated: 0 };
    locals.redaction = record;
    if (active) {
      // One small closure per request remains: the dispatcher calls a transform with the value only, so the
      // request's record has to be bound here. All the work is in the shared function.
      const transform: OutboundTransform = (value, info) => applyRedaction(state, record, value, info);
      (locals.outbound ??= []).push(transform);
    }
    next();
  } as RedactMiddleware;
  Object.defineProperty(mw, 'redactor', { value: redactor, enumerable: true });
  return mw;
}
