/**
 * Encoding answers for the wire: a handler's result per era (`resultType`, cache hints, the server's `_meta`), the
 * code an error is sent with and the HTTP status it travels with. Pure: no I/O; the dispatcher writes what these
 * functions return.
 *
 * @see docs/middleware/dispatch.md
 */
import { type Era, ErrorCode } from './errors.js';
import { META } from './meta.js';
import { INPUT_REQUIRED_METHODS, isCacheableRoute, routeKey } from './routing.js';
import { isJsonObject } from './json.js';

/** `ttlMs`/`cacheScope` of a cacheable result (MCP 2026-07-28 `CacheableResult`). */
export interface CacheHint {
  /** Milliseconds the result stays fresh; an integer ≥ 0 (0 = immediately stale). */
  ttlMs: number;
  /** `public`: no caller-specific data, shareable; `private`: same authorization context only. */
  cacheScope: 'public' | 'private';
}

/** What a result is when nothing else was configured: immediately stale, caller-private. */
export const DEFAULT_CACHE_HINT: Readonly<CacheHint> = Object.freeze({ ttlMs: 0, cacheScope: 'private' });

/** `Implementation`: who the server is. */
export interface Implementation {
  name: string;
  version: string;
  title?: string;
  description?: string;
  websiteUrl?: string;
  icons?: unknown[];
  [key: string]: unknown;
}

/**
 * The HTTP status an error code travels with.
 * - -32601: 404 in the modern era (MUST), 200 in the legacy era (a legacy answer never looks modern).
 * - -32700, -32600 and the MCP header/capability/version codes (-32020, -32021, -32022): 400.
 * - The application codes 401, 403, 429 and 503: that status.
 * - Everything else (-32602 unknown tool/cursor/resource, -32603, application codes): 200, in-band, as the
 *   reference SDK does; the spec leaves handler errors' status open.
 */
export function statusForCode(code: number, era: Era): number {
  switch (code) {
    case ErrorCode.MethodNotFound:
      return era === 'modern' ? 404 : 200;
    case ErrorCode.ParseError:
    case ErrorCode.InvalidRequest:
    case ErrorCode.HeaderMismatch:
    case ErrorCode.MissingRequiredClientCapability:
    case ErrorCode.UnsupportedProtocolVersion:
      return 400;
    case ErrorCode.Unauthorized:
    case ErrorCode.Forbidden:
    case ErrorCode.RateLimited:
    case ErrorCode.Unavailable:
      return code;
    default:
      return 200;
  }
}

/** The MCP-reserved code range: only the codes the spec defines may be emitted from it. */
const DEFINED_RESERVED = new Set<number>([
  ErrorCode.HeaderMismatch,
  ErrorCode.MissingRequiredClientCapability,
  ErrorCode.UnsupportedProtocolVersion,
]);
/** The old resource-not-found code (2025-11-25). */
export const LEGACY_RESOURCE_NOT_FOUND = -32002;

/**
 * The code actually sent for a handler's error code in an era. Modern answers must not carry `-32002` (mapped to
 * -32602, its 2026 replacement), `-32042`, or any undefined code in `-32020..-32099` (mapped to -32603). Legacy
 * answers keep `-32002` and `-32042`, which 2025-11-25 defines; undefined reserved codes become -32603 there too.
 */
export function sendableCode(code: number, era: Era): number {
  if (!Number.isInteger(code)) return ErrorCode.InternalError;
  if (code === LEGACY_RESOURCE_NOT_FOUND) return era === 'modern' ? ErrorCode.InvalidParams : code;
  if (code === -32042) return era === 'modern' ? ErrorCode.InternalError : code;
  if (code <= -32020 && code >= -32099 && !DEFINED_RESERVED.has(code)) return ErrorCode.InternalError;
  return code;
}

export interface EncodeInput {
  era: Era;
  method: string;
  /** The method's `routeKey`, when the caller has worked it out already. */
  routeKey?: string | undefined;
  /** The cache hint configured for the method (used when the handler set none). */
  cache?: CacheHint | undefined;
  serverInfo: Implementation;
  /**
   * The result is a task's (modern only): a `CreateTaskResult` (`resultType: "task"`, allowed only then) or the
   * task `tasks/get` answers; its `ttlMs` is the task's own, kept as it is.
   */
  task?: boolean;
}

/** Why a handler's result cannot be sent: a server bug, answered as an internal error. */
export interface EncodeFailure {
  ok: false;
  reason: 'not_an_object' | 'bad_result_type' | 'bad_cache_hint';
  message: string;
}

