/**
 * The prompts service: a handler object for `prompts/list` and `prompts/get` over small {@link PromptSource}s
 * (in-memory definitions, the markdown catalogue, or your own code).
 *
 * A prompt is a `{{arg}}` template sent as one user message, or a `render` function building the messages.
 * Unknown (or hidden) prompts and missing required arguments answer -32602, in-band.
 */
import { ErrorCode, McpError } from '../../lib/errors.js';
import type { JsonObject } from '../../lib/jsonrpc.js';
import { type InputRequiredResult, isInputRequiredResult } from '../../lib/mrtr.js';
import { DEFAULT_MAX_RENDERED, renderTemplate } from '../../lib/render.js';
import { CHANGES, type ChangeFeed, isChangeFeed } from '../changes/index.js';
import type { CacheHint, CallContext } from '../contract.js';
import { badOption } from '../../middleware/internal/options.js';
import {
  type Awaitable,
  COMPLETER,
  type Completer,
  checkCache,
  checkFunction,
  checkPageSize,
  checkSources,
  clip,
  copyOptional,
  isObject,
  isObjectLike,
  pageOrThrow,
  withCache,
} from '../shared.js';

export interface PromptArgument {
  name: string;
  title?: string;
  description?: string;
  required?: boolean;
}

/** One message of a prompt. `content` is an MCP content block (`{type:'text', text}`, an image, …). */
export interface PromptMessage {
  role: 'user' | 'assistant';
  content: { type: string; [k: string]: unknown };
}

/** The body of a `prompts/get` result. */
export interface PromptGetResult {
  description?: string;
  messages: PromptMessage[];
  _meta?: Record<string, unknown>;
}

export interface PromptDefinition {
  name: string;
  title?: string;
  description?: string;
  arguments?: PromptArgument[];
  icons?: { src: string; mimeType?: string; sizes?: string[]; theme?: 'light' | 'dark' }[];
  _meta?: Record<string, unknown>;
  /** Text with `{{arg}}` placeholders, sent as one user text message. A declared argument left out renders `""`. */
  template?: string;
  /**
   * Or build the result yourself (runs after required arguments were checked): a string (one user text
   * message), a message list, a whole result, or `ctx.inputRequired(…)` to ask the client for input first.
   */
  render?(
    args: Readonly<Record<string, string>>,
    ctx: CallContext,
  ): Awaitable<string | PromptMessage[] | PromptGetResult | InputRequiredResult>;
  /** Suggestions for an argument's value (`completion/complete` with `ref/prompt`). */
  complete?(
    argument: string,
    value: string,
    ctx: CallContext,
    context: Readonly<Record<string, string>>,
  ): Awaitable<readonly string[]>;
}

/** Where prompts come from. */
export interface PromptSource {
  /** Every prompt this source serves to this caller, in list order. */
  list(ctx: CallContext): Awaitable<readonly PromptDefinition[]>;
  /** Optional fast lookup by name, used by `prompts/get` instead of scanning `list()`. */
  get?(name: string, ctx: CallContext): Awaitable<PromptDefinition | undefined>;
}

export interface PromptsOptions {
  /** Prompt definitions served from memory (listed before any source). Names must be unique. */
  prompts?: PromptDefinition[];
  /** Further sources, in list order; the first to list a name owns it. */
  sources?: PromptSource[];
  /** Page size for `prompts/list`; 0 (default) sends the whole list. */
  pageSize?: number;
  /** Per-caller visibility: false hides a prompt from this caller in the list and in `prompts/get`. */
  visible?: (prompt: PromptDefinition, ctx: CallContext) => boolean;
  /** Cache hint for `prompts/list`. `public` is refused together with `visible`. */
  cache?: CacheHint;
  /** Largest rendered template accepted (UTF-16 code units); larger → -32602. Default 1 MiB. */
  maxRenderedLength?: number;
  /**
   * Call `changes.listChanged()` when the prompt list changes (a source's data changed): open
   * `subscriptions/listen` streams that asked for `promptsListChanged` are told. Given → `dispatch()` declares
   * `prompts.listChanged`.
   */
  changes?: ChangeFeed;
}

