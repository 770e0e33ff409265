/**
 * The types of the tools handler object: tools as registered and as listed, `tools/call` results and their content
 * blocks, the hooks, and the registry's options.
 *
 * @see docs/handlers/tools.md
 */
import type { JsonObject } from '../../lib/jsonrpc.js';
import type { InputRequiredResult } from '../../lib/mrtr.js';
import type { CallContext } from '../../core/contract.js';
import type { ResourceEntry } from '../resources/types.js';
import type { Awaitable } from '../../core/maybe-promise.js';
import type { ContentAnnotations } from '../shared.js';
import type { Logger } from '../../core/types.js';
import type { TaskSupport } from '../../lib/tasks.js';

export type { ContentAnnotations, TaskSupport };

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

/** The optional fields every content block may carry. */
export interface BlockExtra {
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
/** A resource the client may read later: a resource as `resources/list` shows it, typed as a content block. */
export interface ResourceLink extends ResourceEntry {
  type: 'resource_link';
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
  /**
   * Whether a call may run as a task (the `io.modelcontextprotocol/tasks` extension, served when `dispatch()` has
   * `tasks`): `'forbidden'` (the default: always called directly), `'optional'` (a task when the request's client
   * declares the extension, a direct call otherwise) or `'required'` (a task, or -32021 for a client that does
   * not declare the extension). `call` is the same function either way; in a task its `ctx` has `taskId`.
   */
  taskSupport?: TaskSupport;
  /**
   * Runs in the request before a task is made (tools with `taskSupport` only, and only when the call becomes a
   * task): return `ctx.inputRequired(…)` to ask the client for input first (answered as a multi round-trip
   * request, no task yet), a result to answer at once without a task, or nothing to make the task. `call`'s first
   * round sees the same `ctx.inputResponses`.
   */
  prepare?(args: A, ctx: CallContext): Awaitable<CallToolResult | InputRequiredResult | undefined | void>;
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
  | 'ok'
  | 'tool_error'
  | 'unknown_tool'
  | 'invalid_arguments'
  | 'input_required'
  | 'error'
  /** A task's work ended after its `ctx.signal` was aborted (`tasks/cancel`, the server's shutdown, a lost lease). */
  | 'cancelled';

/**
 * What the after hook sees: every call, refusals included, exactly once. A call answered with a task is reported
 * when the task's work ends (`ctx` is then the task's, with `ctx.taskId`), with the tool's own outcome; a task
 * whose work never ends on this server (expired while waiting for input, its server gone) is not reported.
 */
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
/** One validation error, as ajv reports it. */
export interface AjvErrorLike {
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
  /**
   * Accept tool names outside the spec's `[A-Za-z0-9_.-]` (still 1 to 128 characters), e.g. non-ASCII names.
   * Default false: such a name fails registration.
   */
  allowAnyToolName?: boolean;
}

/** A `tools/list` result. */
export interface ToolList {
  tools: ToolDefinition[];
  nextCursor?: string;
}