export type EncodeResult = { ok: true; result: Record<string, unknown>; resultType: string } | EncodeFailure;

/** {@link encodeResultText}'s answer: the result's JSON text, its `resultType`, and whether it is a tool error. */
export type EncodeTextResult =
  { ok: true; text: string; resultType: string; isError: boolean } | EncodeFailure;

const INPUT_REQUIRED = new Set(INPUT_REQUIRED_METHODS.map(routeKey));

/** The rule for a cache hint, wherever one is given: `ttlMs` an integer ≥ 0 and `cacheScope` public or private. */
export function isValidCacheHint(ttl: unknown, scope: unknown): boolean {
  return (
    typeof ttl === 'number' &&
    Number.isSafeInteger(ttl) &&
    ttl >= 0 &&
    (scope === 'public' || scope === 'private')
  );
}

/**
 * Encode a handler's result for the wire.
 *
 * Modern: `{resultType: "complete", ...result, ttlMs, cacheScope, _meta: {...result._meta, serverInfo}}`.
 * - `resultType` is written here, never by handlers; a handler may return `"input_required"` (MRTR) on the three
 *   methods that allow it, which then carries no cache hint. Any other value is a server bug.
 * - Cacheable methods carry the handler's own `ttlMs`/`cacheScope` when it set a valid pair (per-resource
 *   hints), else the configured hint, else `{ttlMs: 0, cacheScope: "private"}`. A half or invalid pair from a
 *   handler is a server bug (never silently sent).
 * - `_meta["io.modelcontextprotocol/serverInfo"]` is always the server's own (a handler cannot forge it).
 *
 * Legacy: the result as the handler returned it, minus `resultType`, `ttlMs` and `cacheScope` (2025-11-25
 * results have none of them). `undefined` is the empty result `{}` in both eras.
 */
export function encodeResult(value: unknown, input: EncodeInput): EncodeResult {
  if (value === undefined) value = {};
  if (!isJsonObject(value)) {
    return {
      ok: false,
      reason: 'not_an_object',
      message: `${input.method}: the handler returned a non-object result`,
    };
  }
  const { resultType: rt, ttlMs, cacheScope } = value;
  if (input.task === true && input.era === 'modern' && (rt === 'task' || rt === undefined)) {
    const { resultType: _rt, ...task } = value;
    return modernResult(task, rt === 'task' ? 'task' : 'complete', undefined, undefined, input);
  }
  let resultType = 'complete';
  if (rt !== undefined && rt !== 'complete') {
    if (
      rt === 'input_required' &&
      input.era === 'modern' &&
      INPUT_REQUIRED.has(input.routeKey ?? routeKey(input.method))
    ) {
      resultType = rt;
    } else {
      return {
        ok: false,
        reason: 'bad_result_type',
        message: `${input.method}: the handler returned resultType ${JSON.stringify(rt)}, not allowed here`,
      };
    }
  }
  // A plain object without the protocol fields is used as it is (legacy) or copied once behind `resultType`;
  // anything else is copied member by member, so no prototype (a `toJSON`, say) goes with it.
  const bare =
    rt === undefined &&
    ttlMs === undefined &&
    cacheScope === undefined &&
    Object.getPrototypeOf(value) === Object.prototype;
  if (input.era === 'legacy')
    return { ok: true, result: bare ? value : withoutProtocolFields(value), resultType };
  if (bare && carriedText(value) !== undefined)
    return { ok: true, result: sharedResult(value, input), resultType };
  return modernResult(bare ? value : withoutProtocolFields(value), resultType, ttlMs, cacheScope, input);
}

/** The modern result: `resultType` first, the cache hint of a cacheable method, the server's `_meta` last. */
function modernResult(
  value: Record<string, unknown>,
  resultType: string,
  ttlMs: unknown,
  cacheScope: unknown,
  input: EncodeInput,
): EncodeResult {
  const out: Record<string, unknown> = { resultType, ...value };
  if (resultType === 'complete' && isCacheableRoute(input.routeKey ?? routeKey(input.method))) {
    let hint: CacheHint;
    if (ttlMs !== undefined || cacheScope !== undefined) {
      if (!isValidCacheHint(ttlMs, cacheScope)) {
        return {
          ok: false,
          reason: 'bad_cache_hint',
          message: `${input.method}: the handler returned an invalid cache hint (ttlMs must be an integer ≥ 0 and cacheScope "public" or "private", both set)`,
        };
      }
      hint = { ttlMs: ttlMs as number, cacheScope: cacheScope as CacheHint['cacheScope'] };
    } else hint = input.cache ?? DEFAULT_CACHE_HINT;
    out.ttlMs = hint.ttlMs;
    out.cacheScope = hint.cacheScope;
  }
  const meta = isJsonObject(out._meta) ? out._meta : undefined;
  out._meta =
    meta === undefined ? serverMeta(input.serverInfo) : { ...meta, [META.serverInfo]: input.serverInfo };
  return { ok: true, result: out, resultType };
}

