/**
 * `ToolRegistry`: the `tools` handler object of `dispatch()` (`tools/list`, `tools/call`) and the `x-mcp-header`
 * lookup of `checkHeaders()`.
 *
 * - Registration order is list order. Names are unique.
 * - Visibility is decided per request: a tool's `describe(ctx)` returns its description, or nothing to hide it
 *   from this caller. Nothing is cached across callers.
 * - An unknown and a hidden tool get the same refusal (-32602 with a hint naming only what this caller sees).
 * - `inputSchema` and `outputSchema` are static: compiled once at registration, where `x-mcp-header`
 *   annotations are validated too (a bad annotation fails registration).
 * - Arguments that fail `inputSchema` get a tool error result naming the fields (the model can correct itself);
 *   `structuredContent` that fails `outputSchema` is a server bug: -32603, detail to the log.
 * - `list` and `call` return the answer itself when every step is synchronous, and a promise otherwise; with an
 *   `after` hook, `call` answers with a promise once the hook has run.
 *
 * @see docs/handlers/tools.md
 */
import type { IncomingMessage } from 'node:http';
import { encodedOnce } from '../../lib/encode.js';
import { type Era, ErrorCode, McpError } from '../../lib/errors.js';
import type { JsonObject } from '../../lib/jsonrpc.js';
import { isInputRequiredResult } from '../../lib/mrtr.js';
import { TASKS_EXTENSION, TASKS_REQUIRED_CAPABILITIES } from '../../lib/tasks.js';
import { type ParamHeader, checkParamHeaders } from '../../lib/xmcpheader.js';
import { CHANGES, ChangeFeed } from '../../core/change-feed.js';
import { type CallContext, HANDLER_METHODS, type TaskWork } from '../../core/contract.js';
import type { Awaitable } from '../../core/maybe-promise.js';
import { checkPageSize, pageOrThrow } from '../shared.js';
import { isJsonObject } from '../../lib/json.js';
import { errorMeta, log } from '../../core/log.js';
import { then } from '../../core/maybe-promise.js';
import {
  OPTION_ERRORS,
  badOption,
  boolOption,
  fnOption,
  intOption,
  knownKeys,
  loggerOption,
  optionsObject,
} from '../../core/options.js';
import { stderrLogger } from '../../core/respond.js';
import { TOOL_VIEWS_APPLIED, exposeThrough, resolveThrough, toolViewsOf } from '../../core/tool-views.js';
import type { Logger } from '../../core/types.js';
import { type Entry, definition, definitionError, prepareEntry } from './entry.js';
import type {
  CallToolResult,
  SchemaCompiler,
  Tool,
  ToolCallEnd,
  ToolCallOutcome,
  ToolDefinition,
  ToolDescription,
  ToolList,
  ToolRegistryOptions,
} from './types.js';
import { defaultCompiler, invalidArguments } from './validation.js';
import { clip } from '../../lib/clip.js';

const F = 'ToolRegistry';
const OPTIONS: readonly (keyof ToolRegistryOptions)[] = [
  'tools',
  'ajv',
  'pageSize',
  'unknownTool',
  'before',
  'after',
  'maxHint',
  'logger',
  'allowAnyToolName',
];

/**
 * What a call has come to so far: the after hook's record, filled in as the call proceeds. `started` is set when
 * the after hook observes the call; `task` while a call answered with a task waits for both its request and its
 * work to end (the hook runs when the count reaches 0).
 */
type CallRecord = Omit<ToolCallEnd, 'outcome' | 'elapsedMs'> & {
  outcome?: ToolCallOutcome;
  started?: number;
  task?: { pending: number };
};

