/**
 * JSON-RPC and MCP error codes, refusal reasons, and the one table that maps each refusal to its HTTP status.
 *
 * Pure: no I/O. Every check in lib/ returns either a success value or a {@link Refusal} carrying a stable
 * `reason`, the JSON-RPC `code`, the HTTP `status` and a concise `message`; the middlewares only write it out.
 */

/** A JSON-RPC request id as MCP allows it: a string or an integer, never `null`. */
export type RequestId = string | number;

/** JSON-RPC and MCP error codes. */
export const ErrorCode = {
  /** Invalid JSON. */
  ParseError: -32700,
  /** Not a valid JSON-RPC request (batches, posted responses, bad envelopes, body limits). */
  InvalidRequest: -32600,
  /** Unknown method, a method the server's capabilities do not cover, or one the revision removed. */
  MethodNotFound: -32601,
  /** Missing modern envelope fields, unknown tools/prompts/resources, bad cursors. */
  InvalidParams: -32602,
  /** Anything unexpected. The message is always generic. */
  InternalError: -32603,
  /** MCP 2026-07-28: a standard or mirrored header is missing, malformed or disagrees with the body. */
  HeaderMismatch: -32020,
  /** MCP 2026-07-28: processing needs a client capability the request did not declare. */
  MissingRequiredClientCapability: -32021,
  /** MCP 2026-07-28: the requested protocol revision is not implemented. */
  UnsupportedProtocolVersion: -32022,
  /** Application codes (outside the JSON-RPC reserved range), equal to the HTTP status they travel with. */
  Unauthorized: 401,
  Forbidden: 403,
  RateLimited: 429,
  Unavailable: 503,
} as const;

export type ErrorCodeValue = (typeof ErrorCode)[keyof typeof ErrorCode];

/** The JSON-RPC error object. */
export interface JsonRpcError {
  code: number;
  message: string;
  data?: unknown;
}

/** A JSON-RPC error response. `id` is omitted (never `null`) when the request's id could not be read. */
export interface JsonRpcErrorResponse {
  jsonrpc: '2.0';
  id?: RequestId;
  error: JsonRpcError;
}

/** `data` of -32022. */
export interface UnsupportedVersionData {
  supported: string[];
  requested: string;
}
/** `data` of -32021. */
export interface MissingCapabilityData {
  requiredCapabilities: Record<string, unknown>;
}
/** `data` of -32020 as mcpware writes it (the spec defines none; these fields help debugging). */
export interface HeaderMismatchData {
  header: string;
  headerValue?: string;
  bodyValue?: string;
}

/**
 * Every refusal mcpware can produce. The reason is stable: logs, metrics and tests key on it.
 */
export type RefusalReason =
  | 'body_too_large'
  | 'unsupported_media_type'
  | 'unsupported_encoding'
  | 'body_unreadable'
  | 'parse_error'
  | 'batch'
  | 'invalid_request'
  | 'invalid_id'
  | 'duplicate_member'
  | 'forbidden_member'
  | 'too_deep'
  | 'method_too_long'
  | 'response_not_accepted'
  | 'method_not_allowed'
  | 'origin_not_allowed'
  | 'host_not_allowed'
  | 'host_duplicated'
  | 'host_mismatch'
  | 'missing_envelope'
  | 'invalid_envelope'
  | 'protocol_version_mismatch'
  | 'unsupported_protocol_version'
  | 'unsupported_legacy_version'
  | 'missing_header'
  | 'header_mismatch'
  | 'header_malformed'
  | 'missing_client_capability'
  | 'method_not_found'
  | 'invalid_params'
  | 'subscription_too_large'
  | 'unknown_task'
  | 'task_limit'
  | 'unauthorized'
  | 'forbidden'
  | 'rate_limited'
  | 'unavailable'
  | 'no_auth_decision'
  | 'session_invalid'
  | 'session_expired'
  | 'session_foreign'
  | 'internal_error'
  | 'upstream_unreachable'
  | 'upstream_timeout'
  | 'upstream_error'
  | 'upstream_invalid';

/** The era of a request: `modern` = MCP 2026-07-28 per-request envelope, `legacy` = `initialize` handshake. */
export type Era = 'modern' | 'legacy';

interface RefusalSpec {
  readonly code: number;
  /** HTTP status, or a status per era where the spec gives different ones. */
  readonly status: number | { readonly modern: number; readonly legacy: number };
  readonly message: string;
}

/** The JSON-RPC code of an unknown legacy session (the reference SDK's "Session not found"). */
const SESSION_NOT_FOUND = -32001;

/**
 * The one table: refusal reason → JSON-RPC code, HTTP status, default message.
 * Statuses follow the MCP 2026-07-28 transport (400 for envelope and header refusals, 404 for -32601 in the
 * modern era, 403 for Origin/Host), RFC 9112 §3.2 (400 for a request that names its host twice or two hosts)
 * and the conventions of the reference SDKs where the spec is silent
 * (413 body limit, 415 media type, 405 other HTTP methods).
 */