/** The `_meta` of results without their own, per frozen server info (see {@link serverMeta}). */
const SERVER_META = new WeakMap<object, Record<string, unknown>>();

/**
 * `{ [serverInfo key]: serverInfo }`, the `_meta` of a modern result that has none of its own. For a frozen
 * `serverInfo` (as `dispatch()` keeps it) it is made once, a frozen copy carrying its JSON text (see
 * {@link encodedOnce}), and shared by every answer; an unfrozen one gets a new object each time.
 */
// see docs/performance.md#the-static-toolslist
function serverMeta(serverInfo: Implementation): Record<string, unknown> {
  if (!Object.isFrozen(serverInfo)) return { [META.serverInfo]: serverInfo };
  let m = SERVER_META.get(serverInfo);
  if (m === undefined) {
    m = encodedOnce({ [META.serverInfo]: serverInfo });
    SERVER_META.set(serverInfo, m);
  }
  return m;
}

/** The modern result of an {@link encodedOnce} value, and what it was made for. */
interface Shared {
  key: string;
  cache: CacheHint | undefined;
  serverInfo: Implementation;
  result: Record<string, unknown>;
}

/**
 * The shared results of each {@link encodedOnce} value, held no longer than the value: a few per value, so that
 * dispatchers sharing one registry (each with its own server info, say) do not take turns remaking them.
 */
const SHARED = new WeakMap<object, Shared[]>();
const SHARED_PER_VALUE = 4;

/**
 * The modern result of an {@link encodedOnce} value (one without protocol fields): what {@link modernResult}
 * makes of it, itself made with {@link encodedOnce} at the first answer and then shared by every answer that
 * returns the same value for the same method, configured hint and server info.
 */
// see docs/performance.md#the-static-toolslist
function sharedResult(value: Record<string, unknown>, input: EncodeInput): Record<string, unknown> {
  const key = input.routeKey ?? routeKey(input.method);
  let made = SHARED.get(value);
  if (made === undefined) SHARED.set(value, (made = []));
  for (const s of made)
    if (s.key === key && s.cache === input.cache && s.serverInfo === input.serverInfo) return s.result;
  // Without a hint of the handler's own, the result cannot be refused.
  const out = modernResult(value, 'complete', undefined, undefined, input) as {
    result: Record<string, unknown>;
  };
  const result = encodedOnce(out.result);
  if (made.length === SHARED_PER_VALUE) made.shift();
  made.push({ key, cache: input.cache, serverInfo: input.serverInfo, result });
  return result;
}

/** `value` without `resultType`, `ttlMs` and `cacheScope`, which 2025-11-25 results do not have. */
function withoutProtocolFields(value: Record<string, unknown>): Record<string, unknown> {
  const { resultType: _rt, ttlMs: _ttl, cacheScope: _scope, ...rest } = value;
  return rest;
}

/**
 * {@link encodeResult} and the JSON text of its result: `text` is `JSON.stringify(encodeResult(value,
 * input).result)`. Throws what `JSON.stringify` throws (a BigInt, a cycle).
 */
export function encodeResultText(value: unknown, input: EncodeInput): EncodeTextResult {
  const encoded = encodeResult(value, input);
  if (!encoded.ok) return encoded;
  const { result, resultType } = encoded;
  return { ok: true, text: JSON.stringify(result), resultType, isError: result.isError === true };
}

/** Freeze an object graph of plain data (objects reached through own enumerable string keys). */
export function deepFreeze<T>(v: T): T {
  const stack: unknown[] = [v];
  while (stack.length > 0) {
    const x = stack.pop();
    if (x !== null && typeof x === 'object' && !Object.isFrozen(x)) {
      Object.freeze(x);
      for (const k of Object.keys(x)) stack.push((x as Record<string, unknown>)[k]);
    }
  }
  return v;
}

/** The JSON text an {@link encodedOnce} value carries: under a symbol key, which JSON.stringify skips. */
const CARRIED_TEXT: unique symbol = Symbol('mcpware.carriedText');

type Carrier = { readonly [CARRIED_TEXT]?: string };

