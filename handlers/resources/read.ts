/**
 * How the resources handler object finds what it serves: the visible list (first source wins a URI), the source
 * that owns a URI, the templates, and the answer for an unknown URI. An unknown and a hidden URI get the same
 * answer: -32602 with `data: {uri}` (legacy era: -32002, the 2025-11-25 code), never an empty `contents`.
 *
 * @see docs/handlers/resources.md
 */
import { ErrorCode, McpError } from '../../lib/errors.js';
import { type ResourceBody, type ResourceContents, toResourceContents } from '../../lib/content.js';
import { type InputRequiredResult, isInputRequiredResult } from '../../lib/mrtr.js';
import { LEGACY_RESOURCE_NOT_FOUND } from '../../lib/encode.js';
import { matchTemplate } from '../../lib/uritemplate.js';
import type { CallContext } from '../../core/contract.js';
import { copyOptional, withCache } from '../shared.js';
import type { ResourcesConfig } from './options.js';
import type { ResourceEntry, ResourceItem, ResourceSource, ResourceTemplate } from './types.js';
import { clip } from '../../lib/clip.js';

const ENTRY_FIELDS = ['title', 'description', 'mimeType', 'size', 'annotations', 'icons', '_meta'] as const;
const TEMPLATE_FIELDS = ['title', 'description', 'mimeType', 'annotations', 'icons', '_meta'] as const;

function checkEntry(e: ResourceEntry): void {
  if (typeof e?.uri !== 'string' || typeof e.name !== 'string') {
    throw new TypeError('resources: a source listed an entry without a string "uri" and "name"');
  }
}

/** The public fields of an entry (drops whatever else a source attached, such as bodies or functions). */
export function publicEntry(e: ResourceEntry): ResourceEntry {
  checkEntry(e);
  const out: ResourceEntry = { uri: e.uri, name: e.name };
  copyOptional(out as unknown as Record<string, unknown>, e, ENTRY_FIELDS);
  return out;
}

/** The public fields of a template, as `resources/templates/list` shows it. */
export function publicTemplate(t: ResourceTemplate): Record<string, unknown> {
  const out: Record<string, unknown> = { uriTemplate: t.uriTemplate, name: t.name };
  copyOptional(out, t, TEMPLATE_FIELDS);
  return out;
}

/** Whether the `visible` hook lets this caller see the item (no hook: everything is visible). */
export function isVisible(c: ResourcesConfig, item: ResourceItem, ctx: CallContext): boolean {
  return c.visible ? c.visible(item, ctx) === true : true;
}

/**
 * Every visible entry, first source winning on a duplicate URI. Entries are the sources' own objects (checked,
 * not copied): only the page sent is copied to its public fields.
 */
export async function listAll(c: ResourcesConfig, ctx: CallContext): Promise<ResourceEntry[]> {
  const seen = new Set<string>();
  const out: ResourceEntry[] = [];
  for (const s of c.sources) {
    const entries = await s.list(ctx);
    for (const e of entries) {
      checkEntry(e);
      if (seen.has(e.uri)) continue;
      seen.add(e.uri);
      if (isVisible(c, { kind: 'resource', entry: e }, ctx)) out.push(e);
    }
  }
  return out;
}

/** The refusal for a URI this caller cannot read: unknown and hidden alike. */
export function notFound(c: ResourcesConfig, uri: string, ctx: CallContext): McpError {
  const data = { uri: clip(uri, 1024) };
  if (ctx.era === 'legacy' && c.legacyNotFoundCode === LEGACY_RESOURCE_NOT_FOUND) {
    return new McpError(LEGACY_RESOURCE_NOT_FOUND, `Resource not found: ${clip(uri)}`, data);
  }
  return new McpError(ErrorCode.InvalidParams, `Unknown resource: ${clip(uri)}`, data);
}

/** The source and entry serving `uri` for this caller, respecting list ownership and visibility. */
async function locate(
  c: ResourcesConfig,
  uri: string,
  ctx: CallContext,
): Promise<{ source: ResourceSource; entry: ResourceEntry } | undefined> {
  const claimed = new Set<string>();
  for (const source of c.sources) {
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
    return isVisible(c, { kind: 'resource', entry }, ctx) ? { source, entry } : undefined;
  }
  return undefined;
}

type ReadResult = { contents: ResourceContents[] };

/** `resources/read`: a listed URI from its source, else the first visible template that matches. */
export async function read(c: ResourcesConfig, uri: string, ctx: CallContext): Promise<ReadResult> {
  if (uri.length > c.maxUriLength) throw notFound(c, uri, ctx);
  const found = await locate(c, uri, ctx);
  if (found) {
    const body = await found.source.read(found.entry.uri, ctx);
    return answer(c, uri, found.entry.uri, body, found.entry.mimeType, ctx);
  }
  for (const t of c.templates) {
    const vars = matchTemplate(t.parsed, uri);
    if (vars === undefined) continue;
    if (!isVisible(c, { kind: 'template', template: t.def }, ctx)) continue;
    const body = await t.def.read(vars, ctx, uri);
    return answer(c, uri, uri, body, t.def.mimeType, ctx);
  }
  throw notFound(c, uri, ctx);
}

/** What a read gave: unknown when nothing, an input-required result as it is, else the contents. */
function answer(
  c: ResourcesConfig,
  asked: string,
  uri: string,
  body: ResourceBody | InputRequiredResult | undefined,
  mimeType: string | undefined,
  ctx: CallContext,
): ReadResult {
  if (body === undefined) throw notFound(c, asked, ctx);
  // Passed through under the common type: the dispatcher checks and encodes it.
  if (isInputRequiredResult(body)) return body as unknown as ReadResult;
  return withCache({ contents: [contentsFor(uri, body, mimeType)] }, c.cache);
}

function contentsFor(uri: string, body: ResourceBody, entryMime: string | undefined): ResourceContents {
  if (body === null || typeof body !== 'object')
    throw new TypeError('resources: read() must return a body object or undefined');
  // The entry's MIME type stands in when the body does not name one.
  const withMime =
    body.mimeType === undefined && entryMime !== undefined ? { ...body, mimeType: entryMime } : body;
  return toResourceContents(uri, withMime);
}
