/**
 * The MCP semantic conventions as `otel()` writes them: the span name, the bounded attribute values, the
 * methods that keep their own `mcp.method.name`, and which JSON-RPC codes count as server errors. Pure: no
 * OpenTelemetry import, no I/O.
 * @see docs/middleware/otel.md
 */
import { REFUSALS, type RefusalReason } from '../../lib/errors.js';
import type { McpRequest } from '../../lib/request.js';
import { METHOD_TARGETS, RECEIVED_METHODS } from '../../lib/routing.js';

/** `mcp.method.name` (and the span name) of a method the conventions do not know: never the request's string. */
export const OTHER = '_OTHER';
/** Longest tool or prompt name, request id or span-name target written (code units). */
export const MAX_NAME = 128;
/** Longest `mcp.session.id` written (mcpware's own session ids are signed tokens of about 200 characters). */
export const MAX_SESSION = 512;
/** Longest `mcp.resource.uri` written. */
export const MAX_URI = 1024;
/** Longest captured argument or result JSON written. */
export const MAX_CAPTURE = 4096;

/**
 * The methods `mcp.method.name` names as they are (the conventions' well-known values and the methods mcpware
 * routes); any other method is {@link OTHER}, so a metric's attribute stays bounded.
 */
export const KNOWN_METHODS: ReadonlySet<string> = new Set([
  ...RECEIVED_METHODS,
  // What a server sends: its requests to the client and its notifications.
  'sampling/createMessage',
  'elicitation/create',
  'roots/list',
  'notifications/message',
  'notifications/resources/list_changed',
  'notifications/resources/updated',
  'notifications/prompts/list_changed',
  'notifications/tools/list_changed',
  'notifications/subscriptions/acknowledged',
]);

/** The `mcp.method.name` of a method: itself when known, else {@link OTHER}. */
export function methodName(method: string | undefined): string {
  return method !== undefined && KNOWN_METHODS.has(method) ? method : OTHER;
}

/** `s` cut to `max` code units (a cut surrogate pair loses its first half too). */
export function bounded(s: string, max: number): string {
  if (s.length <= max) return s;
  const code = s.charCodeAt(max - 1);
  return s.slice(0, code >= 0xd800 && code <= 0xdbff ? max - 1 : max);
}

/**
 * The JSON-RPC codes the conventions say a server does not count as its error (the caller sent what the server
 * could not serve): parse error, invalid request, method not found, invalid params, resource not found.
 */
const NOT_SERVER_ERRORS: ReadonlySet<number> = new Set([-32700, -32600, -32601, -32602, -32002]);

/** Whether a JSON-RPC error code is a server error (`error.type` and span status ERROR) per the conventions. */
export function isServerError(code: number): boolean {
  return !NOT_SERVER_ERRORS.has(code);
}

/** The generic messages mcpware answers these codes with when no refusal names the message. */
const CODE_MESSAGES: ReadonlyMap<number, string> = new Map([
  [-32700, 'Parse error'],
  [-32600, 'Invalid Request'],
  [-32601, 'Method not found'],
  [-32602, 'Invalid params'],
  [-32603, 'Internal error'],
]);

/**
 * The status description of an error answer: the refusal table's message for a refusal (what mcpware writes for
 * that reason), the generic message of a standard code, else none. Never an exception's text.
 */
export function errorMessage(code: number, reason: RefusalReason | undefined): string | undefined {
  if (reason !== undefined && Object.hasOwn(REFUSALS, reason)) return REFUSALS[reason].message;
  return CODE_MESSAGES.get(code);
}

/** The span name target of a request: the tool or prompt name, the URI only by opt-in, clipped. */
export function targetOf(mcp: McpRequest, uriInName: boolean): string | undefined {
  const target = mcp.target;
  if (target === undefined || mcp.method === undefined) return undefined;
  const kind = METHOD_TARGETS.get(mcp.method)?.kind;
  if (kind === 'tool' || kind === 'prompt' || (kind === 'resource' && uriInName))
    return bounded(target, MAX_NAME);
  return undefined;
}

/** `{mcp.method.name} {target}`, or the method name alone. */
export function spanName(method: string, target: string | undefined): string {
  return target === undefined || method === OTHER ? method : `${method} ${target}`;
}

/** A value as JSON clipped to {@link MAX_CAPTURE}, or undefined when it cannot be written. */
export function captured(value: unknown): string | undefined {
  try {
    const text = JSON.stringify(value);
    return typeof text === 'string' ? bounded(text, MAX_CAPTURE) : undefined;
  } catch {
    return undefined;
  }
}

/** A protocol revision as `mcp.protocol.version` takes it: a date-shaped revision string, else none. */
export function revisionOf(version: unknown): string | undefined {
  return typeof version === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(version) ? version : undefined;
}
