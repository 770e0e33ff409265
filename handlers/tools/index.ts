/**
 * Tools: the `ToolRegistry` (the `tools` handler object of `dispatch()`), `ok()`, and builders for the content
 * blocks a `tools/call` result carries.
 *
 * - Registration order is list order. Names are unique.
 * - Visibility is decided per request: a tool's `describe(ctx)` returns its description, or nothing to hide it
 *   from this caller. Nothing is cached across callers.
 * - An unknown and a hidden tool get the same refusal (-32602 with a hint naming only what this caller sees).
 * - `inputSchema` and `outputSchema` are static: compiled once with ajv (JSON Schema 2020-12) at registration,
 *   where `x-mcp-header` annotations are validated too (a bad annotation fails registration).
 * - Arguments that fail `inputSchema` get a tool error result naming the fields (the model can correct itself);
 *   `structuredContent` that fails `outputSchema` is a server bug: -32603, detail to the log.
 */
import Ajv2020 from 'ajv/dist/2020.js';
import type { IncomingMessage } from 'node:http';
import { deepFreeze, encodedOnce } from '../../lib/encode.js';
import { type Era, ErrorCode, McpError } from '../../lib/errors.js';
import type { JsonObject } from '../../lib/jsonrpc.js';
import { type InputRequiredResult, isInputRequiredResult } from '../../lib/mrtr.js';
import {
  type ParamHeader,
  checkParamHeaders,
  paramHeaders as scanParamHeaders,
} from '../../lib/xmcpheader.js';
import { CHANGES, ChangeFeed } from '../changes/index.js';
import { pageOrThrow } from '../shared.js';
import { type CallContext, HANDLER_METHODS } from '../contract.js';
import { stderrLogger } from '../../middleware/internal/respond.js';
import {
  TOOL_VIEWS_APPLIED,
  exposeThrough,
  resolveThrough,
  toolViewsOf,
} from '../../middleware/tool-filter/index.js';
import { isThenable } from '../../middleware/internal/maybe-promise.js';
import type { Logger } from '../../middleware/types.js';

type Awaitable<T> = T | Promise<T>;

/** A JSON Schema (2020-12 by default): an object, or `true`/`false`. */
export type JsonSchema = JsonObject | boolean;

/** Hints about a tool's behaviour. Untrusted by clients; tri-state (absent = unknown). */
export interface ToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
  [key: string]: unknown;
}

/** A tool as `tools/list` shows it (MCP 2026-07-28 `Tool`). */
export interface ToolDefinition {
  name: string;
  title?: string;
  description?: string;
  inputSchema: JsonObject;
  outputSchema?: JsonSchema;
  annotations?: ToolAnnotations;
  icons?: unknown[];
  _meta?: JsonObject;
  [key: string]: unknown;
}

/** What `describe(ctx)` returns: everything but the registry-owned `name`, `inputSchema` and `outputSchema`. */
export type ToolDescription = Omit<Partial<ToolDefinition>, 'name' | 'inputSchema' | 'outputSchema'>;

export interface ContentAnnotations {
  audience?: ('user' | 'assistant')[];
  priority?: number;
  lastModified?: string;
}
interface BlockExtra {
  annotations?: ContentAnnotations;
  _meta?: JsonObject;
}
export interface TextContent extends BlockExtra {
  type: 'text';
  text: string;
}
export interface ImageContent extends BlockExtra {
  type: 'image';
  data: string;
  mimeType: string;
}
export interface AudioContent extends BlockExtra {
  type: 'audio';
  data: string;
  mimeType: string;
}
export interface ResourceLink extends BlockExtra {
  type: 'resource_link';
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  size?: number;
  icons?: unknown[];
}
export interface EmbeddedResource extends BlockExtra {
  type: 'resource';
  resource:
    | { uri: string; mimeType?: string; text: string; _meta?: JsonObject }
    | { uri: string; mimeType?: string; blob: string; _meta?: JsonObject };
}
export type ContentBlock = TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource;

/** A `tools/call` result (without the protocol fields the dispatcher adds). */
export interface CallToolResult {
  content: ContentBlock[];
  /** Any JSON value (2026-07-28); must conform to the tool's `outputSchema` when it has one. */
  structuredContent?: unknown;
  isError?: boolean;
  _meta?: JsonObject;
  [key: string]: unknown;
}

/**
 * A tool. Its static fields are the default description; `describe(ctx)`, when present, decides per request
 * what this caller sees (return nothing to hide the tool). `inputSchema` defaults to
 * `{type: "object", additionalProperties: false}` (no arguments).
 */
