/**
 * The types of the resources handler object: entries as `resources/list` shows them, the sources and templates
 * that serve them, and the options of `resources()`.
 *
 * @see docs/handlers/resources.md
 */
import type { JsonObject } from '../../lib/jsonrpc.js';
import type { ResourceBody, ResourceContents } from '../../lib/content.js';
import type { InputRequiredResult } from '../../lib/mrtr.js';
import { CHANGES, type ChangeFeed } from '../changes/index.js';
import type { CacheHint, CallContext } from '../../core/contract.js';
import type { Awaitable } from '../../core/maybe-promise.js';
import { COMPLETER, type Completer, type ContentAnnotations, type Icon } from '../shared.js';

/** A resource as `resources/list` shows it (MCP `Resource`; a tool's `resource_link` block is one too). */
export interface ResourceEntry {
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  /** Size in bytes, when known. */
  size?: number;
  annotations?: ContentAnnotations;
  icons?: Icon[];
  _meta?: Record<string, unknown>;
}

/** Where resources come from. Both methods receive the call context, so a source may answer per principal. */
export interface ResourceSource {
  /** Every entry this source serves to this caller, in list order. Called on every `resources/list`. */
  list(ctx: CallContext): Awaitable<readonly ResourceEntry[]>;
  /**
   * The body of a URI this source listed, or `undefined` when it is gone, or `ctx.inputRequired(…)` to ask the
   * client for input first.
   */
  read(uri: string, ctx: CallContext): Awaitable<ResourceBody | InputRequiredResult | undefined>;
  /**
   * Optional lookup used by `resources/read` instead of scanning `list()`: the entry for `uri`, which may be
   * given in a form the source accepts (a bare path, say). The entry's `uri` is the canonical one answered.
   */
  entry?(uri: string, ctx: CallContext): Awaitable<ResourceEntry | undefined>;
}

/** A resource template (RFC 6570 level 1: `{var}` only) and the function that reads a matching URI. */
export interface ResourceTemplate {
  /** e.g. `weather://forecast/{city}`. */
  uriTemplate: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  annotations?: ResourceEntry['annotations'];
  icons?: ResourceEntry['icons'];
  _meta?: Record<string, unknown>;
  /** Read a URI that matched: `vars` are the percent-decoded variable values. `undefined` → unknown resource. */
  read(
    vars: Readonly<Record<string, string>>,
    ctx: CallContext,
    uri: string,
  ): Awaitable<ResourceBody | InputRequiredResult | undefined>;
  /** Suggestions for a variable's value (`completion/complete` with `ref/resource`). */
  complete?(
    variable: string,
    value: string,
    ctx: CallContext,
    context: Readonly<Record<string, string>>,
  ): Awaitable<readonly string[]>;
}

/** What the `visible` hook is asked about. */
export type ResourceItem =
  { kind: 'resource'; entry: ResourceEntry } | { kind: 'template'; template: ResourceTemplate };

export interface ResourcesOptions {
  /** The sources, in list order. Default none (an empty list; every read is unknown). */
  sources?: ResourceSource[];
  /** Resource templates, matched in order on `resources/read`. Default none. */
  templates?: ResourceTemplate[];
  /** Page size for `resources/list`; 0 (default) sends the whole list. */
  pageSize?: number;
  /** Page size for `resources/templates/list`; 0 (default) sends the whole list. */
  templatesPageSize?: number;
  /**
   * Per-caller visibility: return false to hide an entry or template from this caller, in lists and reads
   * alike (a hidden URI reads as unknown). Filtering happens before paging.
   */
  visible?: (item: ResourceItem, ctx: CallContext) => boolean;
  /**
   * Cache hint for the three cacheable results. Default: none (the dispatcher's default applies). `public` is
   * refused together with `visible`: a list that depends on who asks must not be shared between callers.
   */
  cache?: CacheHint;
  /** URIs longer than this (characters) are unknown without asking any source. Default 8192. */
  maxUriLength?: number;
  /**
   * JSON-RPC code for an unknown resource in the legacy era. Default -32002 (2025-11-25's "Resource not
   * found"); the modern era always uses -32602 (2026-07-28 forbids -32002).
   */
  legacyNotFoundCode?: -32002 | -32602;
  /**
   * Call `changes.listChanged()` when the resource list changes and `changes.updated(uri)` when a resource's
   * content changes: open `subscriptions/listen` streams that asked for them are told. Given → `dispatch()`
   * declares `resources.listChanged` and `resources.subscribe`.
   */
  changes?: ChangeFeed;
}

/** The handler object `dispatch({ handlers: { resources } })` calls. */
// A type alias, not an interface: only aliases get the implicit index signature `Handlers` asks for.
export type ResourcesHandler = {
  list(params: JsonObject, ctx: CallContext): Promise<{ resources: ResourceEntry[]; nextCursor?: string }>;
  templatesList(
    params: JsonObject,
    ctx: CallContext,
  ): Promise<{ resourceTemplates: JsonObject[]; nextCursor?: string }>;
  /** May also answer an InputRequiredResult, when a source or template asked for input (see `isInputRequiredResult`). */
  read(params: JsonObject, ctx: CallContext): Promise<{ contents: ResourceContents[] }>;
  [COMPLETER]: Completer;
  [CHANGES]?: ChangeFeed;
};

/** A resource held in memory: an entry plus its body. */
export interface MemoryResource extends ResourceEntry {
  text?: string;
  bytes?: Uint8Array;
}