// A type alias, not an interface: only aliases get the implicit index signature `Handlers` asks for.
export type PromptsHandler = {
  list(params: JsonObject, ctx: CallContext): Promise<{ prompts: JsonObject[]; nextCursor?: string }>;
  /** May also answer an InputRequiredResult, when a `render()` asked for input (see `isInputRequiredResult`). */
  get(params: JsonObject, ctx: CallContext): Promise<PromptGetResult>;
  [COMPLETER]: Completer;
  [CHANGES]?: ChangeFeed;
};

const PROMPT_FIELDS = ['title', 'description', 'icons', '_meta'] as const;
const ARG_FIELDS = ['title', 'description', 'required'] as const;

/** Check one definition (at construction for in-memory prompts, on use for source-provided ones). */
function checkDefinition(d: unknown, where: string): asserts d is PromptDefinition {
  const p = d as PromptDefinition;
  if (!isObjectLike(d) || typeof p.name !== 'string' || p.name === '') {
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
      if (!isObject(a) || typeof a.name !== 'string' || a.name === '' || names.has(a.name)) {
        throw badOption(
          'prompts',
          `${where}.arguments[${i}]`,
          a,
          'an argument with a unique non-empty string name',
        );
      }
      names.add(a.name);
    });
  }
}

function publicPrompt(p: PromptDefinition): JsonObject {
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

/** Create the prompts handler object. */
export function prompts(options: PromptsOptions = {}): PromptsHandler {
  const F = 'prompts';
  if (!isObjectLike(options)) throw badOption(F, 'options', options, 'an object');
  const sources = checkSources<PromptSource>(F, options.sources, ['list']);
  const pageSize = checkPageSize(F, 'pageSize', options.pageSize);
  const visible = checkFunction<NonNullable<PromptsOptions['visible']>>(F, 'visible', options.visible);
  const cache = checkCache(F, options.cache);
  if (cache?.cacheScope === 'public' && visible) {
    throw badOption(F, 'cache', options.cache, "cacheScope 'private' when a visible hook filters per caller");
  }
  const maxRendered = options.maxRenderedLength ?? DEFAULT_MAX_RENDERED;
  if (!Number.isSafeInteger(maxRendered) || maxRendered < 1) {
    throw badOption(F, 'maxRenderedLength', options.maxRenderedLength, 'a positive integer');
  }
  const rawDefs: unknown = options.prompts ?? [];
  if (!Array.isArray(rawDefs)) throw badOption(F, 'prompts', rawDefs, 'an array of prompt definitions');
  const memory = new Map<string, PromptDefinition>();
  rawDefs.forEach((d: unknown, i) => {
    checkDefinition(d, `prompts[${i}]`);
    if (memory.has(d.name)) throw badOption(F, `prompts[${i}].name`, d.name, 'unique');
    memory.set(d.name, d);
  });
  const memoryList = [...memory.values()];
  if (options.changes !== undefined && !isChangeFeed(options.changes)) {
    throw badOption(F, 'changes', options.changes, 'a ChangeFeed');
  }

  const isVisible = (p: PromptDefinition, ctx: CallContext): boolean =>
    visible ? visible(p, ctx) === true : true;

  async function listAll(ctx: CallContext): Promise<PromptDefinition[]> {
    const seen = new Set<string>();
    const out: PromptDefinition[] = [];
    const add = (d: PromptDefinition): void => {
      if (seen.has(d.name)) return;
      seen.add(d.name);
      if (isVisible(d, ctx)) out.push(d);
    };
    memoryList.forEach(add);
    for (const s of sources) {
      for (const d of await s.list(ctx)) {
        checkDefinition(d, 'a source prompt');
        add(d);
      }
    }
    return out;
  }

  async function find(name: string, ctx: CallContext): Promise<PromptDefinition | undefined> {
    let def: PromptDefinition | undefined = memory.get(name);
    if (def === undefined) {
      for (const s of sources) {
        if (s.get) def = await s.get(name, ctx);
        else def = (await s.list(ctx)).find((d) => d?.name === name);
        if (def !== undefined) {
          checkDefinition(def, 'a source prompt');
          break;
        }
      }
    }
    return def !== undefined && isVisible(def, ctx) ? def : undefined;
  }

  const unknownPrompt = (name: string): McpError =>
    new McpError(ErrorCode.InvalidParams, `Unknown prompt: ${clip(name)}`, { name: clip(name, 256) });

  const handler: PromptsHandler = {
    async list(params, ctx) {
      const all = await listAll(ctx);
      const p = pageOrThrow('prompts', all, (d) => d.name, params, pageSize);
      const body: { prompts: JsonObject[]; nextCursor?: string } = { prompts: p.page.map(publicPrompt) };
      if (p.nextCursor !== undefined) body.nextCursor = p.nextCursor;
      return withCache(body, cache);
    },

    async get(params, ctx) {
      const name = params.name;
      if (typeof name !== 'string' || name === '') {
        throw new McpError(ErrorCode.InvalidParams, 'prompts/get: "name" must be a non-empty string');
      }
      const args = readArguments(params.arguments);
      const def = await find(name, ctx);
      if (def === undefined) throw unknownPrompt(name);
      const declared = def.arguments ?? [];
      const missing = declared
        .filter((a) => a.required === true && !Object.hasOwn(args, a.name))
        .map((a) => a.name);
      if (missing.length > 0) {
        throw new McpError(
          ErrorCode.InvalidParams,
          `Missing required argument "${clip(missing[0]!)}" for prompt ${clip(name)}`,
          {
            name: clip(name, 256),
            missing,
          },
        );
      }
      // An InputRequiredResult passes through under the common type (see PromptsHandler.get).
      if (def.render) return normalizeRendered(await def.render(args, ctx), def) as PromptGetResult;
      const r = renderTemplate(def.template ?? '', args, {
        declared: declared.map((a) => a.name),
        maxLength: maxRendered,
      });
      if (!r.ok)
        throw new McpError(ErrorCode.InvalidParams, `prompts/get: ${r.message}`, { name: clip(name, 256) });
      const out: PromptGetResult = { messages: [{ role: 'user', content: { type: 'text', text: r.text } }] };
      if (def.description !== undefined) out.description = def.description;
      return out;
    },

    [CHANGES]: options.changes,

    [COMPLETER]: {
      async complete(ref, argument, value, context, ctx) {
        if (ref.type !== 'ref/prompt' || typeof ref.name !== 'string') return undefined;
        const def = await find(ref.name, ctx);
        if (def === undefined) return undefined;
        if (!def.complete || !(def.arguments ?? []).some((a) => a.name === argument)) return [];
        return def.complete(argument, value, ctx, context);
      },
    },
  };
  return handler;
}

/** `params.arguments`: absent/null → `{}`; otherwise an object of strings, else -32602. */
function readArguments(v: unknown): Record<string, string> {
  if (v === undefined || v === null) return {};
  if (!isObject(v)) throw new McpError(ErrorCode.InvalidParams, 'prompts/get: "arguments" must be an object');
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

function normalizeRendered(
  r: string | PromptMessage[] | PromptGetResult | InputRequiredResult,
  def: PromptDefinition,
): PromptGetResult | InputRequiredResult {
  // Passed through as is: the dispatcher checks and encodes it.
  if (isInputRequiredResult(r)) return r;
  let out: PromptGetResult;
  if (typeof r === 'string') out = { messages: [{ role: 'user', content: { type: 'text', text: r } }] };
  else if (Array.isArray(r)) out = { messages: r };
  else if (isObject(r) && Array.isArray(r.messages)) out = { ...r };
  else
    throw new TypeError(
      `prompts: render() of "${def.name}" returned neither a string, messages, nor a result`,
    );
  if (out.description === undefined && def.description !== undefined) out.description = def.description;
  return out;
}