export interface Tool<A extends JsonObject = JsonObject> {
  name: string;
  title?: string;
  description?: string;
  annotations?: ToolAnnotations;
  icons?: unknown[];
  _meta?: JsonObject;
  inputSchema?: JsonObject;
  outputSchema?: JsonSchema;
  /**
   * This caller's view of the tool, or `undefined`/`null`/`false` to hide it. Fields it returns replace the
   * static ones; `name`, `inputSchema` and `outputSchema` are the registry's and cannot be changed here.
   */
  describe?(ctx: CallContext): Awaitable<ToolDescription | undefined | null | false>;
  /**
   * Run the tool. Return a result (`ok(value)`, `toolError(message)`, …), or `ctx.inputRequired(…)` to ask the
   * client for input (you are called again with `ctx.inputResponses`); throw McpError for a JSON-RPC error.
   */
  call(args: A, ctx: CallContext): Awaitable<CallToolResult | InputRequiredResult>;
}

/** What the before hook sees. */
export interface ToolCallStart {
  /** The name the caller used. */
  name: string;
  /** The registered tool's name (differs from `name` when a tool filter renamed it). */
  tool: string;
  args: JsonObject;
  ctx: CallContext;
}

/** How a call ended. */
export type ToolCallOutcome =
  'ok' | 'tool_error' | 'unknown_tool' | 'invalid_arguments' | 'input_required' | 'error';

/** What the after hook sees: every call, refusals included, exactly once. */
export interface ToolCallEnd {
  name: string;
  /** The registered tool, when the name resolved to a visible one. */
  tool?: string;
  args: JsonObject;
  ctx: CallContext;
  outcome: ToolCallOutcome;
  /** The result (with outcome `input_required`, the InputRequiredResult the tool returned). */
  result?: CallToolResult;
  error?: unknown;
  elapsedMs: number;
}

/** The minimal ajv surface the registry uses (pass your own instance, e.g. with ajv-formats, or draft-07 Ajv). */
export interface SchemaCompiler {
  compile(schema: JsonSchema): SchemaValidator;
}
export interface SchemaValidator {
  (value: unknown): boolean | Promise<unknown>;
  errors?: readonly AjvErrorLike[] | null;
}
interface AjvErrorLike {
  keyword: string;
  instancePath: string;
  message?: string;
  params: Record<string, unknown>;
}

export interface ToolRegistryOptions {
  /** Tools to register now (more with `register()`). */
  tools?: readonly Tool[];
  /**
   * Compiles schemas. Default: a private Ajv 2020 instance (`allErrors`, non-strict so `x-mcp-header` and other
   * annotations pass, formats not validated). Pass your own for formats or another draft.
   */
  ajv?: SchemaCompiler;
  /** Tools per `tools/list` page; 0 (default) lists everything in one page. */
  pageSize?: number;
  /**
   * Replaces the unknown-tool refusal: return a result (answered in-band) or throw an McpError. `available`
   * holds the names this caller can see, never the hidden ones.
   */
  unknownTool?: (name: string, available: readonly string[], ctx: CallContext) => Awaitable<CallToolResult>;
  /** Runs before a visible tool with valid arguments is called; throw (e.g. an McpError) to refuse the call. */
  before?: (call: ToolCallStart) => Awaitable<void>;
  /** Runs once after every call, refusals included. Errors it throws are logged and ignored. */
  after?: (call: ToolCallEnd) => Awaitable<void>;
  /** Largest number of names in the unknown-tool hint. Default 100. */
  maxHint?: number;
  /** Where describe() failures and hook errors are logged. Default: stderr. */
  logger?: Logger;
}

interface Entry {
  tool: Tool;
  inputSchema: JsonObject;
  outputSchema: JsonSchema | undefined;
  validateInput: SchemaValidator;
  validateOutput: SchemaValidator | undefined;
  params: readonly ParamHeader[];
  /** Whether the outputSchema may be shown to 2025-11-25 clients (root `type: "object"` there). */
  legacyOutput: boolean;
  /** The static descriptive fields (title, description, annotations, icons, _meta), copied and frozen. */
  statics: Readonly<Record<string, unknown>>;
  /** The definition every caller sees when the tool has no describe(), per revision (frozen, shared). */
  defs: Readonly<Record<Era, ToolDefinition>>;
}

const isObj = (v: unknown): v is JsonObject => v !== null && typeof v === 'object' && !Array.isArray(v);

function clip(s: string, max = 64): string {
  return s.length > max ? s.slice(0, max) + '…' : s;
}

const NO_ARGUMENTS: JsonObject = deepFreeze({ type: 'object', additionalProperties: false });

/** A JSON Pointer instance path as a readable field name: `/a/0/b` → `a[0].b`. */
function fieldName(pointer: string, extra?: string): string {
  const parts =
    pointer === ''
      ? []
      : pointer
          .slice(1)
          .split('/')
          .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (extra !== undefined) parts.push(extra);
  let out = '';
  for (const p of parts) out += /^\d{1,10}$/.test(p) ? `[${p}]` : out === '' ? p : `.${p}`;
  return clip(out, 128);
}

const MAX_REPORTED_ERRORS = 10;

