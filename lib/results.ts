/**
 * Result encoding and the dispatcher's tables: which methods are cacheable, which server capability gates which
 * method, which methods the modern revision removed, and the HTTP status an error code travels with per era.
 *
 * Pure: no I/O. The dispatcher (middleware/dispatch.ts) writes what these functions return.
 */
import { encodedText } from './encoded.js';
import { type Era, ErrorCode } from './errors.js';
import { foldMethod } from './fold.js';
import { META } from './meta.js';

/**
 * The route of a method: its namespace (before the first `/`, or `""` for a root method) and its folded member
 * (lib/fold.ts): `resources/templates/list` → [`resources`, `templatesList`], `ping` → [``, `ping`].
 */
export function routeOf(method: string): readonly [namespace: string, member: string] {
  return routeOfCached(method).route;
}

interface RouteEntry {
  route: readonly [string, string];
  key: string;
}

/**
 * Routes of the method names seen so far: the dispatcher asks for one method's route several times per request.
 * Bounded (a caller can send any name): past {@link ROUTE_CACHE_SIZE} names, new ones are computed each time.
 */
const ROUTE_CACHE = new Map<string, RouteEntry>();
const ROUTE_CACHE_SIZE = 1024;

function routeOfCached(method: string): RouteEntry {
  const hit = ROUTE_CACHE.get(method);
  if (hit) return hit;
  const slash = method.indexOf('/');
  const ns = slash < 0 ? '' : method.slice(0, slash);
  const member = slash < 0 ? method : foldMethod(method).slice(ns.length + 1);
  const route = Object.freeze([ns, member] as const);
  const entry: RouteEntry = { route, key: `${ns}\u0000${member}` };
  if (ROUTE_CACHE.size < ROUTE_CACHE_SIZE) ROUTE_CACHE.set(method, entry);
  return entry;
}

/**
 * A string naming a route unambiguously (`tools\0list`). The tables below are written with the methods' wire
 * names and compared by route, the key the dispatcher routes on: a spelling that reaches the same handler
 * (`resources/templatesList` for `resources/templates/list`) gets the same rules, and a root method named
 * `tools.list` is not mistaken for `tools/list`.
 */
export function routeKey(method: string): string {
  return routeOfCached(method).key;
}

const routeSet = (methods: readonly string[]): ReadonlySet<string> => new Set(methods.map(routeKey));

/** `ttlMs`/`cacheScope` of a cacheable result (MCP 2026-07-28 `CacheableResult`). */
export interface CacheHint {
  /** Milliseconds the result stays fresh; an integer ≥ 0 (0 = immediately stale). */
  ttlMs: number;
  /** `public`: no caller-specific data, shareable; `private`: same authorization context only. */
  cacheScope: 'public' | 'private';
}

/** What a result is when nothing else was configured: immediately stale, caller-private. */
export const DEFAULT_CACHE_HINT: Readonly<CacheHint> = Object.freeze({ ttlMs: 0, cacheScope: 'private' });

/**
 * True when a method may be routed: no empty segment (`tools/call/`, `tools//call`, `/tools`). Folding drops
 * slashes, so `tools/call/` would otherwise reach the `tools/call` handler while every check keyed on the wire
 * name (`Mcp-Name`, `Mcp-Param-*`, tool filters in front of a gateway) looked the other way.
 */
export function isRoutableMethod(method: string): boolean {
  return method.length > 0 && !method.startsWith('/') && !method.endsWith('/') && !method.includes('//');
}

/** The methods whose complete results carry `ttlMs` and `cacheScope` (`caching.mdx`, `DiscoverResult`). */
export const CACHEABLE_METHODS: readonly string[] = Object.freeze([
  'server/discover',
  'tools/list',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'prompts/list',
]);
const CACHEABLE = routeSet(CACHEABLE_METHODS);

export function isCacheable(method: string): boolean {
  return CACHEABLE.has(routeKey(method));
}

/** The methods that may answer `resultType: "input_required"` (MRTR). */
export const INPUT_REQUIRED_METHODS: readonly string[] = Object.freeze([
  'tools/call',
  'prompts/get',
  'resources/read',
]);
const INPUT_REQUIRED = routeSet(INPUT_REQUIRED_METHODS);

