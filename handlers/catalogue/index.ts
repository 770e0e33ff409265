/**
 * The markdown catalogue: a folder of files served as resources and prompts.
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
 */
import { constants as fsConstants } from 'node:fs';
import { open, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { type ResourceBody, decodeUtf8, mimeForPath } from '../../lib/content.js';
import { placeholders } from '../../lib/render.js';
import type { PromptArgument, PromptDefinition, PromptSource } from '../prompts/index.js';
import type { ResourceEntry, ResourceSource } from '../resources/index.js';
import { badOption } from '../../middleware/internal/options.js';
import { isObject, isObjectLike } from '../shared.js';

export interface CatalogueOptions {
  /**
   * URI scheme (`docs` → `docs://getting-started.md`), or a whole prefix ending in `/` (`srv://catalog/`).
   * Default `docs`.
   */
  scheme?: string;
  /** The subfolder whose markdown files are prompts. Default `prompts`; `false` turns prompts off. */
  promptsDir?: string | false;
  /** Largest file accepted, in bytes; a larger one fails the load. Default 1 MiB. */
  maxFileBytes?: number;
  /** Most files accepted. Default 1000. */
  maxFiles?: number;
  /** Most bytes accepted over all files. Default 32 MiB. */
  maxTotalBytes?: number;
  /** Deepest folder nesting walked below the root. Default 8. */
  maxDepth?: number;
  /** Longest description kept (characters; a longer fallback paragraph is cut with `…`). Default 240. */
  descriptionMaxLength?: number;
  /**
   * Refuse a prompt whose body has a `{{placeholder}}` that is not a declared argument (catches typos).
   * Default true.
   */
  strictPlaceholders?: boolean;
}

/** The resources half of a catalogue: a {@link ResourceSource} plus its entries for inspection. */
export interface CatalogueResources extends ResourceSource {
  readonly entries: readonly ResourceEntry[];
}
/** The prompts half of a catalogue: a {@link PromptSource} plus its definitions for inspection. */
export interface CataloguePrompts extends PromptSource {
  readonly definitions: readonly PromptDefinition[];
}

export interface Catalogue {
  resources: CatalogueResources;
  prompts: CataloguePrompts;
  /** The URI prefix, e.g. `docs://`. */
  prefix: string;
  /** The relative paths loaded, in walk order. */
  files: readonly string[];
}

/** A catalogue that cannot be loaded. `files` names the relative paths involved. */
export class CatalogueError extends Error {
  readonly files: readonly string[];
  constructor(message: string, files: readonly string[]) {
    super(message);
    this.name = 'CatalogueError';
    this.files = files;
  }
}

const F = 'loadCatalogue';
const MARKDOWN = /\.(?:md|markdown)$/i;
const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]{0,31}$/;
const PREFIX = /^[A-Za-z][A-Za-z0-9+.-]{0,31}:\/\/[^\s]{0,200}$/;
const MAX_FRONTMATTER = 64 * 1024;

function positiveInt(option: string, v: unknown, dflt: number): number {
  if (v === undefined) return dflt;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1)
    throw badOption(F, option, v, 'a positive integer');
  return v;
}

interface Resolved {
  prefix: string;
  promptsDir: string | false;
  maxFileBytes: number;
  maxFiles: number;
  maxTotalBytes: number;
  maxDepth: number;
  descMax: number;
  strict: boolean;
}

function resolveOptions(o: CatalogueOptions): Resolved {
  if (!isObjectLike(o)) throw badOption(F, 'options', o, 'an object');
  const scheme = o.scheme ?? 'docs';
  let prefix: string;
  if (typeof scheme === 'string' && SCHEME.test(scheme)) prefix = scheme.toLowerCase() + '://';
  else if (typeof scheme === 'string' && PREFIX.test(scheme) && scheme.endsWith('/')) prefix = scheme;
  else
    throw badOption(
      F,
      'scheme',
      scheme,
      'a URI scheme such as "docs", or a prefix ending in "/" such as "srv://catalog/"',
    );
  const pd = o.promptsDir ?? 'prompts';
  if (
    pd !== false &&
    (typeof pd !== 'string' || pd === '' || pd.startsWith('.') || /[\\]|\/\/|^\/|\/$/.test(pd))
  ) {
    throw badOption(F, 'promptsDir', pd, 'a relative folder name such as "prompts", or false');
  }
  if (o.strictPlaceholders !== undefined && typeof o.strictPlaceholders !== 'boolean') {
    throw badOption(F, 'strictPlaceholders', o.strictPlaceholders, 'a boolean');
  }
  return {
    prefix,
    promptsDir: pd,
    maxFileBytes: positiveInt('maxFileBytes', o.maxFileBytes, 1024 * 1024),
    maxFiles: positiveInt('maxFiles', o.maxFiles, 1000),
    maxTotalBytes: positiveInt('maxTotalBytes', o.maxTotalBytes, 32 * 1024 * 1024),
    maxDepth: positiveInt('maxDepth', o.maxDepth, 8),
    descMax: positiveInt('descriptionMaxLength', o.descriptionMaxLength, 240),
    strict: o.strictPlaceholders ?? true,
  };
}