/** The tool error result for arguments that failed `inputSchema`: one line naming each bad field. */
function invalidArguments(errors: readonly AjvErrorLike[] | null | undefined): CallToolResult {
  const seen = new Set<string>();
  const parts: string[] = [];
  const fields: { field: string; message: string }[] = [];
  for (const e of errors ?? []) {
    let field: string;
    let message: string;
    if (e.keyword === 'required' && typeof e.params.missingProperty === 'string') {
      field = fieldName(e.instancePath, e.params.missingProperty);
      message = 'is required';
    } else if (e.keyword === 'additionalProperties' && typeof e.params.additionalProperty === 'string') {
      field = fieldName(e.instancePath, e.params.additionalProperty);
      message = 'is not allowed';
    } else {
      field = fieldName(e.instancePath);
      message = e.message ?? 'is invalid';
    }
    const line = `${field || '(arguments)'}: ${message}`;
    if (seen.has(line)) continue;
    seen.add(line);
    if (parts.length < MAX_REPORTED_ERRORS) {
      parts.push(line);
      fields.push({ field: field || '(arguments)', message });
    }
  }
  if (parts.length === 0) parts.push('(arguments): do not match the input schema');
  return {
    content: [{ type: 'text', text: `Invalid arguments: ${parts.join('; ')}` }],
    isError: true,
    _meta: { 'mcpware/invalidArguments': fields },
  };
}

function defaultCompiler(): SchemaCompiler {
  return new Ajv2020({
    allErrors: true,
    strict: false,
    validateFormats: false,
    logger: false,
  }) as unknown as SchemaCompiler;
}

/** The registry of tools: the `tools` handler object for `dispatch()` and the x-mcp-header lookup. */
export class ToolRegistry {
  /** The dispatcher may call exactly these members (`tools/list`, `tools/call`). */
  readonly [HANDLER_METHODS]: readonly string[] = Object.freeze(['list', 'call']);
  /** This registry applies tool filter views itself (so cursors and hints never name a filtered tool). */
  readonly [TOOL_VIEWS_APPLIED] = true;
  /**
   * Announces every `register()` and `remove()` to open `subscriptions/listen` streams (so a dispatcher serving
   * this registry declares `tools.listChanged`). Call `changes.listChanged()` yourself when what `describe()`
   * returns changes for everyone.
   */
  readonly changes = new ChangeFeed();
  /** Where `dispatch()` finds the feed (a symbol: no JSON-RPC method name reaches it). */
  readonly [CHANGES] = this.changes;

  readonly #entries = new Map<string, Entry>();
  /** How many registered tools have describe() (per-caller definitions). */
  #dynamic = 0;
  /** The whole tool list per revision while every tool is static: made once (lib/encode.ts encodedOnce). */
  #lists: Partial<Record<Era, ToolList>> = {};
  readonly #compiler: SchemaCompiler;
  readonly #pageSize: number;
  readonly #unknownTool: ToolRegistryOptions['unknownTool'];
  readonly #before: ToolRegistryOptions['before'];
  readonly #after: ToolRegistryOptions['after'];
  readonly #maxHint: number;
  readonly #logger: Logger;

  constructor(options: ToolRegistryOptions = {}) {
    if (options === null || typeof options !== 'object')
      throw new TypeError('ToolRegistry: options must be an object');
    const fn = (name: keyof ToolRegistryOptions): void => {
      const v = options[name];
      if (v !== undefined && typeof v !== 'function') throw badRegistryOption(name, v, 'a function');
    };
    fn('unknownTool');
    fn('before');
    fn('after');
    if (
      options.ajv !== undefined &&
      (options.ajv === null || typeof (options.ajv as SchemaCompiler).compile !== 'function')
    ) {
      throw badRegistryOption('ajv', options.ajv, 'an Ajv instance (an object with compile())');
    }
    const ps = options.pageSize ?? 0;
    if (typeof ps !== 'number' || !Number.isSafeInteger(ps) || ps < 0) {
      throw badRegistryOption('pageSize', ps, 'a non-negative integer (0 turns paging off)');
    }
    const mh = options.maxHint ?? 100;
    if (typeof mh !== 'number' || !Number.isSafeInteger(mh) || mh < 0) {
      throw badRegistryOption('maxHint', mh, 'a non-negative integer');
    }
    if (
      options.logger !== undefined &&
      (options.logger === null || typeof options.logger.error !== 'function')
    ) {
      throw badRegistryOption('logger', options.logger, 'a logger with an error() method');
    }
    if (options.tools !== undefined && !Array.isArray(options.tools)) {
      throw badRegistryOption('tools', options.tools, 'an array of tools');
    }
    this.#compiler = options.ajv ?? defaultCompiler();
    this.#pageSize = ps;
    this.#unknownTool = options.unknownTool;
    this.#before = options.before;
    this.#after = options.after;
    this.#maxHint = mh;
    this.#logger = options.logger ?? stderrLogger;
    if (options.tools) this.register(...options.tools);
  }

