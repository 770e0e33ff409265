/**
 * mcpware/lib: pure, framework-free protocol functions. No I/O.
 */
export * from './errors.js';
export * from './revisions.js';
export * from './meta.js';
export * from './sentinel.js';
export * from './jsonrpc.js';
export * from './classify.js';
export * from './headers.js';
export * from './xmcpheader.js';
export * from './request.js';
export * from './routing.js';
// Everything but encodedOnce and deepFreeze (internal to the tool registry).
export {
  DEFAULT_CACHE_HINT,
  LEGACY_RESOURCE_NOT_FOUND,
  statusForCode,
  sendableCode,
  encodeResult,
  encodeResultText,
} from './encode.js';
export type {
  CacheHint,
  Implementation,
  EncodeInput,
  EncodeFailure,
  EncodeResult,
  EncodeTextResult,
} from './encode.js';
export * from './mrtr.js';
export * from './cursor.js';
export * from './render.js';
export * from './content.js';
export * from './uritemplate.js';
export * from './apikeys.js';
export * from './bearer.js';
export * from './oidcclaims.js';
export * from './limits.js';
export {
  RULE_NAMES,
  REDACT_MODES,
  DEFAULT_REDACT_MAX_LENGTH,
  DEFAULT_REDACT_MAX_DEPTH,
  TRUNCATED_MARKER,
  TOO_DEEP_MARKER,
  REDACT_GUARD,
  maskMarker,
  newTally,
  redactResultOf,
  parseRedactMode,
  luhn,
  isMaskableIPv6,
  compileRedactor,
  redactText,
  redactValue,
} from './redact/index.js';
export type {
  RuleName,
  RedactMode,
  RedactOptions,
  RedactTally,
  RedactResult,
  Redactor,
  CompileResult,
} from './redact/index.js';
export * from './sanitize.js';
export * from './canonical-json.js';
