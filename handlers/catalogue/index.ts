/**
 * `mcpware/catalogue`: a folder of files served as resources and prompts.
 *
 * - Every file becomes a resource `<scheme>://<relative path>`. Markdown files (`.md`, `.markdown`) may start
 *   with YAML frontmatter (`name`, `title`, `description`); the resource's text is the body after it. Other
 *   files are served by extension (a PNG travels as a base64 blob).
 * - Markdown files under the prompts folder (default `prompts/`) become prompts instead: frontmatter `name`
 *   (default: the path inside the folder without `.md`), `title`, `description`, `arguments`
 *   (`[{name, description?, required?}]`); the body is the `{{arg}}` template.
 * - A missing description falls back to the first prose paragraph of the body.
 * - The load fails, naming both files, when two files claim one name; and on broken frontmatter, oversized
 *   files, or a prompt placeholder that names no declared argument.
 *
 * Everything is read once, at load time, into memory: requests never touch the file system, so nothing a
 * caller sends can name a path. Hidden files and folders (`.x`) and symbolic links are skipped.
 *
 * @see docs/handlers/catalogue.md
 */
import { type ResourceBody, decodeUtf8, mimeForPath } from '../../lib/content.js';
import { placeholders } from '../../lib/render.js';
import type { PromptDefinition } from '../prompts/types.js';
import type { ResourceEntry } from '../resources/types.js';
import { badOption } from '../../core/options.js';
import { readBounded, walk } from './files.js';
import { firstParagraph, optString, readArguments, splitFrontmatter, templateOf } from './markdown.js';
import { type CatalogueConfig, F, resolveCatalogueOptions } from './options.js';
import { type Catalogue, CatalogueError, type CatalogueOptions } from './types.js';

export type { Catalogue, CatalogueOptions, CataloguePrompts, CatalogueResources } from './types.js';
export { CatalogueError } from './types.js';

const MARKDOWN = /\.(?:md|markdown)$/i;

/** A resource read from one file. */
interface LoadedResource {
  /** The file's path relative to the catalogue folder. */
  rel: string;
  entry: ResourceEntry;
  body: ResourceBody;
}

/**
 * Load a catalogue from `dir`. Rejects with a {@link CatalogueError} (or a TypeError for bad options).
 * @param dir - the folder of markdown files
 * @param options - {@link CatalogueOptions}
 * @see docs/handlers/catalogue.md
 * @example
 * ```ts
 * import { loadCatalogue } from 'mcpware/catalogue';
 * import { prompts } from 'mcpware/prompts';
 * import { resources } from 'mcpware/resources';
 *
 * const docs = await loadCatalogue('./catalogue', { scheme: 'docs' });
 * const handlers = { resources: resources({ sources: [docs.resources] }), prompts: prompts({ sources: [docs.prompts] }) };
 * ```
 */
export async function loadCatalogue(dir: string, options: CatalogueOptions = {}): Promise<Catalogue> {
  if (typeof dir !== 'string' || dir === '') throw badOption(F, 'dir', dir, 'a folder path');
  const r = resolveCatalogueOptions(options);
  const files = await walk(dir, r);
  const resources: LoadedResource[] = [];
  const definitions: PromptDefinition[] = [];
  const resourceNames = new Map<string, string>(); // name → file that claimed it
  const promptNames = new Map<string, string>();
  const promptsPrefix = r.promptsDir === false ? undefined : r.promptsDir + '/';
  let total = 0;
  for (const rel of files) {
    const bytes = await readBounded(dir, rel, r.maxFileBytes);
    total += bytes.length;
    if (total > r.maxTotalBytes)
      throw new CatalogueError(`catalogue: files total more than ${r.maxTotalBytes} bytes`, [rel]);
    const text = decodeUtf8(bytes);
    if (promptsPrefix !== undefined && MARKDOWN.test(rel) && rel.startsWith(promptsPrefix)) {
      const def = promptOf(rel, text, rel.slice(promptsPrefix.length), r);
      claim(promptNames, def.name, rel, 'prompt');
      definitions.push(def);
    } else {
      const loaded = resourceOf(rel, bytes, text, r);
      claim(resourceNames, loaded.entry.name, rel, 'resource');
      resources.push(loaded);
    }
  }
  return catalogueOf(r.prefix, files, resources, definitions);
}

/** Record that `rel` claims `name`; a load error naming both files when another file already did. */
function claim(names: Map<string, string>, name: string, rel: string, what: string): void {
  const other = names.get(name);
  if (other !== undefined) {
    throw new CatalogueError(`catalogue: "${other}" and "${rel}" both claim the ${what} name "${name}"`, [
      other,
      rel,
    ]);
  }
  names.set(name, rel);
}