  /**
   * Register tools. Throws a TypeError (and registers none of them) for a duplicate or invalid name, a missing
   * `call`, an `inputSchema` that is not an object schema, a schema ajv cannot compile, or an invalid
   * `x-mcp-header` annotation.
   */
  register(...tools: Tool[]): this {
    const prepared: Entry[] = [];
    const names = new Set<string>();
    for (const tool of tools) {
      const entry = this.#prepare(tool);
      const name = entry.tool.name;
      if (this.#entries.has(name) || names.has(name))
        throw new TypeError(`ToolRegistry: duplicate tool name "${clip(name)}"`);
      names.add(name);
      prepared.push(entry);
    }
    for (const e of prepared) {
      this.#entries.set(e.tool.name, e);
      if (e.tool.describe !== undefined) this.#dynamic++;
    }
    if (prepared.length > 0) {
      this.#lists = {};
      this.changes.listChanged();
    }
    return this;
  }

  /** Remove a tool. Returns whether it was registered. */
  remove(name: string): boolean {
    const entry = this.#entries.get(name);
    if (entry === undefined) return false;
    this.#entries.delete(name);
    if (entry.tool.describe !== undefined) this.#dynamic--;
    this.#lists = {};
    this.changes.listChanged();
    return true;
  }

  /** Registered names, in registration order (whatever any caller may see). */
  get names(): string[] {
    return [...this.#entries.keys()];
  }

  /** Whether a tool of that name is registered. */
  has(name: string): boolean {
    return this.#entries.has(name);
  }

  /**
   * The `x-mcp-header` annotations of a tool (computed at registration), or `undefined` for an unknown name:
   * the lookup `checkHeaders({ paramHeaders: registry.paramHeaders })` uses. With `req`, the name is first
   * resolved through the request's tool filter views (a renamed tool's headers are its own), and a tool with a
   * `describe` (per-caller visibility) answers `undefined`: call() checks its headers once it knows the caller
   * may see it, so a hidden tool answers exactly like an unknown one. An arrow property, so it can be passed
   * around unbound.
   */
  readonly paramHeaders = (name: string, req?: IncomingMessage): readonly ParamHeader[] | undefined => {
    const actual = req === undefined ? name : resolveThrough(name, toolViewsOf(req.locals));
    const entry = actual === undefined ? undefined : this.#entries.get(actual);
    // A tool whose visibility is decided per caller is checked by call() once it is known to be visible:
    // refusing its headers here would tell a caller who may not see it that it exists.
    if (entry === undefined || (req !== undefined && entry.tool.describe !== undefined)) return undefined;
    return entry.params;
  };

  /** The definitions this caller can see, in registration order, named as the request's tool views show them. */
  async visibleTools(ctx: CallContext): Promise<ToolDefinition[]> {
    return this.#visible(ctx);
  }

  /** The visible tools: synchronously when no tool has describe(), else a promise. */
  #visible(ctx: CallContext): ToolDefinition[] | Promise<ToolDefinition[]> {
    const described: (ToolDefinition | undefined | Promise<ToolDefinition | undefined>)[] = [];
    let pending = false;
    for (const e of this.#entries.values()) {
      const d = this.#describe(e, ctx);
      if (d instanceof Promise) pending = true;
      described.push(d);
    }
    const views = toolViewsOf(ctx.locals);
    if (pending) return Promise.all(described).then((all) => expose(all, views));
    return expose(described as (ToolDefinition | undefined)[], views);
  }

  #page(visible: ToolDefinition[], params: JsonObject): ToolList {
    const page = pageOrThrow('tools', visible, (t) => t.name, params ?? {}, this.#pageSize);
    return page.nextCursor === undefined
      ? { tools: page.page }
      : { tools: page.page, nextCursor: page.nextCursor };
  }

  /** `tools/list`: synchronous when no tool has describe(). */
  list(params: JsonObject, ctx: CallContext): ToolList | Promise<ToolList> {
    const whole = this.#wholeList(params, ctx);
    if (whole !== undefined) return whole;
    const visible = this.#visible(ctx);
    return visible instanceof Promise
      ? visible.then((v) => this.#page(v, params))
      : this.#page(visible, params);
  }

  /**
   * The whole list, the same object for every request of a revision, when the answer cannot depend on the
   * caller or the request: every tool static, no tool filter views, the first page holding every tool. It is
   * what `#page(#visible())` gives, as an `encodedOnce()` copy: made once and frozen.
   */
  #wholeList(params: JsonObject, ctx: CallContext): ToolList | undefined {
    if (this.#dynamic > 0) return undefined;
    const cursor = params?.cursor;
    if (cursor !== undefined && cursor !== null && cursor !== '') return undefined;
    if (this.#pageSize > 0 && this.#entries.size > this.#pageSize) return undefined;
    if (toolViewsOf(ctx.locals).length > 0) return undefined;
    const era = eraOf(ctx);
    let list = this.#lists[era];
    if (list === undefined) {
      const tools: ToolDefinition[] = [];
      for (const e of this.#entries.values()) tools.push(e.defs[era]);
      list = this.#lists[era] = encodedOnce({ tools });
    }
    return list;
  }

  /** call() when a step may wait: a dynamic or unknown tool, or before/after hooks. */
  async #callAsync(params: JsonObject, ctx: CallContext): Promise<CallToolResult> {
    const p = params ?? {};
    const args = callArguments(p);
    const name = p.name as string;
    const started = performance.now();
    const end: Omit<ToolCallEnd, 'outcome' | 'elapsedMs'> & { outcome?: ToolCallOutcome } = {
      name,
      args,
      ctx,
    };
    try {
      const actual = resolveThrough(name, toolViewsOf(ctx.locals));
      const entry = actual === undefined ? undefined : this.#entries.get(actual);
      const described = entry ? this.#describe(entry, ctx) : undefined;
      const def = described instanceof Promise ? await described : described;
      if (!entry || !def) {
        end.outcome = 'unknown_tool';
        const available = (await this.visibleTools(ctx)).map((t) => t.name).slice(0, this.#maxHint);
        if (this.#unknownTool) {
          const r = await this.#unknownTool(name, available, ctx);
          end.result = r;
          return r;
        }
        throw new McpError(ErrorCode.InvalidParams, `Unknown tool: "${clip(name)}"`, {
          tool: name,
          available,
        });
      }
      end.tool = entry.tool.name;
      if (entry.tool.describe !== undefined && entry.params.length > 0 && ctx.era === 'modern') {
        // The Mcp-Param-* check checkHeaders() leaves to us for tools of per-caller visibility (see paramHeaders).
        const bad = checkParamHeaders(entry.params, args, ctx.req.headers);
        if (bad) throw new McpError(bad.code, bad.message, bad.data, bad.status);
      }
      if (entry.validateInput(args) !== true) {
        end.outcome = 'invalid_arguments';
        const r = invalidArguments(entry.validateInput.errors);
        end.result = r;
        return r;
      }
      end.outcome = 'error';
      if (this.#before) await this.#before({ name, tool: entry.tool.name, args, ctx });
      const called = entry.tool.call(args, ctx);
      const r = isThenable(called) ? await called : called;
      if (isInputRequiredResult(r)) {
        // Checked and encoded by the dispatcher (capabilities, shape); the tool's outputSchema does not apply.
        end.result = r as unknown as CallToolResult;
        end.outcome = 'input_required';
        return end.result;
      }
      const result = this.#checkResult(entry, r, ctx);
      end.result = result;
      end.outcome = result.isError === true ? 'tool_error' : 'ok';
      return result;
    } catch (err) {
      end.error = err;
      end.outcome ??= 'error';
      throw err;
    } finally {
      if (this.#after) {
        const info: ToolCallEnd = {
          ...end,
          outcome: end.outcome ?? 'error',
          elapsedMs: performance.now() - started,
        };
        try {
          await this.#after(info);
        } catch (e) {
          this.#log('ToolRegistry: after hook failed', e);
        }
      }
    }
  }

  /**
   * `tools/call`: synchronous when the tool is static (no describe()), its result is not a promise and there are
   * no before/after hooks. When the tool asked for input (`ctx.inputRequired(…)`), the value is that
   * InputRequiredResult (tell them apart with `isInputRequiredResult`); the declared type stays the common case.
   */
  call(params: JsonObject, ctx: CallContext): CallToolResult | Promise<CallToolResult> {
    if (this.#before !== undefined || this.#after !== undefined) return this.#callAsync(params, ctx);
    const p = params ?? {};
    const args = callArguments(p);
    const actual = resolveThrough(p.name as string, toolViewsOf(ctx.locals));
    const entry = actual === undefined ? undefined : this.#entries.get(actual);
    // Unknown, hidden or dynamic tools: the general path (its unknown-tool answer lists what this caller sees).
    if (!entry || entry.tool.describe !== undefined) return this.#callAsync(params, ctx);
    if (entry.validateInput(args) !== true) return invalidArguments(entry.validateInput.errors);
    const called = entry.tool.call(args, ctx);
    if (isThenable(called)) return Promise.resolve(called).then((r) => this.#settle(entry, r, ctx));
    return this.#settle(entry, called, ctx);
  }

  /** A tool's answer: an input-required result as it is (the dispatcher checks it), else the checked result. */
  #settle(entry: Entry, r: unknown, ctx: CallContext): CallToolResult {
    if (isInputRequiredResult(r)) return r as unknown as CallToolResult;
    return this.#checkResult(entry, r, ctx);
  }

  #prepare(tool: Tool): Entry {
    if (tool === null || typeof tool !== 'object')
      throw new TypeError(`ToolRegistry: a tool must be an object, got ${String(tool)}`);
    const name: unknown = tool.name;
    if (typeof name !== 'string' || name.length === 0 || name.length > 128) {
      throw new TypeError(
        `ToolRegistry: a tool name must be a string of 1 to 128 characters, got ${JSON.stringify(name)}`,
      );
    }
    const where = `ToolRegistry: tool "${clip(name)}"`;
    if (typeof tool.call !== 'function') throw new TypeError(`${where}: call must be a function`);
    if (tool.describe !== undefined && typeof tool.describe !== 'function')
      throw new TypeError(`${where}: describe must be a function`);
    let inputSchema: JsonObject;
    if (tool.inputSchema === undefined) inputSchema = NO_ARGUMENTS;
    else {
      if (!isObj(tool.inputSchema) || tool.inputSchema.type !== 'object') {
        throw new TypeError(`${where}: inputSchema must be a JSON Schema object with "type": "object"`);
      }
      inputSchema = deepFreeze(structuredClone(tool.inputSchema));
    }
    let outputSchema: JsonSchema | undefined;
    if (tool.outputSchema !== undefined) {
      if (!isObj(tool.outputSchema) && typeof tool.outputSchema !== 'boolean') {
        throw new TypeError(`${where}: outputSchema must be a JSON Schema (an object or a boolean)`);
      }
      outputSchema =
        typeof tool.outputSchema === 'boolean'
          ? tool.outputSchema
          : deepFreeze(structuredClone(tool.outputSchema));
    }
    const statics = staticFields(tool, where);
    const headers = scanParamHeaders(inputSchema);
    if (!headers.ok) throw new TypeError(`${where}: invalid x-mcp-header annotation: ${headers.error}`);
    const compile = (schema: JsonSchema, which: string): SchemaValidator => {
      try {
        return this.#compiler.compile(schema);
      } catch (e) {
        throw new TypeError(
          `${where}: ${which} does not compile: ${e instanceof Error ? e.message : String(e)}`,
        );
      }
    };
    const validateInput = compile(inputSchema, 'inputSchema');
    const validateOutput = outputSchema === undefined ? undefined : compile(outputSchema, 'outputSchema');
    const legacyOutput = isObj(outputSchema) && outputSchema.type === 'object';
    const shape = { tool, inputSchema, outputSchema, legacyOutput, statics };
    return {
      ...shape,
      validateInput,
      validateOutput,
      params: Object.freeze(headers.params),
      defs: Object.freeze({
        legacy: Object.freeze(definition(shape, undefined, 'legacy')),
        modern: Object.freeze(definition(shape, undefined, 'modern')),
      }),
    };
  }

  /**
   * This caller's definition of a tool, or `undefined` when hidden (a failing describe() hides the tool):
   * synchronous for a static tool, a promise when it has describe().
   */
  #describe(e: Entry, ctx: CallContext): ToolDefinition | undefined | Promise<ToolDefinition | undefined> {
    return e.tool.describe ? this.#describeDynamic(e, ctx) : e.defs[eraOf(ctx)];
  }

  async #describeDynamic(e: Entry, ctx: CallContext): Promise<ToolDefinition | undefined> {
    const t = e.tool;
    let d: ToolDescription | undefined | null | false;
    if (t.describe) {
      try {
        d = await t.describe(ctx);
      } catch (err) {
        this.#log(
          `ToolRegistry: describe() of tool "${clip(t.name)}" failed; the tool is hidden for this request`,
          err,
        );
        return undefined;
      }
      if (!d) return undefined;
      if (!isObj(d)) {
        this.#log(
          `ToolRegistry: describe() of tool "${clip(t.name)}" returned a non-object; the tool is hidden`,
          undefined,
        );
        return undefined;
      }
    }
    return d ? definition(e, d, eraOf(ctx)) : e.defs[eraOf(ctx)];
  }

  #checkResult(e: Entry, r: unknown, ctx: CallContext): CallToolResult {
    const name = e.tool.name;
    if (!isObj(r) || !Array.isArray(r.content)) {
      throw new Error(`tool "${name}" returned an invalid result (expected an object with a content array)`);
    }
    for (const block of r.content as unknown[]) {
      if (!isObj(block) || typeof block.type !== 'string') {
        throw new Error(
          `tool "${name}" returned an invalid content block (expected an object with a string type)`,
        );
      }
    }
    const result = r as CallToolResult;
    if (e.validateOutput && result.isError !== true) {
      if (!('structuredContent' in result) || e.validateOutput(result.structuredContent) !== true) {
        const detail = (e.validateOutput.errors ?? [])
          .slice(0, 5)
          .map((x) => `${x.instancePath || '/'} ${x.message ?? ''}`)
          .join('; ');
        throw new Error(
          `tool "${name}" returned structuredContent that does not match its outputSchema: ${detail || 'missing'}`,
        );
      }
    }
    // 2025-11-25 allows only an object here; the text block still carries the value for legacy clients.
    if (ctx.era === 'legacy' && 'structuredContent' in result && !isObj(result.structuredContent)) {
      const { structuredContent: _dropped, ...rest } = result;
      return rest as CallToolResult;
    }
    return result;
  }

