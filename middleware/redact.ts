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
} from '../lib/redact.js';
import { badOption, localsOf } from './respond.js';
import type { Middleware, OutboundTransform, RedactionRecord } from './types.js';

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

/** Mask a content block (text, or an embedded resource's text). */
function maskBlock(b: unknown, r: Redactor, t: RedactTally): unknown {
  if (!isObj(b)) return b;
  if (b.type === 'text' && typeof b.text === 'string') {
    const x = r.text(b.text, t).text;
    return x === b.text ? b : withKey(b, 'text', x);
  }
  if (b.type === 'resource' && isObj(b.resource) && typeof b.resource.text === 'string') {
    const x = r.text(b.resource.text, t).text;
    return x === b.resource.text ? b : withKey(b, 'resource', withKey(b.resource, 'text', x));
  }
  return b;
}

/** Map an array copy-on-write. */
function mapArray(a: unknown[], f: (x: unknown) => unknown): unknown[] {
  let copy: unknown[] | undefined;
  for (let i = 0; i < a.length; i++) {
    const y = f(a[i]);
    if (y !== a[i]) {
      copy ??= a.slice();
      copy[i] = y;
    }
  }
  return copy ?? a;
}

/** Replace `o[k]` by `f(o[k])` copy-on-write (only when `k` is an own key). */
function mapKey(o: Obj, k: string, f: (x: unknown) => unknown): Obj {
  if (!Object.prototype.hasOwnProperty.call(o, k)) return o;
  const x = o[k];
  const y = f(x);
  return y === x ? o : withKey(o, k, y);
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
    if (typeof value.method === 'string' && isObj(value.params)) {
      return mapKey(value, 'params', (p) => maskNotificationParams(p as Obj, r, t));
    }
    return maskNotificationParams(value, r, t);
  }
  const blocks = (x: unknown): unknown => (Array.isArray(x) ? mapArray(x, (b) => maskBlock(b, r, t)) : x);
  switch (info.method) {
    case 'tools/call': {
      const v = mapKey(value, 'content', blocks);
      return mapKey(v, 'structuredContent', (x) => r.value(x, t).value);
    }
    case 'resources/read':
      return mapKey(value, 'contents', (x) =>
        Array.isArray(x)
          ? mapArray(x, (c) =>
              isObj(c) && typeof c.text === 'string'
                ? mapKey(c, 'text', (s) => r.text(s as string, t).text)
                : c,
            )
          : x,
      );
    case 'prompts/get':
      return mapKey(value, 'messages', (x) =>
        Array.isArray(x)
          ? mapArray(x, (m) =>
              isObj(m) ? mapKey(m, 'content', (c) => (Array.isArray(c) ? blocks(c) : maskBlock(c, r, t))) : m,
            )
          : x,
      );
    default:
      return value;
  }
}

function maskNotificationParams(p: Obj, r: Redactor, t: RedactTally): Obj {
  // notifications/message: {level, logger?, data}; notifications/progress: {progressToken, progress, message?}.
  let out = p;
  if ('level' in p && 'data' in p) out = mapKey(out, 'data', (d) => r.value(d, t).value);
  if ('progressToken' in p && typeof p.message === 'string')
    out = mapKey(out, 'message', (m) => r.text(m as string, t).text);
  return out;
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
  const redactor = compiled.redactor;
  const active = redactor.mode !== 'off';

  const mw = function mcpRedact(req, _res, next) {
    if (req.method !== 'POST') return next();
    const locals = localsOf(req);
    const record: RedactionRecord = { mode: redactor.mode, fired: [], hits: {}, truncated: 0 };
    locals.redaction = record;
    if (active) {
      const transform: OutboundTransform = (value, info) => {
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
      };
      (locals.outbound ??= []).push(transform);
    }
    next();
  } as RedactMiddleware;
  Object.defineProperty(mw, 'redactor', { value: redactor, enumerable: true });
  return mw;
}