/**
 * Methods the 2026-07-28 revision removed. A modern request for one of them is answered 404 / -32601 whatever
 * handlers are registered; in the legacy era they are served as before.
 */
export const REMOVED_IN_MODERN: readonly string[] = Object.freeze([
  'initialize',
  'ping',
  'logging/setLevel',
  'resources/subscribe',
  'resources/unsubscribe',
]);
const REMOVED = routeSet(REMOVED_IN_MODERN);

export function isRemovedInModern(method: string): boolean {
  return REMOVED.has(routeKey(method));
}

/**
 * The server capability each method needs. A method of an undeclared capability is answered -32601: a declared
 * capability is a promise to answer, an undeclared one is a promise not to. `resources.subscribe` is the
 * `subscribe` flag inside the `resources` capability. Methods not listed here are not gated.
 */
export const METHOD_CAPABILITY: Readonly<Record<string, string>> = Object.freeze({
  'tools/list': 'tools',
  'tools/call': 'tools',
  'resources/list': 'resources',
  'resources/templates/list': 'resources',
  'resources/read': 'resources',
  'resources/subscribe': 'resources.subscribe',
  'resources/unsubscribe': 'resources.subscribe',
  'prompts/list': 'prompts',
  'prompts/get': 'prompts',
  'completion/complete': 'completions',
  'logging/setLevel': 'logging',
});

const CAPABILITY_BY_ROUTE: ReadonlyMap<string, string> = new Map(
  Object.entries(METHOD_CAPABILITY).map(([m, c]) => [routeKey(m), c]),
);

/** The capability gating `method`, or `undefined` when none does. */
export function requiredCapability(method: string): string | undefined {
  return CAPABILITY_BY_ROUTE.get(routeKey(method));
}

const isObj = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