  #log(message: string, err: unknown): void {
    try {
      this.#logger.error(
        message,
        err === undefined
          ? undefined
          : { error: err instanceof Error ? { message: err.message, stack: err.stack } : String(err) },
      );
    } catch {
      // A broken logger must not break tools/list.
    }
  }
}

/** The arguments of a `tools/call` (`{}` when absent), after checking that `name` is a string. */
function callArguments(p: JsonObject): JsonObject {
  if (typeof p.name !== 'string')
    throw new McpError(ErrorCode.InvalidParams, 'Invalid params: "name" must be a string');
  const raw = p.arguments;
  if (raw !== undefined && raw !== null && !isObj(raw)) {
    throw new McpError(ErrorCode.InvalidParams, 'Invalid params: "arguments" must be an object');
  }
  return isObj(raw) ? raw : {};
}

/** A `tools/list` result. */
type ToolList = { tools: ToolDefinition[]; nextCursor?: string };

/** The described tools a caller sees, renamed through its tool filter views. */
function expose(
  described: readonly (ToolDefinition | undefined)[],
  views: ReturnType<typeof toolViewsOf>,
): ToolDefinition[] {
  const out: ToolDefinition[] = [];
  for (const def of described) {
    if (!def) continue;
    if (views.length === 0) {
      out.push(def);
      continue;
    }
    const e = exposeThrough(def.name, views);
    if (!e) continue;
    out.push(
      e.description === undefined
        ? { ...def, name: e.name }
        : { ...def, name: e.name, description: e.description },
    );
  }
  return out;
}