/** Regular files under `root`, relative paths with `/`, in lexical order; hidden entries and links skipped. */
async function walk(root: string, r: Resolved): Promise<string[]> {
  const out: string[] = [];
  async function visit(rel: string, depth: number): Promise<void> {
    const dirents = await readdir(rel === '' ? root : join(root, rel), { withFileTypes: true });
    // Code-unit order, not locale order: the same on every machine.
    dirents.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const d of dirents) {
      if (d.name.startsWith('.')) continue;
      const childRel = rel === '' ? d.name : `${rel}/${d.name}`;
      if (d.isDirectory()) {
        if (depth >= r.maxDepth)
          throw new CatalogueError(`catalogue: "${childRel}" is nested deeper than ${r.maxDepth} folders`, [
            childRel,
          ]);
        await visit(childRel, depth + 1);
      } else if (d.isFile()) {
        if (out.length >= r.maxFiles)
          throw new CatalogueError(`catalogue: more than ${r.maxFiles} files`, [childRel]);
        out.push(childRel);
      }
      // Symbolic links, sockets, FIFOs and devices are skipped: a link could point outside the folder.
    }
  }
  await visit('', 0);
  return out;
}

/** Read one file, refusing links (O_NOFOLLOW where the platform has it) and anything over the size bound. */
async function readBounded(root: string, rel: string, max: number): Promise<Buffer> {
  const flags = fsConstants.O_RDONLY | (fsConstants.O_NOFOLLOW ?? 0);
  const fh = await open(join(root, ...rel.split('/')), flags);
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw new CatalogueError(`catalogue: "${rel}" is not a regular file`, [rel]);
    if (st.size > max)
      throw new CatalogueError(`catalogue: "${rel}" is ${st.size} bytes, over the ${max}-byte limit`, [rel]);
    // Read one byte more than allowed so a file that grew since stat() is caught too.
    const buf = Buffer.alloc(Math.min(st.size, max) + 1);
    let n = 0;
    for (;;) {
      const { bytesRead } = await fh.read(buf, n, buf.length - n, n);
      if (bytesRead === 0) break;
      n += bytesRead;
      if (n === buf.length) break;
    }
    if (n > max) throw new CatalogueError(`catalogue: "${rel}" is over the ${max}-byte limit`, [rel]);
    return buf.subarray(0, n);
  } finally {
    await fh.close();
  }
}

interface Split {
  frontmatter: Record<string, unknown> | undefined;
  body: string;
}

/**
 * Split `---\n<yaml>\n---\n<body>`. No opening fence → no frontmatter. An opening fence without a closing one,
 * YAML that does not parse, or YAML that is not a mapping → a load error naming the file.
 */
export function splitFrontmatter(text: string, rel: string): Split {
  const src = text.startsWith('\uFEFF') ? text.slice(1) : text;
  const first = /^---[ \t]{0,64}\r?\n/.exec(src);
  if (!first) return { frontmatter: undefined, body: src };
  let pos = first[0].length;
  for (;;) {
    const nl = src.indexOf('\n', pos);
    const line = trimTrailingBlanks(nl < 0 ? src.slice(pos) : src.slice(pos, nl));
    if (line === '---' || line === '...') {
      const yamlText = src.slice(first[0].length, pos);
      if (yamlText.length > MAX_FRONTMATTER)
        throw new CatalogueError(`catalogue: "${rel}": frontmatter is over ${MAX_FRONTMATTER} bytes`, [rel]);
      let value: unknown;
      try {
        value = parseYaml(yamlText, { maxAliasCount: 50, uniqueKeys: true, prettyErrors: false });
      } catch (e) {
        const why = e instanceof Error ? e.message.split('\n')[0] : 'parse error';
        throw new CatalogueError(`catalogue: "${rel}": frontmatter is not valid YAML (${why})`, [rel]);
      }
      if (value !== null && value !== undefined && !isObject(value)) {
        throw new CatalogueError(`catalogue: "${rel}": frontmatter must be a YAML mapping`, [rel]);
      }
      return {
        frontmatter: (value as Record<string, unknown> | null) ?? {},
        body: nl < 0 ? '' : src.slice(nl + 1),
      };
    }
    if (nl < 0) throw new CatalogueError(`catalogue: "${rel}": frontmatter has no closing "---" line`, [rel]);
    pos = nl + 1;
  }
}