/** True when `capabilities` declares `capability` (`tools`, or a flag path such as `resources.subscribe`). */
export function hasCapability(capabilities: Readonly<Record<string, unknown>>, capability: string): boolean {
  const dot = capability.indexOf('.');
  if (dot < 0) return isObj(capabilities[capability]);
  const outer = capabilities[capability.slice(0, dot)];
  return isObj(outer) && outer[capability.slice(dot + 1)] === true;
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

export interface EncodeInput {
  era: Era;
  method: string;
  /** The cache hint configured for the method (used when the handler set none). */
  cache?: CacheHint | undefined;
  serverInfo: Implementation;
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

/** `"io.modelcontextprotocol/serverInfo"` as JSON text. */
const SERVER_INFO_KEY = JSON.stringify(META.serverInfo);

const hasOwn = (o: object, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k);

function validHint(ttl: unknown, scope: unknown): boolean {
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
  const core = encodeCore(value, input);
  if (!core.ok || input.era === 'legacy') return core;
  const out = core.result;
  const meta = isObj(out._meta) ? out._meta : undefined;
  out._meta = { ...meta, [META.serverInfo]: input.serverInfo };
  return core;
}

/**
 * {@link encodeResult} and the JSON text of its result in one step: `text` is exactly
 * `JSON.stringify(encodeResult(value, input).result)`. With `input.serverInfoJson` (the JSON text of
 * `input.serverInfo`, encoded once by the caller) a modern result whose handler set no `_meta` gets the server's
 * `_meta` spliced in as text instead of being serialized again for every answer. Throws what `JSON.stringify`
 * throws (a BigInt, a cycle).
 */
export function encodeResultText(
  value: unknown,
  input: EncodeInput & { serverInfoJson?: string },
): EncodeTextResult {
  const fast = plainResultText(value, input);
  if (fast !== undefined) return fast;
  const core = encodeCore(value, input);
  if (!core.ok) return core;
  const out = core.result;
  const isError = out.isError === true;
  if (input.era === 'legacy')
    return { ok: true, text: JSON.stringify(out), resultType: core.resultType, isError };
  if (input.serverInfoJson !== undefined && !hasOwn(out, '_meta') && !hasOwn(out, 'toJSON')) {
    // `out` always has `resultType` (and no `toJSON` of its own to replace it), so its text ends with `}` after
    // at least one member.
    const text = JSON.stringify(out);
    return {
      ok: true,
      text: `${text.slice(0, -1)},"_meta":{${SERVER_INFO_KEY}:${input.serverInfoJson}}}`,
      resultType: core.resultType,
      isError,
    };
  }
  const meta = isObj(out._meta) ? out._meta : undefined;
  out._meta = { ...meta, [META.serverInfo]: input.serverInfo };
  return { ok: true, text: JSON.stringify(out), resultType: core.resultType, isError };
}

/**
 * {@link encodeResultText} for the common result, written without copying it: a handler's object with no
 * protocol fields (`resultType`, `ttlMs`, `cacheScope`), no `toJSON`, no array-index keys (which would sort
 * before `resultType` in the copy) and, when modern, no `_meta` and the server info already encoded. Its text is
 * then the handler's own JSON with the protocol members written around it: the same bytes the copy would give.
 * Anything else is `undefined` (the general path decides). An `encodedOnce()` copy (lib/encoded.ts: the tool list
 * of a static registry) is written from the JSON text it carries.
 */
function plainResultText(
  value: unknown,
  input: EncodeInput & { serverInfoJson?: string },
): EncodeTextResult | undefined {
  if (!isObj(value)) return undefined;
  const v = value as Record<string, unknown>;
  if (v.resultType !== undefined || v.ttlMs !== undefined || v.cacheScope !== undefined) return undefined;
  if (v.toJSON !== undefined) return undefined;
  const modern = input.era === 'modern';
  if (modern && (input.serverInfoJson === undefined || '_meta' in v)) return undefined;
  // The configured hint is checked before the result is serialized, so a refused one does not serialize it twice.
  const hint = modern && isCacheable(input.method) ? (input.cache ?? DEFAULT_CACHE_HINT) : undefined;
  if (hint !== undefined && !validHint(hint.ttlMs, hint.cacheScope)) return undefined;
  // A result serialized once for many requests (lib/encoded.ts) is written from its stored text.
  const body = encodedText(v) ?? JSON.stringify(v);
  // Boxed primitives serialize as primitives; a first key that is a digit may be an array index.
  if (body.charCodeAt(0) !== 0x7b /* { */) return undefined;
  const first = body.charCodeAt(2);
  if (first >= 0x30 && first <= 0x39) return undefined;
  // What the copy would have kept: an own enumerable `isError`.
  const isError = v.isError === true && Object.prototype.propertyIsEnumerable.call(v, 'isError');
  if (!modern) return { ok: true, text: body, resultType: 'complete', isError };
  let text = body.length > 2 ? `{"resultType":"complete",${body.slice(1, -1)}` : '{"resultType":"complete"';
  if (hint !== undefined) text += `,"ttlMs":${hint.ttlMs},"cacheScope":"${hint.cacheScope}"`;
  text += `,"_meta":{${SERVER_INFO_KEY}:${input.serverInfoJson}}}`;
  return { ok: true, text, resultType: 'complete', isError };
}

/** The checks and the result of {@link encodeResult}, without the modern `_meta`. */
function encodeCore(value: unknown, input: EncodeInput): EncodeResult {
  if (value === undefined) value = {};
  if (!isObj(value)) {
    return {
      ok: false,
      reason: 'not_an_object',
      message: `${input.method}: the handler returned a non-object result`,
    };
  }
  const { resultType: rt, ttlMs, cacheScope, ...rest } = value;
  let resultType = 'complete';
  if (rt !== undefined && rt !== 'complete') {
    if (rt === 'input_required' && input.era === 'modern' && INPUT_REQUIRED.has(routeKey(input.method))) {
      resultType = rt;
    } else {
      return {
        ok: false,
        reason: 'bad_result_type',
        message: `${input.method}: the handler returned resultType ${JSON.stringify(rt)}, not allowed here`,
      };
    }
  }
  // Legacy: the destructuring above already dropped the protocol fields 2025-11-25 results do not have.
  if (input.era === 'legacy') return { ok: true, result: rest, resultType };
  const out: Record<string, unknown> = { resultType, ...rest };
  if (resultType === 'complete' && isCacheable(input.method)) {
    let hint: CacheHint;
    if (ttlMs !== undefined || cacheScope !== undefined) {
      if (!validHint(ttlMs, cacheScope)) {
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
  return { ok: true, result: out, resultType };
}