/** The revision whose definitions a request sees (legacy unless the request is modern). */
function eraOf(ctx: CallContext): Era {
  return ctx.era === 'modern' ? 'modern' : 'legacy';
}

/**
 * A tool's definition for one revision: name and inputSchema, then the static fields with what describe()
 * returned over them (`d`), then the outputSchema where that revision may see it.
 */
function definition(
  e: Pick<Entry, 'tool' | 'inputSchema' | 'outputSchema' | 'legacyOutput' | 'statics'>,
  d: ToolDescription | undefined,
  era: Era,
): ToolDefinition {
  const def: ToolDefinition = { name: e.tool.name, inputSchema: e.inputSchema };
  const src: Record<string, unknown> = d ? { ...e.statics, ...d } : e.statics;
  for (const k of Object.keys(src)) {
    if (k === 'name' || k === 'inputSchema' || k === 'outputSchema' || src[k] === undefined) continue;
    def[k] = src[k];
  }
  if (e.outputSchema !== undefined && (era === 'modern' || e.legacyOutput)) def.outputSchema = e.outputSchema;
  return def;
}

/**
 * A tool's static descriptive fields as `tools/list` shows them, read once at registration: their JSON parsed
 * back and frozen (like the schemas), so a later change to the tool object does not reach the list (use
 * describe() for definitions that change). Throws a TypeError for a value JSON cannot hold (a BigInt, a cycle).
 */