/** The prompt a markdown file under the prompts folder defines (`inner`: its path inside that folder). */
function promptOf(
  rel: string,
  text: string | undefined,
  inner: string,
  r: CatalogueConfig,
): PromptDefinition {
  if (text === undefined) throw new CatalogueError(`catalogue: "${rel}": a prompt must be UTF-8 text`, [rel]);
  const { frontmatter: fm = {}, body } = splitFrontmatter(text, rel);
  const name = optString(fm, 'name', rel) ?? inner.replace(MARKDOWN, '');
  if (name === '') throw new CatalogueError(`catalogue: "${rel}": frontmatter "name" is empty`, [rel]);
  const args = readArguments(fm, rel);
  const template = templateOf(body);
  if (r.strict) {
    const declared = new Set((args ?? []).map((a) => a.name));
    const stray = placeholders(template).find((p) => !declared.has(p));
    if (stray !== undefined) {
      throw new CatalogueError(`catalogue: "${rel}": placeholder {{${stray}}} is not a declared argument`, [
        rel,
      ]);
    }
  }
  const def: PromptDefinition = { name, template };
  const title = optString(fm, 'title', rel);
  if (title !== undefined) def.title = title;
  const description = optString(fm, 'description', rel) ?? firstParagraph(template, r.descMax);
  if (description !== undefined) def.description = description;
  if (args !== undefined) def.arguments = args;
  return def;
}

/** The resource a file is: markdown with its frontmatter read, anything else by extension. */
function resourceOf(
  rel: string,
  bytes: Buffer,
  text: string | undefined,
  r: CatalogueConfig,
): LoadedResource {
  const uri = r.prefix + rel.split('/').map(encodeURIComponent).join('/');
  let loaded: LoadedResource;
  if (MARKDOWN.test(rel) && text !== undefined) {
    const { frontmatter: fm = {}, body: md } = splitFrontmatter(text, rel);
    const entry: ResourceEntry = { uri, name: optString(fm, 'name', rel) ?? rel };
    const title = optString(fm, 'title', rel);
    if (title !== undefined) entry.title = title;
    const description = optString(fm, 'description', rel) ?? firstParagraph(md, r.descMax);
    if (description !== undefined) entry.description = description;
    entry.mimeType = 'text/markdown';
    entry.size = Buffer.byteLength(md, 'utf8');
    loaded = { rel, entry, body: { text: md, mimeType: 'text/markdown' } };
  } else {
    // Unknown extensions: text/plain when the bytes are UTF-8 without NULs, else opaque bytes.
    const mimeType =
      mimeForPath(rel) ??
      (text !== undefined && !text.includes('\0') ? 'text/plain' : 'application/octet-stream');
    loaded = {
      rel,
      entry: { uri, name: rel, mimeType, size: bytes.length },
      body: { bytes: new Uint8Array(bytes), mimeType },
    };
  }
  if (loaded.entry.name === '')
    throw new CatalogueError(`catalogue: "${rel}": frontmatter "name" is empty`, [rel]);
  return loaded;
}

/** The loaded catalogue: its resource source (canonical or bare-path lookups) and its prompt source. */
function catalogueOf(
  prefix: string,
  files: readonly string[],
  resources: readonly LoadedResource[],
  definitions: readonly PromptDefinition[],
): Catalogue {
  const byUri = new Map(resources.map((x) => [x.entry.uri, x] as const));
  // Relative path → canonical URI, for bare-path reads.
  const byPath = new Map(resources.map((x) => [x.rel, x.entry.uri] as const));
  /** Canonical URI for a canonical or bare form (`docs://a.md`, `a.md`, `/a.md`, with spaces trimmed). */
  const canonical = (u: string): string | undefined => {
    const t = u.trim();
    if (t.startsWith(prefix)) return byUri.has(t) ? t : undefined;
    return byPath.get(t.startsWith('/') ? t.slice(1) : t);
  };
  const entries = Object.freeze(resources.map((x) => Object.freeze(x.entry)));
  const sortedDefs = [...definitions].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const byName = new Map(sortedDefs.map((d) => [d.name, d] as const));
  const found = (u: string): LoadedResource | undefined => {
    const c = canonical(u);
    return c === undefined ? undefined : byUri.get(c);
  };
  return {
    prefix,
    files: Object.freeze([...files]),
    resources: {
      entries,
      list: () => entries,
      entry: (u) => found(u)?.entry,
      read: (u) => found(u)?.body,
    },
    prompts: {
      definitions: Object.freeze(sortedDefs),
      list: () => sortedDefs,
      get: (name) => byName.get(name),
    },
  };
}
