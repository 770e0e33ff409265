/**
 * `mcpware/resources`: the resources handler object (`resources/list`, `resources/templates/list`,
 * `resources/read`) over small {@link ResourceSource}s (in-memory, the markdown catalogue, or your own code).
 *
 * - `resources/list` concatenates the sources in order (the first source to list a URI owns it), drops entries
 *   the `visible` hook hides from this caller, then pages.
 * - `resources/read` serves only a URI some source lists for this caller (or one matching a template): text
 *   when the MIME type is textual and the body is UTF-8, base64 `blob` otherwise.
 *
 * @see docs/handlers/resources.md
 */
import { ErrorCode, McpError } from '../../lib/errors.js';
import type { JsonObject } from '../../lib/jsonrpc.js';
import { CHANGES } from '../changes/index.js';
import { COMPLETER, pageOrThrow, withCache } from '../shared.js';
import { resolveResourcesOptions } from './options.js';
import { isVisible, listAll, publicEntry, publicTemplate, read } from './read.js';
import type { ResourceEntry, ResourcesHandler, ResourcesOptions } from './types.js';

export type { ResourceBody, ResourceContents } from '../../lib/content.js';
export type {
  MemoryResource,
  ResourceEntry,
  ResourceItem,
  ResourceSource,
  ResourceTemplate,
  ResourcesHandler,
  ResourcesOptions,
} from './types.js';
export { memoryResources } from './memory.js';

/**
 * Create the resources handler object. Throws a TypeError for an unknown or invalid option.
 * @param options - {@link ResourcesOptions}
 * @see docs/handlers/resources.md
 * @example
 * ```ts
 * import { dispatch } from 'mcpware/dispatch';
 * import { memoryResources, resources } from 'mcpware/resources';
 *
 * const res = resources({ sources: [memoryResources([{ uri: 'note://1', name: 'first note', text: 'Hello' }])] });
 * app.use('/mcp', dispatch({ handlers: { resources: res }, serverInfo: { name: 'notes', version: '1.0.0' } }));
 * ```
 */
export function resources(options: ResourcesOptions = {}): ResourcesHandler {
  const c = resolveResourcesOptions(options);
  return {
    async list(params, ctx) {
      const all = await listAll(c, ctx);
      const p = pageOrThrow('resources', all, (e) => e.uri, params, c.pageSize);
      const body: { resources: ResourceEntry[]; nextCursor?: string } = {
        resources: p.page.map(publicEntry),
      };
      if (p.nextCursor !== undefined) body.nextCursor = p.nextCursor;
      return withCache(body, c.cache);
    },

    async templatesList(params, ctx) {
      const all = c.templates.filter((t) => isVisible(c, { kind: 'template', template: t.def }, ctx));
      const p = pageOrThrow(
        'resources/templates',
        all,
        (t) => t.def.uriTemplate,
        params,
        c.templatesPageSize,
      );
      const body: { resourceTemplates: JsonObject[]; nextCursor?: string } = {
        resourceTemplates: p.page.map((t) => publicTemplate(t.def)),
      };
      if (p.nextCursor !== undefined) body.nextCursor = p.nextCursor;
      return withCache(body, c.cache);
    },

    async read(params, ctx) {
      const uri = params.uri;
      if (typeof uri !== 'string' || uri.length === 0) {
        throw new McpError(ErrorCode.InvalidParams, 'resources/read: "uri" must be a non-empty string');
      }
      return read(c, uri, ctx);
    },

    [CHANGES]: c.changes,

    [COMPLETER]: {
      async complete(ref, argument, value, context, ctx) {
        if (ref.type !== 'ref/resource' || typeof ref.uri !== 'string') return undefined;
        const t = c.templates.find((x) => x.def.uriTemplate === ref.uri);
        if (!t || !isVisible(c, { kind: 'template', template: t.def }, ctx)) return undefined;
        if (!t.parsed.variables.includes(argument) || !t.def.complete) return [];
        return t.def.complete(argument, value, ctx, context);
      },
    },
  };
}
