/**
 * Prompt definitions checked, listed and rendered: what `prompts/list` shows of a definition, and how
 * `prompts/get` turns one into a result (required arguments first, then the template or `render()`).
 *
 * @see docs/handlers/prompts.md
 */
import { ErrorCode, McpError } from '../../lib/errors.js';
import type { JsonObject } from '../../lib/jsonrpc.js';
import { type InputRequiredResult, isInputRequiredResult } from '../../lib/mrtr.js';
import { renderTemplate } from '../../lib/render.js';
import type { CallContext } from '../../core/contract.js';
import { copyOptional } from '../shared.js';
import { isJsonObject } from '../../lib/json.js';
import { badOption } from '../../core/options.js';
import type { PromptDefinition, PromptGetResult, PromptMessage } from './types.js';
import { clip } from '../../lib/clip.js';

const PROMPT_FIELDS = ['title', 'description', 'icons', '_meta'] as const;
const ARG_FIELDS = ['title', 'description', 'required'] as const;

/** Check one definition (at construction for in-memory prompts, on use for source-provided ones). */
export function checkDefinition(d: unknown, where: string): asserts d is PromptDefinition {
  const p = d as PromptDefinition;
  if (!isJsonObject(d) || typeof p.name !== 'string' || p.name === '') {
    throw badOption('prompts', where, d, 'a prompt with a non-empty string name');
  }
  if (p.template === undefined && typeof p.render !== 'function') {
    throw badOption('prompts', `${where}.template`, p.template, 'a string template, or a render() function');
  }
  if (p.template !== undefined && typeof p.template !== 'string') {
    throw badOption('prompts', `${where}.template`, p.template, 'a string');
  }
  if (p.arguments !== undefined) {
    if (!Array.isArray(p.arguments))
      throw badOption('prompts', `${where}.arguments`, p.arguments, 'an array');
    const names = new Set<string>();
    p.arguments.forEach((a, i) => {
      if (!isJsonObject(a) || typeof a.name !== 'string' || a.name === '' || names.has(a.name)) {
        const expected = 'an argument with a unique non-empty string name';
        throw badOption('prompts', `${where}.arguments[${i}]`, a, expected);
      }
      names.add(a.name);
    });
  }
}

/** A definition as `prompts/list` shows it. */
export function publicPrompt(p: PromptDefinition): JsonObject {
  const out: JsonObject = { name: p.name };
  copyOptional(out, p, PROMPT_FIELDS);
  if (p.arguments !== undefined) {
    out.arguments = p.arguments.map((a) => {
      const o: JsonObject = { name: a.name };
      copyOptional(o, a, ARG_FIELDS);
      return o;
    });
  }
  return out;
}

/** `params.arguments`: absent/null → `{}`; otherwise an object of strings, else -32602. */
export function readArguments(v: unknown): Record<string, string> {
  if (v === undefined || v === null) return {};
  if (!isJsonObject(v))
    throw new McpError(ErrorCode.InvalidParams, 'prompts/get: "arguments" must be an object');
  const out: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const k of Object.keys(v)) {
    const x = v[k];
    if (typeof x !== 'string') {
      throw new McpError(ErrorCode.InvalidParams, `prompts/get: argument "${clip(k)}" must be a string`);
    }
    out[k] = x;
  }
  return out;
}

/**
 * The `prompts/get` result of a visible definition (asked for as `name`): -32602 naming the first missing required argument, else
 * what `render()` built or the rendered template. An InputRequiredResult passes through under the common type.
 */
export async function getPrompt(
  name: string,
  def: PromptDefinition,
  args: Record<string, string>,
  maxRenderedLength: number,
  ctx: CallContext,
): Promise<PromptGetResult> {
  const declared = def.arguments ?? [];
  const missing = declared
    .filter((a) => a.required === true && !Object.hasOwn(args, a.name))
    .map((a) => a.name);
  if (missing.length > 0) {
    throw new McpError(
      ErrorCode.InvalidParams,
      `Missing required argument "${clip(missing[0]!)}" for prompt ${clip(name)}`,
      { name: clip(name, 256), missing },
    );
  }
  if (def.render) return normalizeRendered(await def.render(args, ctx), def) as PromptGetResult;
  const r = renderTemplate(def.template ?? '', args, {
    declared: declared.map((a) => a.name),
    maxLength: maxRenderedLength,
  });
  if (!r.ok)
    throw new McpError(ErrorCode.InvalidParams, `prompts/get: ${r.message}`, { name: clip(name, 256) });
  const out: PromptGetResult = { messages: [{ role: 'user', content: { type: 'text', text: r.text } }] };
  if (def.description !== undefined) out.description = def.description;
  return out;
}

function normalizeRendered(
  r: string | PromptMessage[] | PromptGetResult | InputRequiredResult,
  def: PromptDefinition,
): PromptGetResult | InputRequiredResult {
  // Passed through as is: the dispatcher checks and encodes it.
  if (isInputRequiredResult(r)) return r;
  let out: PromptGetResult;
  if (typeof r === 'string') out = { messages: [{ role: 'user', content: { type: 'text', text: r } }] };
  else if (Array.isArray(r)) out = { messages: r };
  else if (isJsonObject(r) && Array.isArray(r.messages)) out = { ...r };
  else
    throw new TypeError(
      `prompts: render() of "${def.name}" returned neither a string, messages, nor a result`,
    );
  if (out.description === undefined && def.description !== undefined) out.description = def.description;
  return out;
}
