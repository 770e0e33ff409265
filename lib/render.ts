/**
 * `{{arg}}` placeholder rendering for prompt templates.
 *
 * One left-to-right pass: substituted text is never scanned again, so an argument value containing `{{other}}`
 * stays literal (no double evaluation, no injection of one argument into another). Pure: no I/O.
 */

/**
 * A placeholder: `{{name}}` with up to 8 spaces inside either brace pair. Names are 1–64 characters of
 * `[A-Za-z0-9_.-]` starting with a letter or `_`. Every quantifier is bounded and the classes are disjoint
 * from their neighbours, so matching is linear.
 */
const PLACEHOLDER = /\{\{ {0,8}([A-Za-z_][A-Za-z0-9_.-]{0,63}) {0,8}\}\}/g;

/** Default bound on the rendered text, in UTF-16 code units (about 1 MiB of ASCII). */
export const DEFAULT_MAX_RENDERED = 1024 * 1024;

export interface RenderOptions {
  /**
   * Names that render as `""` when no value is given (declared optional arguments). A placeholder that is
   * neither given nor declared is left as written, so text such as `{{example}}` in prose survives.
   */
  declared?: Iterable<string>;
  /** Largest rendered text accepted, in UTF-16 code units. Default {@link DEFAULT_MAX_RENDERED}. */
  maxLength?: number;
}

export type RenderResult =
  | { readonly ok: true; readonly text: string }
  | { readonly ok: false; readonly reason: 'too_large'; readonly message: string };

/** Render `template`, replacing each `{{name}}` with `values[name]`. */
export function renderTemplate(
  template: string,
  values: Readonly<Record<string, string>>,
  opts: RenderOptions = {},
): RenderResult {
  const declared = new Set(opts.declared ?? []);
  const max = opts.maxLength ?? DEFAULT_MAX_RENDERED;
  let out = '';
  let last = 0;
  const re = new RegExp(PLACEHOLDER.source, 'g'); // per call: a shared /g regex carries lastIndex between calls
  for (let m = re.exec(template); m !== null; m = re.exec(template)) {
    const name = m[1]!;
    // Own properties only: a placeholder named `constructor` or `__proto__` must not reach Object.prototype.
    const has = Object.hasOwn(values, name);
    let sub: string;
    if (has) sub = String(values[name]);
    else if (declared.has(name)) sub = '';
    else continue;
    out += template.slice(last, m.index) + sub;
    last = m.index + m[0].length;
    // Checked as we go so a template repeating a large value many times fails before it builds it all.
    if (out.length > max) return tooLarge(max);
  }
  out += template.slice(last);
  if (out.length > max) return tooLarge(max);
  return { ok: true, text: out };
}

function tooLarge(max: number): RenderResult {
  return { ok: false, reason: 'too_large', message: `Rendered prompt exceeds ${max} characters` };
}

/** The distinct placeholder names in a template, in order of first appearance. */
export function placeholders(template: string): string[] {
  const seen = new Set<string>();
  for (const m of template.matchAll(PLACEHOLDER)) seen.add(m[1]!);
  return [...seen];
}