/**
 * The first prose paragraph: blank lines and `#` headings before it are skipped; its lines are trimmed and
 * joined with single spaces; it ends at a blank line or a heading. Cut to `max` characters (on a code point
 * boundary) with `…` when longer. `undefined` when the body has no prose.
 */
export function firstParagraph(body: string, max: number): string | undefined {
  const words: string[] = [];
  for (const raw of body.split('\n')) {
    const line = raw.trim();
    const skip = line === '' || line.startsWith('#');
    if (skip) {
      if (words.length > 0) break;
      continue;
    }
    words.push(line);
  }
  if (words.length === 0) return undefined;
  const text = words.join(' ');
  const cps = Array.from(text);
  return cps.length > max ? cps.slice(0, max).join('') + '…' : text;
}

function optString(fm: Record<string, unknown>, field: string, rel: string): string | undefined {
  const v = fm[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string')
    throw new CatalogueError(`catalogue: "${rel}": frontmatter "${field}" must be a string`, [rel]);
  return v;
}

function readArguments(fm: Record<string, unknown>, rel: string): PromptArgument[] | undefined {
  const v = fm.arguments;
  if (v === undefined || v === null) return undefined;
  const bad = (why: string): CatalogueError =>
    new CatalogueError(`catalogue: "${rel}": frontmatter "arguments" ${why}`, [rel]);
  if (!Array.isArray(v)) throw bad('must be a list');
  const seen = new Set<string>();
  return v.map((a: unknown, i) => {
    if (!isObject(a) || typeof a.name !== 'string' || a.name === '')
      throw bad(`[${i}] needs a string "name"`);
    if (seen.has(a.name)) throw bad(`names "${a.name}" twice`);
    seen.add(a.name);
    const out: PromptArgument = { name: a.name };
    for (const f of ['title', 'description'] as const) {
      if (a[f] === undefined || a[f] === null) continue;
      if (typeof a[f] !== 'string') throw bad(`[${i}].${f} must be a string`);
      out[f] = a[f];
    }
    if (a.required !== undefined && a.required !== null) {
      if (typeof a.required !== 'boolean') throw bad(`[${i}].required must be true or false`);
      out.required = a.required;
    }
    return out;
  });
}

/** The prompt template: the body without leading blank lines and trailing whitespace. */
function templateOf(body: string): string {
  let start = 0;
  for (;;) {
    const nl = body.indexOf('\n', start);
    if (nl < 0 || body.slice(start, nl).trim() !== '') break;
    start = nl + 1;
  }
  return body.slice(start).trimEnd();
}

/** A line without trailing spaces, tabs and CR (a loop: `/[ \t\r]+$/` is quadratic on long blank runs). */
function trimTrailingBlanks(line: string): string {
  let end = line.length;
  while (end > 0) {
    const c = line.charCodeAt(end - 1);
    if (c !== 0x20 && c !== 0x09 && c !== 0x0d) break;
    end--;
  }
  return line.slice(0, end);
}

/** Load a catalogue from `dir`. Rejects with a {@link CatalogueError} (or a TypeError for bad options). */
export async function loadCatalogue(dir: string, options: CatalogueOptions = {}): Promise<Catalogue> {
  if (typeof dir !== 'string' || dir === '') throw badOption(F, 'dir', dir, 'a folder path');
  const r = resolveOptions(options);
  const files = await walk(dir, r);

  const entries: ResourceEntry[] = [];
  const bodies = new Map<string, ResourceBody>();
  const byPath = new Map<string, string>(); // relative path → canonical URI (for bare-path reads)
  const resourceNames = new Map<string, string>(); // name → file that claimed it
  const definitions: PromptDefinition[] = [];
  const promptNames = new Map<string, string>();
  const promptsPrefix = r.promptsDir === false ? undefined : r.promptsDir + '/';
  let total = 0;

  for (const rel of files) {
    const bytes = await readBounded(dir, rel, r.maxFileBytes);
    total += bytes.length;
    if (total > r.maxTotalBytes)
      throw new CatalogueError(`catalogue: files total more than ${r.maxTotalBytes} bytes`, [rel]);
    const isMarkdown = MARKDOWN.test(rel);
    const text = decodeUtf8(bytes);

    if (promptsPrefix !== undefined && isMarkdown && rel.startsWith(promptsPrefix)) {
      if (text === undefined)
        throw new CatalogueError(`catalogue: "${rel}": a prompt must be UTF-8 text`, [rel]);
      const { frontmatter: fm = {}, body } = splitFrontmatter(text, rel);
      const name = optString(fm, 'name', rel) ?? rel.slice(promptsPrefix.length).replace(MARKDOWN, '');
      if (name === '') throw new CatalogueError(`catalogue: "${rel}": frontmatter "name" is empty`, [rel]);
      const other = promptNames.get(name);
      if (other !== undefined) {
        throw new CatalogueError(`catalogue: "${other}" and "${rel}" both claim the prompt name "${name}"`, [
          other,
          rel,
        ]);
      }
      promptNames.set(name, rel);
      const args = readArguments(fm, rel);
      const template = templateOf(body);
      if (r.strict) {
        const declared = new Set((args ?? []).map((a) => a.name));
        const stray = placeholders(template).find((p) => !declared.has(p));
        if (stray !== undefined) {
          throw new CatalogueError(
            `catalogue: "${rel}": placeholder {{${stray}}} is not a declared argument`,
            [rel],
          );
        }
      }
      const def: PromptDefinition = { name, template };
      const title = optString(fm, 'title', rel);
      if (title !== undefined) def.title = title;
      const description = optString(fm, 'description', rel) ?? firstParagraph(template, r.descMax);
      if (description !== undefined) def.description = description;
      if (args !== undefined) def.arguments = args;
      definitions.push(def);
      continue;
    }

    const uri = r.prefix + rel.split('/').map(encodeURIComponent).join('/');
    let entry: ResourceEntry;
    let body: ResourceBody;
    if (isMarkdown && text !== undefined) {
      const { frontmatter: fm = {}, body: md } = splitFrontmatter(text, rel);
      entry = { uri, name: optString(fm, 'name', rel) ?? rel };
      const title = optString(fm, 'title', rel);
      if (title !== undefined) entry.title = title;
      const description = optString(fm, 'description', rel) ?? firstParagraph(md, r.descMax);
      if (description !== undefined) entry.description = description;
      entry.mimeType = 'text/markdown';
      entry.size = Buffer.byteLength(md, 'utf8');
      body = { text: md, mimeType: 'text/markdown' };
    } else {
      // Unknown extensions: text/plain when the bytes are UTF-8 without NULs, else opaque bytes.
      const mimeType =
        mimeForPath(rel) ??
        (text !== undefined && !text.includes('\0') ? 'text/plain' : 'application/octet-stream');
      entry = { uri, name: rel, mimeType, size: bytes.length };
      body = { bytes: new Uint8Array(bytes), mimeType };
    }
    if (entry.name === '')
      throw new CatalogueError(`catalogue: "${rel}": frontmatter "name" is empty`, [rel]);
    const other = resourceNames.get(entry.name);
    if (other !== undefined) {
      throw new CatalogueError(
        `catalogue: "${other}" and "${rel}" both claim the resource name "${entry.name}"`,
        [other, rel],
      );
    }
    resourceNames.set(entry.name, rel);
    entries.push(entry);
    bodies.set(uri, body);
    byPath.set(rel, uri);
  }

  const byUri = new Map(entries.map((e) => [e.uri, e] as const));
  /** Canonical URI for a canonical or bare form (`docs://a.md`, `a.md`, `/a.md`, with spaces trimmed). */
  const canonical = (u: string): string | undefined => {
    const t = u.trim();
    if (t.startsWith(r.prefix)) return byUri.has(t) ? t : undefined;
    return byPath.get(t.startsWith('/') ? t.slice(1) : t);
  };
  const frozenEntries = Object.freeze(entries.map((e) => Object.freeze(e)));
  const sortedDefs = [...definitions].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const byName = new Map(sortedDefs.map((d) => [d.name, d] as const));
  return {
    prefix: r.prefix,
    files: Object.freeze([...files]),
    resources: {
      entries: frozenEntries,
      list: () => frozenEntries,
      entry: (u) => {
        const c = canonical(u);
        return c === undefined ? undefined : byUri.get(c);
      },
      read: (u) => {
        const c = canonical(u);
        return c === undefined ? undefined : bodies.get(c);
      },
    },
    prompts: {
      definitions: Object.freeze(sortedDefs),
      list: () => sortedDefs,
      get: (name) => byName.get(name),
    },
  };
}
