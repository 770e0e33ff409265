/**
 * The types of the prompts handler object: prompt definitions, the sources that serve them, `prompts/get`
 * results, and the options of `prompts()`.
 *
 * @see docs/handlers/prompts.md
 */
import type { JsonObject } from '../../lib/jsonrpc.js';
import type { InputRequiredResult } from '../../lib/mrtr.js';
import { CHANGES, type ChangeFeed } from '../changes/index.js';
import type { CacheHint, CallContext } from '../../core/contract.js';
import type { Awaitable } from '../../core/maybe-promise.js';
import { COMPLETER, type Completer, type Icon } from '../shared.js';

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
  icons?: Icon[];
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
  /** Optional lookup by name, used by `prompts/get` instead of scanning `list()`. */
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
