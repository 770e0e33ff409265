/**
 * mcpware: independent Express/Connect middlewares that turn an existing app into an MCP server.
 * Every middleware is also available on its own subpath (`mcpware/parse`, `mcpware/dispatch`, …), and the pure
 * protocol functions on `mcpware/lib`. Test helpers live on `mcpware/testing` only.
 */
export * from './lib/index.js';
export * from './middleware/types.js';
export * from './middleware/internal/respond.js';
export {
  parseRequest,
  ensureParsed,
  classifyOnce,
  isJsonContentType,
  parseByteSize,
  DEFAULT_BODY_LIMIT,
} from './middleware/internal/parse-step.js';
export type { BodyOptions } from './middleware/internal/parse-step.js';
export * from './middleware/compose/index.js';
// Explicit re-exports shadow the pure functions of the same name in lib (those stay on mcpware/lib).
export { parse, getMcp, mcpOf } from './middleware/parse/index.js';
export type { ParseOptions } from './middleware/parse/index.js';
export * from './middleware/reject-batch/index.js';
export * from './middleware/guard-origin/index.js';
export * from './middleware/method-guard/index.js';
export { classifyRevision } from './middleware/classify-revision/index.js';
export type { ClassifyRevisionOptions } from './middleware/classify-revision/index.js';
export * from './middleware/check-headers/index.js';
export * from './middleware/auth/index.js';
export * from './middleware/api-key-auth/index.js';
export * from './middleware/oidc-auth/index.js';
export * from './middleware/protected-resource-metadata/index.js';
export * from './middleware/limits/index.js';
export * from './middleware/redact/index.js';
export * from './middleware/audit/index.js';
export * from './middleware/metrics/index.js';
export * from './handlers/contract.js';
export * from './handlers/changes/index.js';
export * from './middleware/dispatch/index.js';
export * from './handlers/tools/index.js';
export * from './middleware/tool-filter/index.js';
export * from './handlers/shared.js';
export * from './handlers/resources/index.js';
export * from './handlers/prompts/index.js';
export * from './handlers/completion/index.js';
export * from './handlers/catalogue/index.js';