export const REFUSALS: Readonly<Record<RefusalReason, RefusalSpec>> = {
  body_too_large: { code: ErrorCode.InvalidRequest, status: 413, message: 'Request body too large' },
  unsupported_media_type: {
    code: ErrorCode.InvalidRequest,
    status: 415,
    message: 'Content-Type must be application/json',
  },
  unsupported_encoding: {
    code: ErrorCode.InvalidRequest,
    status: 415,
    message: 'Content-Encoding must be gzip, deflate, br or identity',
  },
  body_unreadable: { code: ErrorCode.InvalidRequest, status: 400, message: 'Request body could not be read' },
  parse_error: { code: ErrorCode.ParseError, status: 400, message: 'Parse error' },
  batch: {
    code: ErrorCode.InvalidRequest,
    status: 400,
    message: 'JSON-RPC batch requests are not supported: send one message per POST',
  },
  invalid_request: { code: ErrorCode.InvalidRequest, status: 400, message: 'Invalid Request' },
  invalid_id: {
    code: ErrorCode.InvalidRequest,
    status: 400,
    message: 'Request id must be a string or a safe integer',
  },
  duplicate_member: { code: ErrorCode.InvalidRequest, status: 400, message: 'A member is named twice' },
  forbidden_member: { code: ErrorCode.InvalidRequest, status: 400, message: 'Forbidden member name' },
  too_deep: { code: ErrorCode.InvalidRequest, status: 400, message: 'Request nesting is too deep' },
  method_too_long: {
    code: ErrorCode.InvalidRequest,
    status: 400,
    message: 'Method name is too long',
  },
  response_not_accepted: {
    code: ErrorCode.InvalidRequest,
    status: 400,
    message: 'JSON-RPC responses are not accepted by this server',
  },
  method_not_allowed: {
    code: ErrorCode.InvalidRequest,
    status: 405,
    message: 'Method not allowed: use POST',
  },
  origin_not_allowed: { code: ErrorCode.Forbidden, status: 403, message: 'Origin not allowed' },
  host_not_allowed: { code: ErrorCode.Forbidden, status: 403, message: 'Host not allowed' },
  host_duplicated: { code: ErrorCode.InvalidRequest, status: 400, message: 'Host must be sent once' },
  host_mismatch: {
    code: ErrorCode.InvalidRequest,
    status: 400,
    message: 'The request target names another host',
  },
  missing_envelope: {
    code: ErrorCode.InvalidParams,
    status: 400,
    message: 'Request is missing required _meta envelope fields',
  },
  invalid_envelope: {
    code: ErrorCode.InvalidParams,
    status: 400,
    message: 'Request _meta envelope is malformed',
  },
  protocol_version_mismatch: {
    code: ErrorCode.HeaderMismatch,
    status: 400,
    message: 'MCP-Protocol-Version header does not match the _meta protocol version',
  },
  unsupported_protocol_version: {
    code: ErrorCode.UnsupportedProtocolVersion,
    status: 400,
    message: 'Unsupported protocol version',
  },
  unsupported_legacy_version: {
    code: ErrorCode.InvalidParams,
    status: 400,
    message: 'Unsupported MCP-Protocol-Version header',
  },
  missing_header: { code: ErrorCode.HeaderMismatch, status: 400, message: 'A required header is missing' },
  header_mismatch: { code: ErrorCode.HeaderMismatch, status: 400, message: 'Header does not match the body' },
  header_malformed: { code: ErrorCode.HeaderMismatch, status: 400, message: 'Header value is malformed' },
  missing_client_capability: {
    code: ErrorCode.MissingRequiredClientCapability,
    status: 400,
    message: 'A required client capability was not declared',
  },
  method_not_found: {
    code: ErrorCode.MethodNotFound,
    status: { modern: 404, legacy: 200 },
    message: 'Method not found',
  },
  invalid_params: { code: ErrorCode.InvalidParams, status: 200, message: 'Invalid params' },
  subscription_too_large: {
    code: ErrorCode.InvalidParams,
    status: 200,
    message: 'Invalid params: the subscription is over a bound (a URI, the filter or the id is too long)',
  },
  // One answer for a task that does not exist, is another caller's or has expired: nothing tells them apart.
  unknown_task: {
    code: ErrorCode.InvalidParams,
    status: 200,
    message: 'Failed to retrieve task: Task not found',
  },
  task_limit: { code: ErrorCode.RateLimited, status: 429, message: 'Task limit reached' },
  unauthorized: { code: ErrorCode.Unauthorized, status: 401, message: 'Unauthorized' },
  forbidden: { code: ErrorCode.Forbidden, status: 403, message: 'Forbidden' },
  rate_limited: { code: ErrorCode.RateLimited, status: 429, message: 'Rate limit exceeded' },
  unavailable: { code: ErrorCode.Unavailable, status: 503, message: 'Service unavailable' },
  no_auth_decision: {
    code: ErrorCode.InternalError,
    status: 500,
    message: 'Server misconfiguration: the request was not authenticated',
  },
  // A legacy session the server does not know: 404, the 2025-11-25 transport's "start a new session", with the
  // code the reference SDK answers an unknown session with.
  session_invalid: { code: SESSION_NOT_FOUND, status: 404, message: 'Session not found' },
  session_expired: { code: SESSION_NOT_FOUND, status: 404, message: 'Session expired: initialize again' },
  session_foreign: {
    code: SESSION_NOT_FOUND,
    status: 404,
    message: 'Session not found for this caller',
  },
  internal_error: { code: ErrorCode.InternalError, status: 500, message: 'Internal error' },
  upstream_unreachable: {
    code: ErrorCode.InternalError,
    status: 502,
    message: 'Upstream server unreachable',
  },
  upstream_timeout: { code: ErrorCode.InternalError, status: 504, message: 'Upstream server timed out' },
  upstream_error: { code: ErrorCode.InternalError, status: 502, message: 'Upstream server error' },
  upstream_invalid: {
    code: ErrorCode.InternalError,
    status: 502,
    message: 'Invalid answer from the upstream server',
  },
};