function staticFields(t: Tool, where: string): Readonly<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  if (t.title !== undefined) out.title = t.title;
  if (t.description !== undefined) out.description = t.description;
  if (t.annotations !== undefined) out.annotations = t.annotations;
  if (t.icons !== undefined) out.icons = t.icons;
  if (t._meta !== undefined) out._meta = t._meta;
  let text: string;
  try {
    text = JSON.stringify(out);
  } catch (err) {
    throw new TypeError(
      `${where}: title, description, annotations, icons and _meta must be JSON values (${err instanceof Error ? err.message : String(err)})`,
    );
  }
  return deepFreeze(JSON.parse(text) as Record<string, unknown>);
}

function badRegistryOption(option: string, value: unknown, expected: string): TypeError {
  let shown: string;
  try {
    shown = typeof value === 'function' ? 'a function' : String(JSON.stringify(value));
  } catch {
    shown = String(value);
  }
  return new TypeError(`ToolRegistry: option "${option}" must be ${expected}, got ${shown}`);
}

// ---------------------------------------------------------------------------------------------------------------
// Results and content blocks

/**
 * A successful result carrying `value` twice: as `structuredContent`, and as a text block with the same JSON
 * (for clients that read only text). Throws a TypeError when `value` has no JSON form (undefined, a function).
 */
export function ok(value: unknown, extra: { _meta?: JsonObject } = {}): CallToolResult {
  const text = JSON.stringify(value);
  if (text === undefined) throw new TypeError('ok(): the value has no JSON representation');
  const r: CallToolResult = { content: [{ type: 'text', text }], structuredContent: value };
  if (extra._meta !== undefined) r._meta = extra._meta;
  return r;
}

/** A plain text result. */
export function textResult(text: string): CallToolResult {
  return { content: [textBlock(text)] };
}

/** A tool error the model can read and act on (`isError: true`): business failures, upstream API errors. */
export function toolError(
  message: string,
  extra: { structuredContent?: unknown; _meta?: JsonObject } = {},
): CallToolResult {
  const r: CallToolResult = { content: [textBlock(message)], isError: true };
  if ('structuredContent' in extra) r.structuredContent = extra.structuredContent;
  if (extra._meta !== undefined) r._meta = extra._meta;
  return r;
}

