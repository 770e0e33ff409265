/**
 * Building `tools/call` results: `ok()`, `textResult()`, `toolError()`, and one builder per content block type.
 * Builders check what they are given and throw a TypeError naming themselves, so a malformed block never reaches
 * a client.
 *
 * @see docs/handlers/tools.md
 */
import type { JsonObject } from '../../lib/jsonrpc.js';
import type {
  AudioContent,
  BlockExtra,
  CallToolResult,
  EmbeddedResource,
  ImageContent,
  ResourceLink,
  TextContent,
} from './types.js';

/**
 * A successful result carrying `value` twice: as `structuredContent`, and as a text block with the same JSON
 * (for clients that read only text). Throws a TypeError when `value` has no JSON form (undefined, a function).
 * @see docs/handlers/tools.md
 * @example
 * ```ts
 * import { ok } from 'mcpware/tools';
 *
 * const result = ok({ temperature: 21, unit: 'C' }); // structuredContent and the same JSON as text
 * console.log(result.structuredContent);
 * ```
 */
export function ok(value: unknown, extra: { _meta?: JsonObject } = {}): CallToolResult {
  const text = JSON.stringify(value);
  if (text === undefined) throw new TypeError('ok(): the value has no JSON representation');
  const r: CallToolResult = { content: [{ type: 'text', text }], structuredContent: value };
  if (extra._meta !== undefined) r._meta = extra._meta;
  return r;
}

/**
 * A plain text result.
 * @see docs/handlers/tools.md
 * @example
 * ```ts
 * import { textResult } from 'mcpware/tools';
 *
 * const result = textResult('Done: 3 files written.');
 * console.log(result.content);
 * ```
 */
export function textResult(text: string): CallToolResult {
  return { content: [textBlock(text)] };
}

/**
 * A tool error the model can read and act on (`isError: true`): business failures, upstream API errors.
 * @see docs/handlers/tools.md
 * @example
 * ```ts
 * import { toolError } from 'mcpware/tools';
 *
 * const result = toolError('The city "Atlantis" is unknown; try a city from the list.');
 * console.log(result.isError); // true
 * ```
 */
export function toolError(
  message: string,
  extra: { structuredContent?: unknown; _meta?: JsonObject } = {},
): CallToolResult {
  const r: CallToolResult = { content: [textBlock(message)], isError: true };
  if ('structuredContent' in extra) r.structuredContent = extra.structuredContent;
  if (extra._meta !== undefined) r._meta = extra._meta;
  return r;
}

function withExtra<T extends BlockExtra>(block: T, extra: BlockExtra | undefined): T {
  if (extra?.annotations !== undefined) block.annotations = extra.annotations;
  if (extra?._meta !== undefined) block._meta = extra._meta;
  return block;
}

/**
 * A `text` content block.
 * @see docs/handlers/tools.md
 * @example
 * ```ts
 * import { textBlock } from 'mcpware/tools';
 *
 * const block = textBlock('Hello', { annotations: { audience: ['user'] } });
 * console.log(block.type); // 'text'
 * ```
 */
export function textBlock(text: string, extra?: BlockExtra): TextContent {
  if (typeof text !== 'string') throw new TypeError('textBlock(): text must be a string');
  return withExtra<TextContent>({ type: 'text', text }, extra);
}

/**
 * Binary data as standard padded Base64. A string is taken as Base64 already and must be canonical (RFC 4648
 * alphabet, padding, no stray bits): a TypeError otherwise, so a raw string is never sent as if it were Base64.
 */
export function toBase64(data: Uint8Array | ArrayBuffer | string, what = 'data'): string {
  if (typeof data === 'string') {
    if (data.length % 4 !== 0 || Buffer.from(data, 'base64').toString('base64') !== data) {
      throw new TypeError(`${what} must be bytes or canonical standard Base64`);
    }
    return data;
  }
  if (data instanceof ArrayBuffer) return Buffer.from(data).toString('base64');
  if (data instanceof Uint8Array)
    return Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('base64');
  throw new TypeError(`${what} must be a Uint8Array, an ArrayBuffer or a Base64 string`);
}

function mime(m: unknown, what: string): string {
  if (typeof m !== 'string' || m.length === 0)
    throw new TypeError(`${what}: mimeType must be a non-empty string`);
  return m;
}

/** An `image` or `audio` block: the same shape, told apart by `type`. */
function mediaBlock<T extends ImageContent | AudioContent>(
  type: T['type'],
  builder: string,
  data: Uint8Array | ArrayBuffer | string,
  mimeType: string,
  extra: BlockExtra | undefined,
): T {
  const block = { type, data: toBase64(data, `${builder}: data`), mimeType: mime(mimeType, builder) };
  return withExtra(block as T, extra);
}

