/**
 * The markdown of a catalogue file: YAML frontmatter split from the body, the fallback description (the first
 * prose paragraph), frontmatter fields read with their types checked, and the prompt template of a body.
 *
 * @see docs/handlers/catalogue.md
 */
import { parse as parseYaml } from 'yaml';
import type { PromptArgument } from '../prompts/types.js';
import { isJsonObject } from '../../lib/json.js';
import { CatalogueError } from './types.js';

const MAX_FRONTMATTER = 64 * 1024;

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
      if (value !== null && value !== undefined && !isJsonObject(value)) {
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

export function optString(fm: Record<string, unknown>, field: string, rel: string): string | undefined {
  const v = fm[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string')
    throw new CatalogueError(`catalogue: "${rel}": frontmatter "${field}" must be a string`, [rel]);
  return v;
}

export function readArguments(fm: Record<string, unknown>, rel: string): PromptArgument[] | undefined {
  const v = fm.arguments;
  if (v === undefined || v === null) return undefined;
  const bad = (why: string): CatalogueError =>
    new CatalogueError(`catalogue: "${rel}": frontmatter "arguments" ${why}`, [rel]);
  if (!Array.isArray(v)) throw bad('must be a list');
  const seen = new Set<string>();
  return v.map((a: unknown, i) => {
    if (!isJsonObject(a) || typeof a.name !== 'string' || a.name === '')
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
export function templateOf(body: string): string {
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
