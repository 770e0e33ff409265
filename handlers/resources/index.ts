/**
 * The resources service: a handler object for `resources/list`, `resources/templates/list` and `resources/read`
 * over small {@link ResourceSource}s (in-memory, the markdown catalogue, or your own code).
 *
 * - `resources/list` concatenates the sources in order (the first source to list a URI owns it), drops entries
 *   the `visible` hook hides from this caller, then pages.
 * - `resources/read` serves only a URI some source lists for this caller (or one matching a template): text
 *   when the MIME type is textual and the body is UTF-8, base64 `blob` otherwise. An unknown or hidden URI gets
 *   the same answer: -32602 with `data: {uri}` (legacy era: -32002, the 2025-11-25 code), never an empty
 *   `contents`.
 */
import { ErrorCode, McpError } from '../../lib/errors.js';
import type { JsonObject } from '../../lib/jsonrpc.js';
import {
  type ResourceBody,
  type ResourceContents,
  bodyByteLength,
  toResourceContents,
} from '../../lib/content.js';
import { type InputRequiredResult, isInputRequiredResult } from '../../lib/mrtr.js';
import { LEGACY_RESOURCE_NOT_FOUND } from '../../lib/encode.js';
import { type ParsedTemplate, matchTemplate, parseTemplate } from '../../lib/uritemplate.js';
import { CHANGES, type ChangeFeed, isChangeFeed } from '../changes/index.js';
import type { CacheHint, CallContext } from '../contract.js';
import { badOption } from '../../middleware/internal/options.js';
import {
  type Awaitable,
  COMPLETER,
  type Completer,
  checkCache,
  checkFunction,
  checkPageSize,
  checkSources,
  clip,
  copyOptional,
  isObject,
  isObjectLike,
  pageOrThrow,
  withCache,
} from '../shared.js';

export type { ResourceBody, ResourceContents } from '../../lib/content.js';

