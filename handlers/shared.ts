/**
 * Shared pieces of the resources, prompts and completion handler objects: paging into `McpError`, option checks,
 * clipping caller-supplied values, and the symbol under which a handler object exposes its internals to the
 * completion handler (a symbol, so no JSON-RPC method name can ever reach it through the dispatcher's folding).
 */
import { ErrorCode, McpError } from '../lib/errors.js';
import { type Page, paginate } from '../lib/cursor.js';
import { isValidCacheHint } from '../lib/encode.js';
import { isJsonObject } from '../lib/json.js';
import type { JsonObject } from '../lib/jsonrpc.js';
import { type ChangeFeed, isChangeFeed } from './changes/index.js';
import type { CacheHint, CallContext } from '../core/contract.js';
import { badOption } from '../core/options.js';

/** MCP `Annotations` of a resource or a content block: who it is for, how important, when it last changed. */
export interface ContentAnnotations {
  audience?: ('user' | 'assistant')[];
  priority?: number;
  lastModified?: string;
}

/** MCP `Icon`: an image a client may show next to a resource, prompt or tool. */
export interface Icon {
  src: string;
  mimeType?: string;
  sizes?: string[];
  theme?: 'light' | 'dark';
}

/** Where a resources/prompts handler object keeps what `completion()` needs. */
export const COMPLETER = Symbol.for('mcpware.completer');

/** What `completion()` asks of a handler object. */
export interface Completer {
  /** Suggestions for `argument` of `ref`, or `undefined` when `ref` names nothing this object serves. */
  complete(
    ref: JsonObject,
    argument: string,
    value: string,
    context: Readonly<Record<string, string>>,
    ctx: CallContext,
  ): Promise<readonly string[] | undefined>;
}

/** The page of a list, or throws -32602 for a bad cursor. `what` names the list in the message. */
export function pageOrThrow<T>(
  what: string,
  items: readonly T[],
  key: (item: T) => string,
  params: JsonObject,
  pageSize: number,
): Page<T> {
  const p = paginate(items, key, params.cursor, pageSize, what);
  if (!p.ok) throw new McpError(ErrorCode.InvalidParams, `${what}/list: ${p.message}`, { reason: p.reason });
  return p;
}

/** Validate `pageSize`: a non-negative safe integer; 0 (the default) turns paging off. */
export function checkPageSize(factory: string, option: string, v: unknown): number {
  if (v === undefined) return 0;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) {
    throw badOption(factory, option, v, 'a non-negative integer (0 turns paging off)');
  }
  return v;
}

/**
 * Validate a cache hint: `{ttlMs: integer ≥ 0, cacheScope: 'public' | 'private'}`. `perCaller`: the answer is
 * filtered per caller (a `visible` hook), so only a private scope is allowed.
 */
export function checkCache(factory: string, v: unknown, perCaller = false): CacheHint | undefined {
  if (v === undefined) return undefined;
  const o = v as CacheHint;
  if (!isJsonObject(v) || !isValidCacheHint(v.ttlMs, v.cacheScope)) {
    throw badOption(factory, 'cache', v, "{ ttlMs: integer ≥ 0, cacheScope: 'public' | 'private' }");
  }
  // A list a `visible` hook filters per caller must not be shared through a public cache.
  if (perCaller && o.cacheScope === 'public') {
    throw badOption(factory, 'cache', v, "cacheScope 'private' when a visible hook filters per caller");
  }
  return { ttlMs: o.ttlMs, cacheScope: o.cacheScope };
}

/** The `changes` option of a handler: a ChangeFeed, or nothing. */
export function checkChanges(factory: string, v: unknown): ChangeFeed | undefined {
  if (v === undefined || isChangeFeed(v)) return v;
  throw badOption(factory, 'changes', v, 'a ChangeFeed');
}

/**
 * Validate the sources option: an array of objects with the named methods. Returns a copy so later changes
 * to the caller's array do not change the served set.
 */
export function checkSources<S>(factory: string, v: unknown, methods: readonly string[]): S[] {
  if (v === undefined) return [];
  if (!Array.isArray(v)) throw badOption(factory, 'sources', v, 'an array of sources');
  v.forEach((s: unknown, i) => {
    const ok =
      s !== null &&
      typeof s === 'object' &&
      methods.every((m) => typeof (s as Record<string, unknown>)[m] === 'function');
    if (!ok)
      throw badOption(
        factory,
        `sources[${i}]`,
        s,
        `an object with ${methods.map((m) => m + '()').join(' and ')}`,
      );
  });
  return [...(v as S[])];
}

/** Attach the cache hint to a cacheable result body when one was configured. */
export function withCache<T extends object>(body: T, cache: CacheHint | undefined): T {
  return cache ? Object.assign(body, { ttlMs: cache.ttlMs, cacheScope: cache.cacheScope }) : body;
}

/** Copy the listed optional fields of `src` onto `dst` when they are present. */
export function copyOptional(dst: Record<string, unknown>, src: object, fields: readonly string[]): void {
  const s = src as Record<string, unknown>;
  for (const f of fields) if (s[f] !== undefined) dst[f] = s[f];
}