function withExtra<T extends BlockExtra>(block: T, extra: BlockExtra | undefined): T {
  if (extra?.annotations !== undefined) block.annotations = extra.annotations;
  if (extra?._meta !== undefined) block._meta = extra._meta;
  return block;
}

/** A `text` content block. */
export function textBlock(text: string, extra?: BlockExtra): TextContent {
  if (typeof text !== 'string') throw new TypeError('textBlock(): text must be a string');
  return withExtra<TextContent>({ type: 'text', text }, extra);
}

/**
 * Binary data as standard padded Base64. A string is taken as Base64 already and must be canonical (RFC 4648
 * alphabet, padding, no stray bits): a TypeError otherwise, so a raw string is never sent as if it were Base64.
 */
export function toBase64(data: Uint8Array | ArrayBuffer | string, what = 'data'): string {
  if (typeof data === 'string') {
    if (data.length % 4 !== 0 || Buffer.from(data, 'base64').toString('base64') !== data) {
      throw new TypeError(`${what} must be bytes or canonical standard Base64`);
    }
    return data;
  }
  if (data instanceof ArrayBuffer) return Buffer.from(data).toString('base64');
  if (data instanceof Uint8Array)
    return Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('base64');
  throw new TypeError(`${what} must be a Uint8Array, an ArrayBuffer or a Base64 string`);
}

function mime(m: unknown, what: string): string {
  if (typeof m !== 'string' || m.length === 0)
    throw new TypeError(`${what}: mimeType must be a non-empty string`);
  return m;
}

/** An `image` content block; bytes are Base64-encoded. */
export function imageBlock(
  data: Uint8Array | ArrayBuffer | string,
  mimeType: string,
  extra?: BlockExtra,
): ImageContent {
  return withExtra<ImageContent>(
    { type: 'image', data: toBase64(data, 'imageBlock(): data'), mimeType: mime(mimeType, 'imageBlock()') },
    extra,
  );
}

/** An `audio` content block; bytes are Base64-encoded. */
export function audioBlock(
  data: Uint8Array | ArrayBuffer | string,
  mimeType: string,
  extra?: BlockExtra,
): AudioContent {
  return withExtra<AudioContent>(
    { type: 'audio', data: toBase64(data, 'audioBlock(): data'), mimeType: mime(mimeType, 'audioBlock()') },
    extra,
  );
}

/** A `resource_link` content block (a resource the client may read later). Unset fields are omitted. */
export function resourceLink(link: Omit<ResourceLink, 'type'>): ResourceLink {
  if (link === null || typeof link !== 'object')
    throw new TypeError('resourceLink(): expected { uri, name, … }');
  if (typeof link.uri !== 'string' || link.uri === '')
    throw new TypeError('resourceLink(): uri must be a non-empty string');
  if (typeof link.name !== 'string' || link.name === '')
    throw new TypeError('resourceLink(): name must be a non-empty string');
  const out: ResourceLink = { type: 'resource_link', uri: link.uri, name: link.name };
  for (const k of ['title', 'description', 'mimeType', 'size', 'icons', 'annotations', '_meta'] as const) {
    if (link[k] !== undefined) (out as unknown as Record<string, unknown>)[k] = link[k];
  }
  return out;
}

/** An embedded `resource` block: give exactly one of `text` or `blob` (bytes, Base64-encoded here). */
export function embeddedResource(
  resource: {
    uri: string;
    mimeType?: string;
    text?: string;
    blob?: Uint8Array | ArrayBuffer | string;
    _meta?: JsonObject;
  },
  extra?: BlockExtra,
): EmbeddedResource {
  if (resource === null || typeof resource !== 'object')
    throw new TypeError('embeddedResource(): expected { uri, text | blob }');
  if (typeof resource.uri !== 'string' || resource.uri === '')
    throw new TypeError('embeddedResource(): uri must be a non-empty string');
  const hasText = resource.text !== undefined;
  const hasBlob = resource.blob !== undefined;
  if (hasText === hasBlob) throw new TypeError('embeddedResource(): give exactly one of text or blob');
  const base: { uri: string; mimeType?: string; _meta?: JsonObject } = { uri: resource.uri };
  if (resource.mimeType !== undefined) base.mimeType = mime(resource.mimeType, 'embeddedResource()');
  if (resource._meta !== undefined) base._meta = resource._meta;
  let inner: EmbeddedResource['resource'];
  if (hasText) {
    if (typeof resource.text !== 'string') throw new TypeError('embeddedResource(): text must be a string');
    inner = { ...base, text: resource.text };
  } else inner = { ...base, blob: toBase64(resource.blob!, 'embeddedResource(): blob') };
  return withExtra<EmbeddedResource>({ type: 'resource', resource: inner }, extra);
}