/** A resource as `resources/list` shows it. */
export interface ResourceEntry {
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  /** Size in bytes, when known. */
  size?: number;
  annotations?: { audience?: ('user' | 'assistant')[]; priority?: number; lastModified?: string };
  icons?: { src: string; mimeType?: string; sizes?: string[]; theme?: 'light' | 'dark' }[];
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
   * Optional fast lookup used by `resources/read` instead of scanning `list()`: the entry for `uri`, which may
   * be given in a form the source accepts (a bare path, say). The entry's `uri` is the canonical one answered.
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

const ENTRY_FIELDS = ['title', 'description', 'mimeType', 'size', 'annotations', 'icons', '_meta'] as const;
const TEMPLATE_FIELDS = ['title', 'description', 'mimeType', 'annotations', 'icons', '_meta'] as const;

function checkEntry(e: ResourceEntry): void {
  if (typeof e?.uri !== 'string' || typeof e.name !== 'string') {
    throw new TypeError('resources: a source listed an entry without a string "uri" and "name"');
  }
}

/** The public fields of an entry (drops whatever else a source attached, such as bodies or functions). */
function publicEntry(e: ResourceEntry): ResourceEntry {
  checkEntry(e);
  const out: ResourceEntry = { uri: e.uri, name: e.name };
  copyOptional(out as unknown as Record<string, unknown>, e, ENTRY_FIELDS);
  return out;
}

function publicTemplate(t: ResourceTemplate): JsonObject {
  const out: JsonObject = { uriTemplate: t.uriTemplate, name: t.name };
  copyOptional(out, t, TEMPLATE_FIELDS);
  return out;
}

/** Create the resources handler object. */
export function resources(options: ResourcesOptions = {}): ResourcesHandler {
  const F = 'resources';
  if (!isObjectLike(options)) throw badOption(F, 'options', options, 'an object');
  const sources = checkSources<ResourceSource>(F, options.sources, ['list', 'read']);
  const pageSize = checkPageSize(F, 'pageSize', options.pageSize);
  const templatesPageSize = checkPageSize(F, 'templatesPageSize', options.templatesPageSize);
  const visible = checkFunction<NonNullable<ResourcesOptions['visible']>>(F, 'visible', options.visible);
  const cache = checkCache(F, options.cache);
  if (cache?.cacheScope === 'public' && visible) {
    throw badOption(F, 'cache', options.cache, "cacheScope 'private' when a visible hook filters per caller");
  }
  const maxUri = options.maxUriLength ?? 8192;
  if (!Number.isSafeInteger(maxUri) || maxUri < 1)
    throw badOption(F, 'maxUriLength', options.maxUriLength, 'a positive integer');
  const legacyCode = options.legacyNotFoundCode ?? LEGACY_RESOURCE_NOT_FOUND;
  if (legacyCode !== -32002 && legacyCode !== -32602) {
    throw badOption(F, 'legacyNotFoundCode', legacyCode, '-32002 or -32602');
  }
  if (options.changes !== undefined && !isChangeFeed(options.changes)) {
    throw badOption(F, 'changes', options.changes, 'a ChangeFeed');
  }

  // Templates are validated once, at construction.
  const rawTemplates: unknown = options.templates ?? [];
  if (!Array.isArray(rawTemplates))
    throw badOption(F, 'templates', rawTemplates, 'an array of resource templates');
  const templates: { def: ResourceTemplate; parsed: ParsedTemplate }[] = [];
  rawTemplates.forEach((t: unknown, i) => {
    const d = t as ResourceTemplate;
    if (
      !isObject(t) ||
      typeof d.uriTemplate !== 'string' ||
      typeof d.name !== 'string' ||
      typeof d.read !== 'function'
    ) {
      throw badOption(
        F,
        `templates[${i}]`,
        t,
        'an object with string uriTemplate and name and a read() function',
      );
    }
    const parsed = parseTemplate(d.uriTemplate);
    if (!parsed.ok)
      throw badOption(
        F,
        `templates[${i}].uriTemplate`,
        d.uriTemplate,
        `a level-1 URI template (${parsed.message})`,
      );
    if (templates.some((x) => x.def.uriTemplate === d.uriTemplate)) {
      throw badOption(F, `templates[${i}].uriTemplate`, d.uriTemplate, 'unique among templates');
    }
    templates.push({ def: d, parsed });
  });

  const isVisible = (item: ResourceItem, ctx: CallContext): boolean =>
    visible ? visible(item, ctx) === true : true;

  /**
   * Every visible entry, first source winning on a duplicate URI. Entries are the sources' own objects (checked,
   * not copied): only the page sent is copied to its public fields, so a long list costs one pass, not one
   * allocation per entry per page.
   */
  async function listAll(ctx: CallContext): Promise<ResourceEntry[]> {
    const seen = new Set<string>();
    const out: ResourceEntry[] = [];
    for (const s of sources) {
      const entries = await s.list(ctx);
      for (const e of entries) {
        checkEntry(e);
        if (seen.has(e.uri)) continue;
        seen.add(e.uri);
        if (isVisible({ kind: 'resource', entry: e }, ctx)) out.push(e);
      }
    }
    return out;
  }

  function notFound(uri: string, ctx: CallContext): McpError {
    const data = { uri: clip(uri, 1024) };
    if (ctx.era === 'legacy' && legacyCode === LEGACY_RESOURCE_NOT_FOUND) {
      return new McpError(LEGACY_RESOURCE_NOT_FOUND, `Resource not found: ${clip(uri)}`, data);
    }
    return new McpError(ErrorCode.InvalidParams, `Unknown resource: ${clip(uri)}`, data);
  }

  /** The source and entry serving `uri` for this caller, respecting list ownership and visibility. */
  async function locate(
    uri: string,
    ctx: CallContext,
  ): Promise<{ source: ResourceSource; entry: ResourceEntry } | undefined> {
    const claimed = new Set<string>();
    for (const source of sources) {
      let entry: ResourceEntry | undefined;
      if (source.entry) {
        const e = await source.entry(uri, ctx);
        entry = e === undefined ? undefined : publicEntry(e);
      } else {
        const list = await source.list(ctx);
        for (const e of list) {
          if (e?.uri === uri) {
            entry = publicEntry(e);
            break;
          }
          if (typeof e?.uri === 'string') claimed.add(e.uri);
        }
      }
      if (entry === undefined) continue;
      // An earlier source already listing this URI owns it (as in resources/list); only scanned lists are known.
      if (claimed.has(entry.uri)) return undefined;
      return isVisible({ kind: 'resource', entry }, ctx) ? { source, entry } : undefined;
    }
    return undefined;
  }

  const handler: ResourcesHandler = {
    async list(params, ctx) {
      const all = await listAll(ctx);
      const p = pageOrThrow('resources', all, (e) => e.uri, params, pageSize);
      const body: { resources: ResourceEntry[]; nextCursor?: string } = {
        resources: p.page.map(publicEntry),
      };
      if (p.nextCursor !== undefined) body.nextCursor = p.nextCursor;
      return withCache(body, cache);
    },

    async templatesList(params, ctx) {
      const all = templates.filter((t) => isVisible({ kind: 'template', template: t.def }, ctx));
      const p = pageOrThrow('resources/templates', all, (t) => t.def.uriTemplate, params, templatesPageSize);
      const body: { resourceTemplates: JsonObject[]; nextCursor?: string } = {
        resourceTemplates: p.page.map((t) => publicTemplate(t.def)),
      };
      if (p.nextCursor !== undefined) body.nextCursor = p.nextCursor;
      return withCache(body, cache);
    },

    async read(params, ctx) {
      const uri = params.uri;
      if (typeof uri !== 'string' || uri.length === 0) {
        throw new McpError(ErrorCode.InvalidParams, 'resources/read: "uri" must be a non-empty string');
      }
      if (uri.length > maxUri) throw notFound(uri, ctx);
      const found = await locate(uri, ctx);
      if (found) {
        const body = await found.source.read(found.entry.uri, ctx);
        if (body === undefined) throw notFound(uri, ctx);
        if (isInputRequiredResult(body)) return body as unknown as { contents: ResourceContents[] };
        return withCache({ contents: [contentsFor(found.entry.uri, body, found.entry.mimeType)] }, cache);
      }
      for (const t of templates) {
        const vars = matchTemplate(t.parsed, uri);
        if (vars === undefined) continue;
        if (!isVisible({ kind: 'template', template: t.def }, ctx)) continue;
        const body = await t.def.read(vars, ctx, uri);
        if (body === undefined) throw notFound(uri, ctx);
        if (isInputRequiredResult(body)) return body as unknown as { contents: ResourceContents[] };
        return withCache({ contents: [contentsFor(uri, body, t.def.mimeType)] }, cache);
      }
      throw notFound(uri, ctx);
    },

    [CHANGES]: options.changes,

    [COMPLETER]: {
      async complete(ref, argument, value, context, ctx) {
        if (ref.type !== 'ref/resource' || typeof ref.uri !== 'string') return undefined;
        const t = templates.find((x) => x.def.uriTemplate === ref.uri);
        if (!t || !isVisible({ kind: 'template', template: t.def }, ctx)) return undefined;
        if (!t.parsed.variables.includes(argument) || !t.def.complete) return [];
        return t.def.complete(argument, value, ctx, context);
      },
    },
  };
  return handler;
}

function contentsFor(uri: string, body: ResourceBody, entryMime: string | undefined): ResourceContents {
  if (body === null || typeof body !== 'object')
    throw new TypeError('resources: read() must return a body object or undefined');
  // The entry's MIME type stands in when the body does not name one.
  const withMime =
    body.mimeType === undefined && entryMime !== undefined ? { ...body, mimeType: entryMime } : body;
  return toResourceContents(uri, withMime);
}

/** A resource held in memory: an entry plus its body. */
export interface MemoryResource extends ResourceEntry {
  text?: string;
  bytes?: Uint8Array;
}

/**
 * An in-memory source. Entries are listed in the given order; `size` is filled in from the body when absent.
 * Throws a TypeError on a duplicate URI or an entry without both a `uri` and a `name`.
 */
export function memoryResources(items: readonly MemoryResource[]): ResourceSource {
  if (!Array.isArray(items)) throw badOption('memoryResources', 'items', items, 'an array of resources');
  const byUri = new Map<string, { entry: ResourceEntry; body: ResourceBody }>();
  items.forEach((it, i) => {
    if (!isObjectLike(it) || typeof it.uri !== 'string' || it.uri === '' || typeof it.name !== 'string') {
      throw badOption(
        'memoryResources',
        `items[${i}]`,
        it,
        'an object with non-empty string uri and a string name',
      );
    }
    if (byUri.has(it.uri)) throw badOption('memoryResources', `items[${i}].uri`, it.uri, 'unique');
    const body: ResourceBody = {};
    if (it.bytes !== undefined) body.bytes = it.bytes;
    else body.text = it.text ?? '';
    if (it.mimeType !== undefined) body.mimeType = it.mimeType;
    const entry = publicEntry(it);
    if (entry.size === undefined) entry.size = bodyByteLength(body);
    byUri.set(it.uri, { entry, body });
  });
  const entries = [...byUri.values()].map((x) => x.entry);
  return {
    list: () => entries,
    entry: (uri) => byUri.get(uri)?.entry,
    read: (uri) => byUri.get(uri)?.body,
  };
}