/**
 * An `image` content block; bytes are Base64-encoded.
 * @see docs/handlers/tools.md
 * @example
 * ```ts
 * import { readFile } from 'node:fs/promises';
 * import { imageBlock } from 'mcpware/tools';
 *
 * const block = imageBlock(await readFile('chart.png'), 'image/png');
 * console.log(block.mimeType);
 * ```
 */
export function imageBlock(
  data: Uint8Array | ArrayBuffer | string,
  mimeType: string,
  extra?: BlockExtra,
): ImageContent {
  return mediaBlock<ImageContent>('image', 'imageBlock()', data, mimeType, extra);
}

/**
 * An `audio` content block; bytes are Base64-encoded.
 * @see docs/handlers/tools.md
 * @example
 * ```ts
 * import { readFile } from 'node:fs/promises';
 * import { audioBlock } from 'mcpware/tools';
 *
 * const block = audioBlock(await readFile('greeting.wav'), 'audio/wav');
 * console.log(block.mimeType);
 * ```
 */
export function audioBlock(
  data: Uint8Array | ArrayBuffer | string,
  mimeType: string,
  extra?: BlockExtra,
): AudioContent {
  return mediaBlock<AudioContent>('audio', 'audioBlock()', data, mimeType, extra);
}

const LINK_FIELDS = ['title', 'description', 'mimeType', 'size', 'icons', 'annotations', '_meta'] as const;

/**
 * A `resource_link` content block (a resource the client may read later). Unset fields are omitted.
 * @see docs/handlers/tools.md
 * @example
 * ```ts
 * import { resourceLink } from 'mcpware/tools';
 *
 * const link = resourceLink({ uri: 'docs://guide.md', name: 'guide', mimeType: 'text/markdown' });
 * console.log(link.type); // 'resource_link'
 * ```
 */
export function resourceLink(link: Omit<ResourceLink, 'type'>): ResourceLink {
  if (link === null || typeof link !== 'object')
    throw new TypeError('resourceLink(): expected { uri, name, … }');
  if (typeof link.uri !== 'string' || link.uri === '')
    throw new TypeError('resourceLink(): uri must be a non-empty string');
  if (typeof link.name !== 'string' || link.name === '')
    throw new TypeError('resourceLink(): name must be a non-empty string');
  const out: ResourceLink = { type: 'resource_link', uri: link.uri, name: link.name };
  for (const k of LINK_FIELDS) {
    if (link[k] !== undefined) (out as unknown as Record<string, unknown>)[k] = link[k];
  }
  return out;
}

/**
 * An embedded `resource` block: give exactly one of `text` or `blob` (bytes, Base64-encoded here).
 * @see docs/handlers/tools.md
 * @example
 * ```ts
 * import { embeddedResource } from 'mcpware/tools';
 *
 * const block = embeddedResource({ uri: 'config://app', mimeType: 'application/json', text: '{"mode":"demo"}' });
 * console.log(block.resource.uri);
 * ```
 */
export function embeddedResource(
  resource: {
    uri: string;
    mimeType?: string;
    text?: string;
    blob?: Uint8Array | ArrayBuffer | string;
    _meta?: JsonObject;
  },
  extra?: BlockExtra,
): EmbeddedResource {
  if (resource === null || typeof resource !== 'object')
    throw new TypeError('embeddedResource(): expected { uri, text | blob }');
  if (typeof resource.uri !== 'string' || resource.uri === '')
    throw new TypeError('embeddedResource(): uri must be a non-empty string');
  const hasText = resource.text !== undefined;
  const hasBlob = resource.blob !== undefined;
  if (hasText === hasBlob) throw new TypeError('embeddedResource(): give exactly one of text or blob');
  const base: { uri: string; mimeType?: string; _meta?: JsonObject } = { uri: resource.uri };
  if (resource.mimeType !== undefined) base.mimeType = mime(resource.mimeType, 'embeddedResource()');
  if (resource._meta !== undefined) base._meta = resource._meta;
  let inner: EmbeddedResource['resource'];
  if (hasText) {
    if (typeof resource.text !== 'string') throw new TypeError('embeddedResource(): text must be a string');
    inner = { ...base, text: resource.text };
  } else inner = { ...base, blob: toBase64(resource.blob!, 'embeddedResource(): blob') };
  return withExtra<EmbeddedResource>({ type: 'resource', resource: inner }, extra);
}