/** A refusal: the outcome of a failed check, ready to be written as a JSON-RPC error. */
export interface Refusal {
  readonly ok: false;
  readonly reason: RefusalReason;
  readonly code: number;
  readonly status: number;
  readonly message: string;
  readonly data?: unknown;
}

/** Build a refusal from the table. `era` picks the status where it differs per era (default modern). */
export function refusal(
  reason: RefusalReason,
  opts: { message?: string; data?: unknown; era?: Era } = {},
): Refusal {
  const spec = REFUSALS[reason];
  const status = typeof spec.status === 'number' ? spec.status : spec.status[opts.era ?? 'modern'];
  const out: {
    ok: false;
    reason: RefusalReason;
    code: number;
    status: number;
    message: string;
    data?: unknown;
  } = {
    ok: false,
    reason,
    code: spec.code,
    status,
    message: opts.message ?? spec.message,
  };
  if (opts.data !== undefined) out.data = opts.data;
  return out;
}

/** HTTP status for a refusal reason in an era. */
export function statusFor(reason: RefusalReason, era: Era = 'modern'): number {
  const s = REFUSALS[reason].status;
  return typeof s === 'number' ? s : s[era];
}

/** True for a usable JSON-RPC id: a string, or an integer within the safe range. `0` and `""` count. */
export function isRequestId(id: unknown): id is RequestId {
  return typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id));
}

/** A JSON-RPC error response, echoing `id` only when it is a readable request id. */
export function errorResponse(id: unknown, error: JsonRpcError): JsonRpcErrorResponse {
  const err: JsonRpcError = { code: error.code, message: error.message };
  if (error.data !== undefined) err.data = error.data;
  return isRequestId(id) ? { jsonrpc: '2.0', id, error: err } : { jsonrpc: '2.0', error: err };
}

/** The error response for a refusal. */
export function refusalResponse(id: unknown, r: Refusal): JsonRpcErrorResponse {
  return errorResponse(id, { code: r.code, message: r.message, data: r.data });
}

/**
 * An error a handler may throw to answer with a specific JSON-RPC error. Anything else thrown by a handler
 * becomes -32603 with a generic message.
 * @example
 * ```ts
 * import { ErrorCode, McpError } from 'mcpware';
 *
 * function findOrder(id: string): never {
 *   throw new McpError(ErrorCode.InvalidParams, `Unknown order ${id}`, { id });
 * }
 * ```
 */
export class McpError extends Error {
  readonly code: number;
  readonly data?: unknown;
  /** HTTP status to send with it; defaults to the dispatcher's rule (200 in-band, 400 for -32021). */
  readonly status?: number;
  constructor(code: number, message: string, data?: unknown, status?: number) {
    super(message);
    this.name = 'McpError';
    this.code = code;
    if (data !== undefined) this.data = data;
    if (status !== undefined) this.status = status;
  }
}

/**
 * The base of the operational errors mcpware raises or reports at run time (a store or a key set that is
 * unavailable, a catalogue that cannot be loaded): a stable string `code` to branch on, so callers and tests
 * never match message text. Option errors stay `TypeError`s, thrown when a factory is called.
 * @example
 * ```ts
 * import { McpwareError } from 'mcpware/lib';
 * import { loadCatalogue } from 'mcpware/catalogue';
 *
 * try {
 *   await loadCatalogue('./catalogue');
 * } catch (err) {
 *   if (err instanceof McpwareError) console.error(err.code); // e.g. 'ERR_CATALOGUE'
 *   else throw err;
 * }
 * ```
 */
export class McpwareError<C extends string = string> extends Error {
  readonly code: C;
  constructor(code: C, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}
