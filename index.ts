/**
 * mcpware: independent Express/Connect middlewares that turn an existing app into an MCP server.
 * Every middleware is also available on its own subpath (`mcpware/parse`, `mcpware/dispatch`, …), and the pure
 * protocol functions on `mcpware/lib`. Test helpers live on `mcpware/testing` only.
 */
export * from './lib/index.js';
export * from './middleware/types.js';
export * from './middleware/respond.js';
export {
  parseRequest,
  ensureParsed,
  classifyOnce,
  isJsonContentType,
  parseByteSize,
  DEFAULT_BODY_LIMIT,
} from './middleware/context.js';
export type { BodyOptions } from './middleware/context.js';
export * from './middleware/compose.js';
// Explicit re-exports shadow the pure functions of the same name in lib (those stay on mcpware/lib).
export { parse, getMcp, mcpOf } from './middleware/parse.js';
export type { ParseOptions } from './middleware/parse.js';
export * from './middleware/rejectBatch.js';
export * from './middleware/guardOrigin.js';
export * from './middleware/methodGuard.js';
export { classifyRevision } from './middleware/classifyRevision.js';
export type { ClassifyRevisionOptions } from './middleware/classifyRevision.js';
export * from './middleware/checkHeaders.js';
export * from './middleware/authChain.js';
export * from './middleware/apiKeyAuth.js';
export * from './middleware/oidcAuth.js';
export * from './middleware/protectedResourceMetadata.js';
export * from './middleware/limits.js';
export * from './middleware/redact.js';
export * from './middleware/audit.js';
export * from './middleware/metrics.js';
export * from './middleware/handlers.js';
export * from './middleware/changes.js';
export * from './middleware/dispatch.js';
export * from './middleware/tools.js';
export * from './middleware/toolFilter.js';
export * from './middleware/services.js';
export * from './middleware/resources.js';
export * from './middleware/prompts.js';
export * from './middleware/completion.js';
export * from './middleware/catalogue.js';
