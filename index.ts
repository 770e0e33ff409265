/**
 * mcpware: independent Express/Connect middlewares that turn an existing app into an MCP server.
 * Each middleware and handler object is also on its own subpath (`mcpware/parse`, `mcpware/dispatch`, …);
 * the pure protocol functions are on `mcpware/lib`, the test helpers on `mcpware/testing`.
 * The names below are the whole public surface of this entry (test/contracts/public-surface.json).
 * @see docs/README.md
 */
export type {
  AuthOutcome,
  Era,
  Logger,
  Middleware,
  OutboundKind,
  OutboundTransform,
  Principal,
  RedactionRecord,
  RefusalRecord,
  RequestLocals,
  ResponseRecord,
} from './core/types.js';
export { ErrorCode, McpError, REFUSALS } from './lib/errors.js';
export type { ErrorCodeValue, JsonRpcError, Refusal, RefusalReason, RequestId } from './lib/errors.js';
export { LATEST_LEGACY_VERSION, LATEST_MODERN_VERSION, SUPPORTED_VERSIONS } from './lib/revisions.js';
export type { McpRequest } from './lib/request.js';
export type { JsonObject } from './lib/jsonrpc.js';
export { isJsonContentType, parseRequest } from './core/parse-step.js';
export { DEFAULT_BODY_LIMIT, parseByteSize } from './core/body.js';
export type { BodyOptions } from './core/parse-step.js';
export { compose } from './middleware/compose/index.js';
export type { ComposeOptions, Composed } from './middleware/compose/index.js';
export { getMcp, mcpOf, parse } from './middleware/parse/index.js';
export type { ParseOptions } from './middleware/parse/index.js';
export { rejectBatch } from './middleware/reject-batch/index.js';
export type { RejectBatchOptions } from './middleware/reject-batch/index.js';
export { guardOrigin } from './middleware/guard-origin/index.js';
export type { GuardOriginOptions } from './middleware/guard-origin/index.js';
export { methodGuard } from './middleware/method-guard/index.js';
export type { MethodGuardOptions } from './middleware/method-guard/index.js';
export { classifyRevision } from './middleware/classify-revision/index.js';
export type { ClassifyRevisionOptions } from './middleware/classify-revision/index.js';
export { checkHeaders } from './middleware/check-headers/index.js';
export type { CheckHeadersOptions } from './middleware/check-headers/index.js';
export { authenticate } from './middleware/auth/index.js';
export type {
  AuthDecision,
  AuthMiddleware,
  AuthenticateMiddleware,
  AuthenticateOptions,
  Authenticator,
  ChallengeOptions,
  RefuseOutcome,
} from './middleware/auth/index.js';
export { API_KEY_METHOD, apiKeyAuth, hashKey, parseApiKeysEnv } from './middleware/api-key-auth/index.js';
export type { ApiKeyAuthOptions, ApiKeyConfig } from './middleware/api-key-auth/index.js';
export { ASYMMETRIC_ALGORITHMS, OIDC_METHOD, OidcAuthError, oidcAuth } from './middleware/oidc-auth/index.js';
export type {
  ClaimPath,
  OidcAuthErrorCode,
  OidcAuthMiddleware,
  OidcAuthOptions,
  OidcPhase,
  OidcRetryOptions,
  OidcStatus,
} from './middleware/oidc-auth/index.js';
export {
  PRM_WELL_KNOWN,
  protectedResourceMetadata,
  protectedResourceMetadataUrl,
} from './middleware/protected-resource-metadata/index.js';
export type {
  ProtectedResourceMetadataDocument,
  ProtectedResourceMetadataMiddleware,
  ProtectedResourceMetadataOptions,
} from './middleware/protected-resource-metadata/index.js';
export {
  charge,
  limits,
  limitsFromEnv,
  limitsOptionsFromEnv,
  redisClientOptions,
} from './middleware/limits/index.js';
export type {
  LimitsEnvOptions,
  LimitsHooks,
  LimitsMiddleware,
  LimitsOptions,
  LimitsStats,
  OutagePolicy,
  RedisClientLike,
  RedisStoreOptions,
} from './middleware/limits/index.js';
export { redact } from './middleware/redact/index.js';
export type { RedactMiddleware, RedactMiddlewareOptions } from './middleware/redact/index.js';
export { AUDIT_CAPS, AUDIT_KEYS, audit, auditJsonFormat } from './middleware/audit/index.js';
export type {
  AuditJsonFormat,
  AuditKey,
  AuditLogger,
  AuditMiddleware,
  AuditOptions,
  AuditRecord,
  AuditStats,
} from './middleware/audit/index.js';
export {
  DEFAULT_DURATION_BUCKETS,
  TRANSPORT_REASONS,
  metrics,
  metricsHandler,
} from './middleware/metrics/index.js';
export type { MetricsMiddleware, MetricsOptions } from './middleware/metrics/index.js';
export { dispatch } from './middleware/dispatch/index.js';
export type {
  DispatchCancellationOptions,
  DispatchMiddleware,
  DispatchOptions,
  DispatchSessionOptions,
  ServerCapabilities,
} from './middleware/dispatch/index.js';
export { mcpEndpoint } from './middleware/endpoint/index.js';
export type {
  McpEndpoint,
  McpEndpointAuthOptions,
  McpEndpointBackend,
  McpEndpointDispatchOptions,
  McpEndpointOptions,
  McpEndpointParts,
  McpEndpointStats,
} from './middleware/endpoint/index.js';
export { toolFilter } from './middleware/tool-filter/index.js';
export type {
  ExposedTool,
  ToolFilterOptions,
  ToolOverride,
  ToolView,
} from './middleware/tool-filter/index.js';
export { proxy } from './middleware/proxy/index.js';
export type { ProxyFetch, ProxyMiddleware, ProxyOptions } from './middleware/proxy/index.js';
export { sdk } from './middleware/sdk/index.js';
export type {
  SdkAuthInfo,
  SdkFetchHandler,
  SdkHandler,
  SdkHandlerFunction,
  SdkMiddleware,
  SdkOptions,
  SdkRequestExtra,
  SdkWebTransport,
} from './middleware/sdk/index.js';
export { HANDLER_METHODS } from './core/contract.js';
export type {
  CacheHint,
  CallContext,
  HandlerMethod,
  HandlerObject,
  Handlers,
  Implementation,
  InputRequest,
  InputRequiredRequest,
  InputRequiredResult,
} from './core/contract.js';
export type { Awaitable } from './core/maybe-promise.js';
export type { Completer, ContentAnnotations, Icon } from './handlers/shared.js';
export {
  ToolRegistry,
  audioBlock,
  embeddedResource,
  imageBlock,
  ok,
  resourceLink,
  textBlock,
  textResult,
  toolError,
} from './handlers/tools/index.js';
export type {
  AudioContent,
  CallToolResult,
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
} from './handlers/tools/index.js';
export { memoryResources, resources } from './handlers/resources/index.js';
export type {
  MemoryResource,
  ResourceBody,
  ResourceContents,
  ResourceEntry,
  ResourceItem,
  ResourceSource,
  ResourceTemplate,
  ResourcesHandler,
  ResourcesOptions,
} from './handlers/resources/index.js';
export { prompts } from './handlers/prompts/index.js';
export type {
  PromptArgument,
  PromptDefinition,
  PromptGetResult,
  PromptMessage,
  PromptSource,
  PromptsHandler,
  PromptsOptions,
} from './handlers/prompts/index.js';
export { MAX_COMPLETION_VALUES, completion } from './handlers/completion/index.js';
export type { CompletionHandler, CompletionOptions, CompletionResult } from './handlers/completion/index.js';
export { CatalogueError, loadCatalogue } from './handlers/catalogue/index.js';
export type {
  Catalogue,
  CatalogueOptions,
  CataloguePrompts,
  CatalogueResources,
} from './handlers/catalogue/index.js';
export { CHANGES, ChangeFeed, changesOf, isChangeFeed, redisChangeFeed } from './handlers/changes/index.js';
export type {
  CancellationMessage,
  CancellationRelay,
  ChangeEvent,
  ChangeFeedDropReason,
  ChangeListener,
  RedisChangeFeed,
  RedisChangeFeedOptions,
  RedisChangeFeedStats,
  RedisPubSubClient,
  RedisSubscriberLike,
} from './handlers/changes/index.js';
