/**
 * A registered tool: what the registry reads from a `Tool` once, at registration. Schemas are copied and frozen
 * and compiled, `x-mcp-header` annotations are checked, and the definition every caller of a revision sees is
 * built, so a later change to the caller's tool object never reaches a list.
 *
 * @see docs/handlers/tools.md
 */
import { deepFreeze } from '../../lib/encode.js';
import type { Era } from '../../lib/errors.js';
import type { JsonObject } from '../../lib/jsonrpc.js';
import { type ParamHeader, paramHeaders as scanParamHeaders } from '../../lib/xmcpheader.js';
import {
  OPTION_ERRORS,
  type OptionError,
  type OptionErrorCode,
  closest,
  optionError,
} from '../../core/options.js';
import { isJsonObject } from '../../lib/json.js';
import type { TaskSupport } from '../../lib/tasks.js';
import type {
  JsonSchema,
  SchemaCompiler,
  SchemaValidator,
  Tool,
  ToolDefinition,
  ToolDescription,
} from './types.js';
import { clip } from '../../lib/clip.js';

export interface Entry {
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
  /** Whether a call may run as a task (`forbidden` when the tool does not say). */
  taskSupport: TaskSupport;
}

const TASK_SUPPORT: readonly TaskSupport[] = ['forbidden', 'optional', 'required'];

const NO_ARGUMENTS: JsonObject = deepFreeze({ type: 'object', additionalProperties: false });

/** The fields a tool definition may have: anything else in a plain object is a typo, refused at registration. */
const TOOL_KEYS: readonly (keyof Tool)[] = [
  'name',
  'title',
  'description',
  'annotations',
  'icons',
  '_meta',
  'inputSchema',
  'outputSchema',
  'describe',
  'call',
  'taskSupport',
  'prepare',
];

/** The characters the spec says a tool name should hold (2025-11-25 and 2026-07-28): `A-Z a-z 0-9 _ - .`. */
const TOOL_NAME = /^[A-Za-z0-9_.-]+$/;

/** A refused tool definition: an option error whose docs pointer leads to how tools are defined. */
export function definitionError(code: OptionErrorCode, message: string): OptionError {
  return optionError(code, 'ToolRegistry.register', message);
}

/**
 * Check and prepare one tool. Throws a TypeError for an unknown field (in a plain object), an invalid name, a
 * missing `call`, an `inputSchema` that is not an object schema, a schema the compiler refuses, or an invalid
 * `x-mcp-header` annotation. `anyName` accepts names outside `[A-Za-z0-9_.-]` (still 1 to 128 characters).
 */
export function prepareEntry(tool: Tool, compiler: SchemaCompiler, anyName = false): Entry {
  if (tool === null || typeof tool !== 'object')
    throw definitionError(
      OPTION_ERRORS.invalid,
      `ToolRegistry: a tool must be an object, got ${String(tool)}`,
    );
  const name = checkName(tool.name, anyName);
  const where = `ToolRegistry: tool "${clip(name)}"`;
  knownFields(tool, where);
  if (typeof tool.call !== 'function') {
    const code = tool.call === undefined ? OPTION_ERRORS.missing : OPTION_ERRORS.invalid;
    throw definitionError(code, `${where}: call must be a function`);
  }
  if (tool.describe !== undefined && typeof tool.describe !== 'function')
    throw definitionError(OPTION_ERRORS.invalid, `${where}: describe must be a function`);
  const taskSupport = taskSupportOf(tool, where);
  const inputSchema = inputSchemaOf(tool, where);
  const outputSchema = outputSchemaOf(tool, where);
  const statics = staticFields(tool, where);
  const headers = scanParamHeaders(inputSchema);
  if (!headers.ok) {
    throw definitionError(
      OPTION_ERRORS.invalid,
      `${where}: invalid x-mcp-header annotation: ${headers.error}`,
    );
  }
  const compile = (schema: JsonSchema, which: string): SchemaValidator => {
    try {
      return compiler.compile(schema);
    } catch (e) {
      throw definitionError(
        OPTION_ERRORS.invalid,
        `${where}: ${which} does not compile: ${e instanceof Error ? e.message : String(e)}`,
      );
    }
  };
  const validateInput = compile(inputSchema, 'inputSchema');
  const validateOutput = outputSchema === undefined ? undefined : compile(outputSchema, 'outputSchema');
  const legacyOutput = isJsonObject(outputSchema) && outputSchema.type === 'object';
  const shape = { tool, inputSchema, outputSchema, legacyOutput, statics };
  return {
    ...shape,
    validateInput,
    validateOutput,
    params: Object.freeze(headers.params),
    taskSupport,
    defs: Object.freeze({
      legacy: Object.freeze(definition(shape, undefined, 'legacy')),
      modern: Object.freeze(definition(shape, undefined, 'modern')),
    }),
  };
}