/**
 * A value shared by many answers (the tool list of a registry whose tools are all static, the server's `_meta`),
 * made once: a deep-frozen plain-data copy of `value`, its JSON parsed back, so it holds only plain objects,
 * arrays and JSON primitives (no getter, `toJSON` or prototype of the original survives) and nothing can change
 * it afterwards. The copy carries its own JSON text, which {@link responseText} writes instead of serializing it
 * again: a parsed object keeps the member order of its text, so serializing the copy would give that text. A
 * spread copy (redaction's copy-on-write, a handler's `{...result}`) does not carry it. Internal: not part of
 * `mcpware/lib`. Throws a TypeError when the value does not serialize to a JSON object, and whatever
 * `JSON.stringify` throws (a BigInt, a cycle).
 */
// see docs/performance.md#the-static-toolslist
export function encodedOnce<T extends object>(value: T): T {
  const text = JSON.stringify(value) as string | undefined;
  if (text === undefined || !text.startsWith('{')) {
    throw new TypeError('encodedOnce: the value must serialize to a JSON object');
  }
  const copy = JSON.parse(text) as T;
  Object.defineProperty(copy, CARRIED_TEXT, { value: text });
  return deepFreeze(copy);
}

/** The text an {@link encodedOnce} value carries itself (not through its prototype), or `undefined`. */
const carriedText = (v: unknown): string | undefined =>
  v !== null && typeof v === 'object' && Object.hasOwn(v, CARRIED_TEXT)
    ? (v as Carrier)[CARRIED_TEXT]
    : undefined;

const hasToJson = (v: unknown): boolean =>
  v !== null && typeof v === 'object' && typeof (v as { toJSON?: unknown }).toJSON === 'function';

/**
 * The text of a JSON-RPC response: exactly `JSON.stringify({ jsonrpc: '2.0', id, result })`, the JSON-RPC
 * members written around the result's own text. A `result` made by {@link encodedOnce} is written from the
 * text it carries, and so is a `_meta` made by it (the server's, see {@link serverMeta}); any other result is
 * serialized on its own. Throws what `JSON.stringify` throws (a BigInt, a cycle).
 */
// see docs/performance.md#the-static-toolslist
export function responseText(id: string | number | undefined, result: Record<string, unknown>): string {
  // A `toJSON` is called with the key it is serialized under: only the whole response gives it the right one.
  if (hasToJson(result)) return JSON.stringify({ jsonrpc: '2.0', id, result });
  const head =
    id === undefined ? '{"jsonrpc":"2.0","result":' : `{"jsonrpc":"2.0","id":${idText(id)},"result":`;
  const whole = carriedText(result);
  if (whole !== undefined) return `${head}${whole}}`;
  if (carriedText(result._meta) === undefined) {
    const text = JSON.stringify(result) as string | undefined;
    return text === undefined ? JSON.stringify({ jsonrpc: '2.0', id, result }) : `${head}${text}}`;
  }
  const keys = Object.keys(result);
  for (const k of keys) if (hasToJson(result[k])) return JSON.stringify({ jsonrpc: '2.0', id, result });
  // Joined, not added up: the answer is one flat string rather than a tree of concatenations.
  const parts: string[] = [`${head}{`];
  for (const k of keys) {
    const t = valueText(result[k]);
    if (t === undefined) continue;
    parts.push(parts.length === 1 ? `${quoted(k)}:${t}` : `,${quoted(k)}:${t}`);
  }
  parts.push('}}');
  return parts.join('');
}

const idText = (id: string | number): string =>
  typeof id === 'number' ? numberText(id) : JSON.stringify(id);

/**
 * A member's value as JSON.stringify writes it in an object: a carried text as it is, a string through
 * {@link quoted}, a number or a literal directly, anything else through JSON.stringify. `undefined` for a value
 * the object leaves out (`undefined`, a function, a symbol).
 */
function valueText(v: unknown): string | undefined {
  switch (typeof v) {
    case 'string':
      return quoted(v);
    case 'number':
      return numberText(v);
    case 'boolean':
      return v ? 'true' : 'false';
    case 'object':
      return v === null ? 'null' : (carriedText(v) ?? JSON.stringify(v));
    default:
      return JSON.stringify(v) as string | undefined;
  }
}

const numberText = (n: number): string => (Number.isFinite(n) ? String(n) : 'null');

/**
 * A string as JSON writes it: one of printable ASCII without `"` or `\` between quotes as it is, any other
 * through JSON.stringify.
 */
function quoted(k: string): string {
  for (let i = 0; i < k.length; i++) {
    const c = k.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) return JSON.stringify(k);
  }
  return `"${k}"`;
}