/**
 * The registry of tools: the `tools` handler object for `dispatch()` and the x-mcp-header lookup.
 * @param options - {@link ToolRegistryOptions} (the constructor's)
 * @see docs/handlers/tools.md
 * @example
 * ```ts
 * import { ToolRegistry, ok } from 'mcpware/tools';
 *
 * const tools = new ToolRegistry({
 *   tools: [
 *     {
 *       name: 'add',
 *       inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } },
 *       call: ({ a, b }) => ok({ sum: Number(a) + Number(b) }),
 *     },
 *   ],
 * });
 * tools.remove('add'); // tools can be registered and removed while the server runs
 * ```
 */
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
  /** The shared list per revision while every tool is static (see #sharedList); emptied on every change. */
  #lists: Partial<Record<Era, ToolList>> = {};
  readonly #compiler: SchemaCompiler;
  readonly #pageSize: number;
  readonly #unknownTool: ToolRegistryOptions['unknownTool'];
  readonly #before: ToolRegistryOptions['before'];
  readonly #after: ToolRegistryOptions['after'];
  readonly #maxHint: number;
  readonly #logger: Logger;
  readonly #anyName: boolean;

  constructor(options: ToolRegistryOptions = {}) {
    const o = optionsObject(F, options);
    knownKeys(F, o, OPTIONS);
    if (o.ajv !== undefined && (o.ajv === null || typeof (o.ajv as SchemaCompiler).compile !== 'function')) {
      throw badOption(F, 'ajv', o.ajv, 'an Ajv instance (an object with compile())');
    }
    if (o.tools !== undefined && !Array.isArray(o.tools)) {
      throw badOption(F, 'tools', o.tools, 'an array of tools');
    }
    this.#compiler = o.ajv ?? defaultCompiler();
    this.#pageSize = checkPageSize(F, 'pageSize', o.pageSize);
    this.#unknownTool = fnOption<NonNullable<ToolRegistryOptions['unknownTool']>>(
      F,
      'unknownTool',
      o.unknownTool,
    );
    this.#before = fnOption<NonNullable<ToolRegistryOptions['before']>>(F, 'before', o.before);
    this.#after = fnOption<NonNullable<ToolRegistryOptions['after']>>(F, 'after', o.after);
    this.#maxHint = intOption(F, 'maxHint', o.maxHint, 100, 0);
    this.#logger = loggerOption(F, o.logger, stderrLogger);
    this.#anyName = boolOption(F, 'allowAnyToolName', o.allowAnyToolName, false);
    if (o.tools) this.register(...o.tools);
  }

  /**
   * Register tools. Throws a TypeError (and registers none of them) for an unknown field, a duplicate or
   * invalid name (outside `[A-Za-z0-9_.-]` unless `allowAnyToolName`), a missing
   * `call`, an `inputSchema` that is not an object schema, a schema ajv cannot compile, or an invalid
   * `x-mcp-header` annotation.
   */
  register(...tools: Tool[]): this {
    const prepared: Entry[] = [];
    const names = new Set<string>();
    for (const tool of tools) {
      const entry = prepareEntry(tool, this.#compiler, this.#anyName);
      const name = entry.tool.name;
      if (this.#entries.has(name) || names.has(name))
        throw definitionError(OPTION_ERRORS.invalid, `ToolRegistry: duplicate tool name "${clip(name)}"`);
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

  /** `tools/list`: the answer itself when every tool is static, else a promise of it. */
  list(params: JsonObject, ctx: CallContext): ToolList | Promise<ToolList> {
    const shared = this.#sharedList(params, ctx);
    if (shared !== undefined) return shared;
    return then(this.#visible(ctx), (visible) => this.#page(visible, params));
  }

  /**
   * `tools/call`. When the tool asked for input (`ctx.inputRequired(…)`), the value is that InputRequiredResult
   * (tell them apart with `isInputRequiredResult`); the declared type stays the common case.
   */
  call(params: JsonObject, ctx: CallContext): CallToolResult | Promise<CallToolResult> {
    const p = params ?? {};
    const args = callArguments(p);
    const record: CallRecord = { name: p.name as string, args, ctx };
    return this.#after === undefined ? this.#run(record) : this.#runObserved(record);
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

  /**
   * The whole list, one frozen object per revision for every request, when the answer cannot depend on the caller
   * or the request: every tool static, no tool filter views, no cursor, the first page holding every tool. It says
   * what `#page(#visible())` says. Serialized once: see docs/performance.md#the-static-toolslist.
   */
  #sharedList(params: JsonObject, ctx: CallContext): ToolList | undefined {
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

  /** A call with the after hook: it sees every call exactly once, however the call ended, and is awaited. */
  async #runObserved(record: CallRecord): Promise<CallToolResult> {
    record.started = performance.now();
    try {
      return await this.#run(record);
    } catch (err) {
      record.error = err;
      record.outcome ??= 'error';
      throw err;
    } finally {
      await this.#report(record);
    }
  }

  /** Run the after hook for a call that has ended (a task's: once its request and its work both have). */
  async #report(record: CallRecord): Promise<void> {
    const task = record.task;
    if (task !== undefined && (task.pending <= 0 || --task.pending > 0)) return;
    const { name, tool, args, ctx, result, error } = record;
    const info: ToolCallEnd = {
      name,
      args,
      ctx,
      outcome: record.outcome ?? 'error',
      elapsedMs: performance.now() - (record.started ?? performance.now()),
    };
    if (tool !== undefined) info.tool = tool;
    if (result !== undefined) info.result = result;
    if (error !== undefined) info.error = error;
    try {
      await this.#after!(info);
    } catch (e) {
      this.#log('ToolRegistry: after hook failed', e);
    }
  }

  /** Resolve the name through the request's views to a tool this caller sees, and call it. */
  #run(record: CallRecord): Awaitable<CallToolResult> {
    const actual = resolveThrough(record.name, toolViewsOf(record.ctx.locals));
    const entry = actual === undefined ? undefined : this.#entries.get(actual);
    if (entry === undefined) return this.#unknown(record);
    return then(this.#describe(entry, record.ctx), (def) =>
      def === undefined ? this.#unknown(record) : this.#runVisible(entry, record),
    );
  }

  /** An unknown or hidden tool: the unknownTool hook's result, or -32602 hinting what this caller sees. */
  #unknown(record: CallRecord): Awaitable<CallToolResult> {
    record.outcome = 'unknown_tool';
    return then(this.#visible(record.ctx), (visible) => {
      const available = visible.map((t) => t.name).slice(0, this.#maxHint);
      if (this.#unknownTool === undefined) {
        throw new McpError(ErrorCode.InvalidParams, `Unknown tool: "${clip(record.name)}"`, {
          tool: record.name,
          available,
        });
      }
      return then(this.#unknownTool(record.name, available, record.ctx), (r) => {
        record.result = r;
        return r;
      });
    });
  }

  /** A visible tool: its Mcp-Param headers and arguments checked, the before hook run, the tool called. */
  #runVisible(entry: Entry, record: CallRecord): Awaitable<CallToolResult> {
    const { name, args, ctx } = record;
    record.tool = entry.tool.name;
    ctx.locals.tool = entry.tool.name;
    if (entry.tool.describe !== undefined && entry.params.length > 0 && ctx.era === 'modern') {
      // The Mcp-Param-* check checkHeaders() leaves to us for tools of per-caller visibility (see paramHeaders).
      const bad = checkParamHeaders(entry.params, args, ctx.req.headers);
      if (bad) throw new McpError(bad.code, bad.message, bad.data, bad.status);
    }
    if (entry.validateInput(args) !== true) {
      record.outcome = 'invalid_arguments';
      const r = invalidArguments(entry.validateInput.errors);
      record.result = r;
      return r;
    }
    record.outcome = 'error';
    const support = entry.taskSupport;
    const declared = ctx.tasks?.declared === true;
    if (support === 'required' && !declared) return this.#taskRequired(entry, record);
    const invoke = (): Awaitable<CallToolResult> =>
      support !== 'forbidden' && declared
        ? this.#prepareTask(entry, record)
        : then(entry.tool.call(args, ctx), (r) => this.#settle(entry, r, record));
    if (this.#before === undefined) return invoke();
    return then(this.#before({ name, tool: entry.tool.name, args, ctx }), invoke);
  }

  /**
   * A task-only tool called by a client that did not declare the tasks extension: -32021 naming it (modern); a
   * 2025-11-25 client, which cannot declare it, gets a tool error saying so (as for any capability it lacks).
   */
  #taskRequired(entry: Entry, record: CallRecord): CallToolResult {
    const tool = JSON.stringify(clip(entry.tool.name));
    if (record.ctx.era === 'legacy') {
      const text = `Tool ${tool} runs only as a task, which this server offers to 2026-07-28 clients declaring the ${TASKS_EXTENSION} extension`;
      const r: CallToolResult = { content: [{ type: 'text', text }], isError: true };
      record.outcome = 'tool_error';
      record.result = r;
      return r;
    }
    throw new McpError(
      ErrorCode.MissingRequiredClientCapability,
      `Tool ${tool} runs only as a task: declare the ${TASKS_EXTENSION} extension in the request's client capabilities`,
      { requiredCapabilities: TASKS_REQUIRED_CAPABILITIES },
    );
  }

  /**
   * A call that becomes a task: the tool's prepare() first (its input request or result is the answer, no task
   * made), then the task, whose CreateTaskResult is the answer.
   */
  #prepareTask(entry: Entry, record: CallRecord): Awaitable<CallToolResult> {
    if (entry.tool.prepare === undefined) return this.#startTask(entry, record);
    return then(entry.tool.prepare(record.args, record.ctx), (prepared) =>
      prepared === undefined || prepared === null
        ? this.#startTask(entry, record)
        : this.#settle(entry, prepared, record),
    );
  }

  /** Create the task; the after hook, when there is one, runs when its work ends. */
  #startTask(entry: Entry, record: CallRecord): Promise<CallToolResult> {
    const work: TaskWork = (tctx) => this.#taskRound(entry, record, tctx);
    if (this.#after !== undefined) record.task = { pending: 2 };
    return record.ctx.tasks!.start(work, { tool: entry.tool.name }).then(
      (created) => created as unknown as CallToolResult,
      (err: unknown) => {
        // No task: the request's end is the call's end.
        delete record.task;
        throw err;
      },
    );
  }

  /**
   * One round of a task's work: the tool called with the task's context and its result checked as a direct
   * call's is. An input request leaves the task waiting (called again with the answers); anything else ends it.
   */
  async #taskRound(entry: Entry, record: CallRecord, tctx: CallContext): Promise<unknown> {
    let result: CallToolResult;
    try {
      const r: unknown = await entry.tool.call(record.args, tctx);
      if (isInputRequiredResult(r)) return r;
      result = this.#checkResult(entry, r, tctx);
    } catch (err) {
      await this.#taskEnded(record, tctx, tctx.signal.aborted ? 'cancelled' : 'error', { error: err });
      throw err;
    }
    const outcome = tctx.signal.aborted ? 'cancelled' : result.isError === true ? 'tool_error' : 'ok';
    await this.#taskEnded(record, tctx, outcome, { result });
    return result;
  }

  /** A task's work ended: the record takes its outcome, and the after hook runs (once the request is done too). */
  async #taskEnded(
    record: CallRecord,
    tctx: CallContext,
    outcome: ToolCallOutcome,
    end: { result?: CallToolResult; error?: unknown },
  ): Promise<void> {
    if (record.task === undefined) return;
    record.ctx = tctx;
    record.outcome = outcome;
    delete record.result;
    delete record.error;
    if (end.result !== undefined) record.result = end.result;
    if ('error' in end) record.error = end.error;
    await this.#report(record);
  }

  /** The tool's answer: an input-required result as it is (the dispatcher checks it), else the checked result. */
  #settle(entry: Entry, r: unknown, record: CallRecord): CallToolResult {
    if (isInputRequiredResult(r)) {
      // Checked and encoded by the dispatcher (capabilities, shape); the tool's outputSchema does not apply.
      record.result = r as unknown as CallToolResult;
      record.outcome = 'input_required';
      return record.result;
    }
    const result = this.#checkResult(entry, r, record.ctx);
    record.result = result;
    record.outcome = result.isError === true ? 'tool_error' : 'ok';
    return result;
  }

  /**
   * This caller's definition of a tool, or `undefined` when hidden (a failing describe() hides the tool):
   * synchronous for a static tool, a promise when it has describe().
   */
  #describe(e: Entry, ctx: CallContext): ToolDefinition | undefined | Promise<ToolDefinition | undefined> {
    return e.tool.describe === undefined ? e.defs[eraOf(ctx)] : this.#describeFor(e, ctx);
  }

  async #describeFor(e: Entry, ctx: CallContext): Promise<ToolDefinition | undefined> {
    const name = clip(e.tool.name);
    let d: ToolDescription | undefined | null | false;
    try {
      d = await e.tool.describe!(ctx);
    } catch (err) {
      this.#log(
        `ToolRegistry: describe() of tool "${name}" failed; the tool is hidden for this request`,
        err,
      );
      return undefined;
    }
    if (!d) return undefined;
    if (!isJsonObject(d)) {
      this.#log(
        `ToolRegistry: describe() of tool "${name}" returned a non-object; the tool is hidden`,
        undefined,
      );
      return undefined;
    }
    return definition(e, d, eraOf(ctx));
  }

  #checkResult(e: Entry, r: unknown, ctx: CallContext): CallToolResult {
    const name = e.tool.name;
    if (!isJsonObject(r) || !Array.isArray(r.content)) {
      throw new Error(`tool "${name}" returned an invalid result (expected an object with a content array)`);
    }
    for (const block of r.content as unknown[]) {
      if (!isJsonObject(block) || typeof block.type !== 'string') {
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
    if (ctx.era === 'legacy' && 'structuredContent' in result && !isJsonObject(result.structuredContent)) {
      const { structuredContent: _dropped, ...rest } = result;
      return rest as CallToolResult;
    }
    return result;
  }

  #log(message: string, err: unknown): void {
    log(this.#logger, 'error', message, err === undefined ? undefined : { error: errorMeta(err) });
  }
}

/** The arguments of a `tools/call` (`{}` when absent), after checking that `name` is a string. */
function callArguments(p: JsonObject): JsonObject {
  if (typeof p.name !== 'string')
    throw new McpError(ErrorCode.InvalidParams, 'Invalid params: "name" must be a string');
  const raw = p.arguments;
  // Absent means no arguments; anything else, null included, must be an object (CallToolRequest's schema).
  if (raw !== undefined && !isJsonObject(raw)) {
    throw new McpError(ErrorCode.InvalidParams, 'Invalid params: "arguments" must be an object');
  }
  return raw ?? {};
}

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