/**
 * The tool's task support: one of `forbidden`, `optional`, `required` (absent: `forbidden`). A `prepare` must be
 * a function, and only a tool that may run as a task has one (it runs only before a task is made).
 */
function taskSupportOf(tool: Tool, where: string): TaskSupport {
  const given: unknown = tool.taskSupport;
  if (given !== undefined && !(TASK_SUPPORT as readonly unknown[]).includes(given)) {
    const near = typeof given === 'string' ? closest(given, TASK_SUPPORT) : undefined;
    const hint = near === undefined ? '' : `; did you mean "${near}"?`;
    throw definitionError(
      OPTION_ERRORS.invalid,
      `${where}: taskSupport must be "forbidden", "optional" or "required", got ${JSON.stringify(clip(String(given)))}${hint}`,
    );
  }
  const support = (given as TaskSupport | undefined) ?? 'forbidden';
  if (tool.prepare !== undefined) {
    if (typeof tool.prepare !== 'function')
      throw definitionError(OPTION_ERRORS.invalid, `${where}: prepare must be a function`);
    if (support === 'forbidden')
      throw definitionError(
        OPTION_ERRORS.invalid,
        `${where}: prepare runs only before a task is made; set taskSupport to "optional" or "required"`,
      );
  }
  return support;
}

function checkName(name: unknown, anyName: boolean): string {
  if (typeof name !== 'string' || name.length === 0 || name.length > 128) {
    throw definitionError(
      name === undefined ? OPTION_ERRORS.missing : OPTION_ERRORS.invalid,
      `ToolRegistry: a tool name must be a string of 1 to 128 characters, got ${JSON.stringify(name)}`,
    );
  }
  if (!anyName && !TOOL_NAME.test(name)) {
    throw definitionError(
      OPTION_ERRORS.invalid,
      `ToolRegistry: tool name ${JSON.stringify(clip(name))} holds characters outside A-Z a-z 0-9 _ - . ` +
        "(the spec's tool name characters); rename it, or pass allowAnyToolName: true to the registry",
    );
  }
  return name;
}

/**
 * Refuses a field a tool does not have, naming the closest known one (`inputschema` → `inputSchema`), so a typo
 * in plain JavaScript never drops a schema silently. Only plain objects are checked: a class instance may hold
 * fields of its own beside the tool's.
 */
function knownFields(tool: Tool, where: string): void {
  const proto: unknown = Object.getPrototypeOf(tool);
  if (proto !== Object.prototype && proto !== null) return;
  for (const key of Object.keys(tool)) {
    if ((TOOL_KEYS as readonly string[]).includes(key)) continue;
    const near = closest(key, TOOL_KEYS);
    const hint = near === undefined ? `; known fields: ${TOOL_KEYS.join(', ')}` : `; did you mean "${near}"?`;
    throw definitionError(
      OPTION_ERRORS.unknown,
      `${where}: unknown field ${JSON.stringify(clip(key))}${hint}`,
    );
  }
}

function inputSchemaOf(tool: Tool, where: string): JsonObject {
  if (tool.inputSchema === undefined) return NO_ARGUMENTS;
  if (!isJsonObject(tool.inputSchema) || tool.inputSchema.type !== 'object') {
    throw definitionError(
      OPTION_ERRORS.invalid,
      `${where}: inputSchema must be a JSON Schema object with "type": "object"`,
    );
  }
  return deepFreeze(structuredClone(tool.inputSchema));
}

function outputSchemaOf(tool: Tool, where: string): JsonSchema | undefined {
  const schema = tool.outputSchema;
  if (schema === undefined || typeof schema === 'boolean') return schema;
  if (!isJsonObject(schema)) {
    throw definitionError(
      OPTION_ERRORS.invalid,
      `${where}: outputSchema must be a JSON Schema (an object or a boolean)`,
    );
  }
  return deepFreeze(structuredClone(schema));
}

/**
 * A tool's definition for one revision: name and inputSchema, then the static fields with what describe()
 * returned over them (`d`), then the outputSchema where that revision may see it.
 */
export function definition(
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
    throw definitionError(
      OPTION_ERRORS.invalid,
      `${where}: title, description, annotations, icons and _meta must be JSON values (${err instanceof Error ? err.message : String(err)})`,
    );
  }
  return deepFreeze(JSON.parse(text) as Record<string, unknown>);
}
