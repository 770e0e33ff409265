/**
 * RFC 6570 level-1 URI templates (`{var}` simple string expansion) for resource templates: parsing with
 * validation, and matching a concrete URI back to its variables. Pure: no I/O, no regular expressions built
 * from input; matching is a left-to-right scan (linear in the URI length for each literal).
 */

export type TemplatePart = { readonly literal: string } | { readonly variable: string };

export interface ParsedTemplate {
  readonly ok: true;
  readonly template: string;
  readonly parts: readonly TemplatePart[];
  /** Variable names in order. */
  readonly variables: readonly string[];
}

export interface TemplateError {
  readonly ok: false;
  readonly reason: 'template_invalid';
  readonly message: string;
}

const invalid = (message: string): TemplateError => ({ ok: false, reason: 'template_invalid', message });

/** Longest template accepted, in characters. */
export const MAX_TEMPLATE_LENGTH = 1024;

// varname = varchar *( ["."] varchar ), varchar = ALPHA / DIGIT / "_" (pct-encoded names are not supported).
const VARNAME = /^[A-Za-z0-9_]{1,64}(?:\.[A-Za-z0-9_]{1,64}){0,8}$/;
// Characters RFC 6570 §2.1 forbids in literals (besides `{` and `}`, handled by the scanner).
const BAD_LITERAL = /[\x00-\x20"'<>\\^`|]/;

/**
 * Parse a level-1 template. Refused: operators (`{+x}`, `{?x}`, …), lists (`{a,b}`), modifiers (`{x*}`,
 * `{x:3}`), unbalanced braces, a variable used twice, and two variables with no literal between them (their
 * boundary would be ambiguous when matching).
 */
export function parseTemplate(template: string): ParsedTemplate | TemplateError {
  if (template.length === 0) return invalid('URI template is empty');
  if (template.length > MAX_TEMPLATE_LENGTH)
    return invalid(`URI template is longer than ${MAX_TEMPLATE_LENGTH} characters`);
  const parts: TemplatePart[] = [];
  const variables: string[] = [];
  let i = 0;
  while (i < template.length) {
    const open = template.indexOf('{', i);
    const close = template.indexOf('}', i);
    if (close >= 0 && (open < 0 || close < open))
      return invalid('URI template has a "}" without a matching "{"');
    const literal = template.slice(i, open < 0 ? template.length : open);
    if (literal.length > 0) {
      if (BAD_LITERAL.test(literal))
        return invalid('URI template contains a character not allowed in a literal');
      parts.push({ literal });
    }
    if (open < 0) break;
    const end = template.indexOf('}', open + 1);
    if (end < 0) return invalid('URI template has a "{" without a matching "}"');
    const name = template.slice(open + 1, end);
    if (!VARNAME.test(name)) {
      return invalid('URI template expressions must be level 1: {name} with letters, digits, "_" and "."');
    }
    if (variables.includes(name)) return invalid(`URI template uses the variable "${name}" twice`);
    const prev = parts[parts.length - 1];
    if (prev !== undefined && 'variable' in prev)
      return invalid('URI template has two variables with no literal between them');
    parts.push({ variable: name });
    variables.push(name);
    i = end + 1;
  }
  return { ok: true, template, parts, variables };
}

/**
 * Match `uri` against a parsed template. Returns the percent-decoded variable values, or `undefined` when the
 * URI does not match. A variable matches a non-empty run without `/`, `?` or `#` (level-1 expansion encodes
 * those, so a value never spans path segments); a variable followed by a literal ends at that literal's first
 * occurrence, and the final literal must end the URI.
 */
export function matchTemplate(t: ParsedTemplate, uri: string): Record<string, string> | undefined {
  const out: Record<string, string> = Object.create(null) as Record<string, string>;
  let pos = 0;
  const { parts } = t;
  for (let p = 0; p < parts.length; p++) {
    const part = parts[p]!;
    if ('literal' in part) {
      if (!uri.startsWith(part.literal, pos)) return undefined;
      pos += part.literal.length;
      continue;
    }
    const next = parts[p + 1] as { literal: string } | undefined; // never a variable: parseTemplate forbids it
    let end: number;
    if (next === undefined) end = uri.length;
    else if (p + 1 === parts.length - 1) {
      // The final literal anchors at the end of the URI.
      end = uri.length - next.literal.length;
      if (end < pos || !uri.endsWith(next.literal)) return undefined;
    } else {
      end = uri.indexOf(next.literal, pos);
      if (end < 0) return undefined;
    }
    const raw = uri.slice(pos, end);
    if (raw.length === 0 || /[/?#]/.test(raw)) return undefined;
    let value: string;
    try {
      value = decodeURIComponent(raw);
    } catch {
      return undefined; // malformed percent-encoding
    }
    out[part.variable] = value;
    pos = end;
  }
  return pos === uri.length ? out : undefined;
}

/** Expand a level-1 template (values percent-encoded as RFC 6570 simple expansion does). */
export function expandTemplate(t: ParsedTemplate, values: Readonly<Record<string, string>>): string {
  let out = '';
  for (const part of t.parts) {
    if ('literal' in part) out += part.literal;
    else {
      const v = Object.hasOwn(values, part.variable) ? values[part.variable]! : '';
      // encodeURIComponent leaves !'()* unencoded; RFC 6570 simple expansion encodes everything but unreserved.
      out += encodeURIComponent(v).replace(
        /[!'()*]/g,
        (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase(),
      );
    }
  }
  return out;
}
