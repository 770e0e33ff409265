/**
 * mcpware/lib: pure, framework-free protocol functions. No I/O.
 */
export {
  ErrorCode,
  McpError,
  McpwareError,
  REFUSALS,
  errorResponse,
  isRequestId,
  refusal,
  refusalResponse,
  statusFor,
} from './errors.js';
export type {
  Era,
  ErrorCodeValue,
  HeaderMismatchData,
  JsonRpcError,
  JsonRpcErrorResponse,
  MissingCapabilityData,
  Refusal,
  RefusalReason,
  RequestId,
  UnsupportedVersionData,
} from './errors.js';
export {
  DEFAULT_LEGACY_VERSION,
  FIRST_MODERN_VERSION,
  LATEST_LEGACY_VERSION,
  LATEST_MODERN_VERSION,
  LEGACY_VERSIONS,
  MODERN_VERSIONS,
  SUPPORTED_VERSIONS,
  isModernClaim,
  isRevision,
  negotiateVersion,
} from './revisions.js';
export {
  LOG_LEVELS,
  META,
  MODERN_SIGNAL_KEYS,
  isLogLevel,
  isReservedMetaKey,
  logLevelRank,
  stripReservedMeta,
} from './meta.js';
export type { LogLevel } from './meta.js';
export {
  SENTINEL_PREFIX,
  SENTINEL_SUFFIX,
  decodeHeaderValue,
  encodeHeaderValue,
  isPlainHeaderValue,
  isSentinel,
} from './sentinel.js';
export type { DecodeResult } from './sentinel.js';
export {
  DEFAULT_MAX_DEPTH,
  classifyMessage,
  isBatchBytes,
  isBatchText,
  parseMessage,
  parseValue,
} from './jsonrpc.js';
export type {
  ErrorMessage,
  JsonObject,
  Message,
  MessageKind,
  NotificationMessage,
  ParseMessageOptions,
  ParseResult,
  RequestMessage,
  ResponseMessage,
} from './jsonrpc.js';
export { classifyEnvelope } from './classify.js';
export type { Classification, ClassifyInput, ClassifyOptions, ClassifyResult } from './classify.js';
export { checkStandardHeaders } from './headers.js';
export type { HeaderCheckInput, StandardHeaders } from './headers.js';
export {
  MAX_SCHEMA_DEPTH,
  PARAM_HEADER_PREFIX,
  X_MCP_HEADER,
  checkParamHeaders,
  isToken,
  paramHeaderValues,
  paramHeaders,
} from './xmcpheader.js';
export type { ParamHeader, ParamHeadersResult, ParamType } from './xmcpheader.js';
export { toMcpRequest } from './request.js';
export type { McpRequest } from './request.js';
export {
  CACHEABLE_METHODS,
  INPUT_REQUIRED_METHODS,
  METHOD_CAPABILITY,
  REMOVED_IN_MODERN,
  foldMethod,
  hasCapability,
  isCacheable,
  isRemovedInModern,
  isRoutableMethod,
  requiredCapability,
  routeOf,
  splitFolded,
} from './routing.js';
export type { CacheHint, Implementation } from './encode.js';
export {
  INPUT_REQUEST_CAPABILITY,
  MAX_REQUEST_STATE_LENGTH,
  MIN_STATE_KEY_BYTES,
  checkInputRequired,
  elicitationRequest,
  isInputRequiredResult,
  listRootsRequest,
  missingCapabilities,
  paramsDigest,
  readInputResponses,
  samplingRequest,
  signRequestState,
  verifyRequestState,
} from './mrtr.js';
export type {
  InputRequest,
  InputRequiredCheck,
  InputRequiredResult,
  InputResponsesRead,
  StateBinding,
  StateVerifyReason,
  StateVerifyResult,
} from './mrtr.js';
export { principalKey } from './principal.js';
export { MAX_CURSOR_LENGTH, decodeCursor, encodeCursor, paginate } from './cursor.js';
export type { CursorRefusal, CursorRefusalReason, DecodedCursor, Page } from './cursor.js';
export { DEFAULT_MAX_RENDERED, placeholders, renderTemplate } from './render.js';
export type { RenderOptions, RenderResult } from './render.js';
export { decodeUtf8, isTextualMime, mimeForPath, toResourceContents } from './content.js';
export type {
  BlobResourceContents,
  ResourceBody,
  ResourceContents,
  TextResourceContents,
} from './content.js';
export { MAX_TEMPLATE_LENGTH, expandTemplate, matchTemplate, parseTemplate } from './uritemplate.js';
export type { ParsedTemplate, TemplateError, TemplatePart } from './uritemplate.js';
export {
  HASH_PREFIX,
  constantTimeFind,
  hashKey,
  normalizeKeys,
  parseApiKeysEnv,
  parseKeyHash,
} from './apikeys.js';
export type {
  ApiKeyConfig,
  KeyHashResult,
  NormalizeKeysReason,
  NormalizeKeysResult,
  NormalizedKey,
  ParseKeysEnvResult,
} from './apikeys.js';
export { MAX_TOKEN_LENGTH, bearerChallenge, readBearer } from './bearer.js';
export type { ChallengeParams, Credential } from './bearer.js';
export {
  canonicalResource,
  checkAudience,
  claimName,
  hasAnyRole,
  identityOf,
  missingScopes,
  peekJwt,
  scopesOf,
} from './oidcclaims.js';
export type { AudienceResult, ClaimMapping, ClaimPath, IdentityResult, PeekResult } from './oidcclaims.js';
export {
  BUDGET_WINDOW_SECONDS,
  FixedWindows,
  LIMITS_ENV,
  LIMIT_DEFAULTS,
  LIMIT_MESSAGES,
  LIMIT_REASONS,
  MAX_LIMIT_VALUE,
  RPM_WINDOW_SECONDS,
  parseLimitsEnv,
  redisClientOptions,
  retryAfterSeconds,
} from './limits.js';
export type { LimitReason, LimitRefusalData, LimitsEnvResult, LimitsEnvValues } from './limits.js';
export {
  RULE_NAMES,
  REDACT_MODES,
  DEFAULT_REDACT_MAX_LENGTH,
  DEFAULT_REDACT_MAX_DEPTH,
  TRUNCATED_MARKER,
  TOO_DEEP_MARKER,
} from './redact/types.js';
export { luhn } from './redact/rules/card.js';
export { parseRedactMode, compileRedactor, redactText, redactValue } from './redact/index.js';
export type {
  RuleName,
  RedactMode,
  RedactOptions,
  RedactTally,
  RedactResult,
  Redactor,
  CompileResult,
} from './redact/index.js';
export { cleanText, sanitizeText } from './sanitize.js';
export { CANONICAL_MAX_DEPTH, argumentsDigest, canonicalJson } from './canonical-json.js';
export {
  MAX_BAGGAGE_BYTES,
  MAX_BAGGAGE_MEMBERS,
  MAX_TRACEPARENT_LENGTH,
  MAX_TRACESTATE_LENGTH,
  MAX_TRACESTATE_MEMBERS,
  TRACEPARENT_LENGTH,
  formatBaggage,
  formatTraceparent,
  formatTracestate,
  isTracestateKey,
  isTracestateValue,
  parseBaggage,
  parseTraceparent,
  parseTracestate,
  readTraceMeta,
} from './trace-context.js';
export type {
  BaggageEntry,
  BaggageProperty,
  BaggageReason,
  BaggageResult,
  TraceMeta,
  TraceParent,
  TraceparentReason,
  TraceparentResult,
  TracestateEntry,
  TracestateReason,
  TracestateResult,
} from './trace-context.js';
