/**
 * `mcpware/tools`: the `ToolRegistry` (the `tools` handler object of `dispatch()`), `ok()`, `toolError()`, and
 * builders for the content blocks a `tools/call` result carries.
 *
 * @see docs/handlers/tools.md
 */
export { ToolRegistry } from './registry.js';
export {
  ok,
  textResult,
  toolError,
  textBlock,
  imageBlock,
  audioBlock,
  resourceLink,
  embeddedResource,
} from './content.js';
export type {
  AudioContent,
  CallToolResult,
  ContentAnnotations,
  ContentBlock,
  EmbeddedResource,
  ImageContent,
  JsonSchema,
  ResourceLink,
  SchemaCompiler,
  SchemaValidator,
  TaskSupport,
  TextContent,
  Tool,
  ToolAnnotations,
  ToolCallEnd,
  ToolCallOutcome,
  ToolCallStart,
  ToolDefinition,
  ToolDescription,
  ToolRegistryOptions,
} from './types.js';
