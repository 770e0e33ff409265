/**
 * `memoryResources()`: a resource source over a fixed list held in memory.
 *
 * @see docs/handlers/resources.md
 */
import { type ResourceBody, bodyByteLength } from '../../lib/content.js';
import { isJsonObject } from '../../lib/json.js';
import { badOption } from '../../core/options.js';
import { publicEntry } from './read.js';
import type { MemoryResource, ResourceEntry, ResourceSource } from './types.js';

/**
 * An in-memory source. Entries are listed in the given order; `size` is filled in from the body when absent.
 * Throws a TypeError on a duplicate URI or an entry without both a `uri` and a `name`.
 * @see docs/handlers/resources.md
 * @example
 * ```ts
 * import { memoryResources, resources } from 'mcpware/resources';
 *
 * const res = resources({
 *   sources: [memoryResources([{ uri: 'config://app', name: 'app config', text: '{"mode":"demo"}' }])],
 * });
 * ```
 */
export function memoryResources(items: readonly MemoryResource[]): ResourceSource {
  if (!Array.isArray(items)) throw badOption('memoryResources', 'items', items, 'an array of resources');
  const byUri = new Map<string, { entry: ResourceEntry; body: ResourceBody }>();
  items.forEach((it, i) => {
    // `as unknown`: the check looks at the caller's value without narrowing its declared type.
    if (
      !isJsonObject(it as unknown) ||
      typeof it.uri !== 'string' ||
      it.uri === '' ||
      typeof it.name !== 'string'
    ) {
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
