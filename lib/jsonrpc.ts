/**
 * JSON-RPC 2.0 message parsing and classification, hardened for a public endpoint.
 *
 * - Bodies are parsed once with the platform's JSON parser, then scanned iteratively (`jsonrpc-scan.ts`) to
 *   bound nesting depth and refuse members named twice.
 * - Duplicate members: an exact duplicate is refused anywhere in the body (JSON parsers disagree on which copy
 *   wins). In the envelope, in `params` and in `params._meta`, names are also compared case-insensitively
 *   (`id`/`ID`, `method`/`Method`): parsers that fold case (Go's `encoding/json`, used by many proxies and
 *   gateways) would read a different member than we do, and that differential is a smuggling vector. Inside
 *   `arguments` and other user data only exact duplicates count, since `id` and `ID` may both be legitimate.
 * - A member named `__proto__`, or a member named `constructor` holding an object, is refused anywhere: they
 *   are the raw material of prototype pollution in code that merges request data.
 * - A method name longer than {@link MAX_METHOD_LENGTH} is refused before anything folds, routes, logs or
 *   counts it: MCP method names are short, and every later step may copy or keep the name.
 * @see docs/middleware/parse.md
 */
import { type Refusal, type RequestId, isRequestId, refusal } from './errors.js';
import { type ScanProblem, scanMembers } from './jsonrpc-scan.js';
import { isJsonObject } from './json.js';

export type JsonObject = Record<string, unknown>;

export type MessageKind = 'request' | 'notification' | 'response' | 'error';

export interface RequestMessage {
  kind: 'request';
  id: RequestId;
  method: string;
  params?: JsonObject;
  raw: JsonObject;
}
export interface NotificationMessage {
  kind: 'notification';
  method: string;
  params?: JsonObject;
  raw: JsonObject;
}
export interface ResponseMessage {
  kind: 'response';
  id: RequestId;
  result: unknown;
  raw: JsonObject;
}
export interface ErrorMessage {
  kind: 'error';
  id?: RequestId;
  error: { code: number; message: string; data?: unknown };
  raw: JsonObject;
}
export type Message = RequestMessage | NotificationMessage | ResponseMessage | ErrorMessage;

export type ParseResult = ({ ok: true } & Message) | (Refusal & { id?: RequestId });

export interface ParseMessageOptions {
  /** Deepest nesting of objects and arrays accepted (the top-level object is depth 1). Default 64. */
  maxDepth?: number;
}

export const DEFAULT_MAX_DEPTH = 64;

/**
 * Longest method name accepted, in UTF-16 code units. The longest method MCP defines
 * (`notifications/resources/list_changed`) is 36; the bound leaves room for vendor methods.
 */
export const MAX_METHOD_LENGTH = 256;

/**
 * True when the first character that is not JSON whitespace (after an optional BOM) is `[`: the text may be a
 * batch. Only text that also parses as JSON is one (invalid JSON is a parse error, -32700).
 */
export function isBatchText(text: string): boolean {
  let i = 0;
  if (text.charCodeAt(0) === 0xfeff) i = 1;
  for (; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) continue;
    return c === 0x5b;
  }
  return false;
}

/** Bytes variant of {@link isBatchText}: whitespace and a UTF-8 BOM (EF BB BF) are skipped. */
export function isBatchBytes(buf: Uint8Array): boolean {
  let i = 0;
  if (buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) i = 3;
  for (; i < buf.length; i++) {
    const c = buf[i]!;
    if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) continue;
    return c === 0x5b;
  }
  return false;
}

/**
 * Parse JSON text into one classified JSON-RPC message, or a refusal. Never throws.
 * Refusals: `parse_error` (-32700, invalid JSON, even when it begins with `[`), `batch` (a JSON array), `too_deep`, `duplicate_member`,
 * `forbidden_member`, `invalid_id`, `invalid_request` (-32600 for anything that is not one JSON-RPC message),
 * `method_too_long` (-32600, a method name past {@link MAX_METHOD_LENGTH}).
 */
export function parseMessage(text: string, opts: ParseMessageOptions = {}): ParseResult {
  return parseMessageWithMemory(text, opts.maxDepth ?? DEFAULT_MAX_DEPTH, undefined);
}

/**
 * {@link parseMessage} with the nesting limit given as it is, and the member scan's working memory when the
 * caller keeps one for every parse, as the parse step does (see `scanMembers` and
 * docs/performance.md#scan-memory); `undefined` makes one per call.
 */
export function parseMessageWithMemory(
  text: string,
  maxDepth: number,
  scanMemory: number[] | undefined,
): ParseResult {
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // Invalid JSON is a parse error, whatever its first character: only a JSON array is a batch.
    return refusal('parse_error');
  }
  if (Array.isArray(value)) return refusal('batch');
  if (value !== null && typeof value === 'object') {
    const problem = scanMembers(text, maxDepth, scanMemory);
    if (problem) {
      const r = refusal(problem.reason, { message: problem.message });
      const id = (value as JsonObject).id;
      return isRequestId(id) ? { ...r, id } : r;
    }
  }
  return classifyMessage(value);
}

/**
 * Validate an already-parsed value (for example `req.body` from express.json): depth and forbidden members are
 * checked iteratively; duplicate members cannot be seen once parsed, so use {@link parseMessage} on the raw
 * text when you can.
 */
export function parseValue(value: unknown, opts: ParseMessageOptions = {}): ParseResult {
  const maxDepth = opts.maxDepth ?? DEFAULT_MAX_DEPTH;
  if (Array.isArray(value)) return refusal('batch');
  if (value !== null && typeof value === 'object') {
    const problem = scanValue(value, maxDepth);
    if (problem) {
      const r = refusal(problem.reason, { message: problem.message });
      const id = (value as JsonObject).id;
      return isRequestId(id) ? { ...r, id } : r;
    }
  }
  return classifyMessage(value);
}

function scanValue(root: object, maxDepth: number): ScanProblem | undefined {
  const stack: Array<[unknown, number]> = [[root, 1]];
  let guard = 0;
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (++guard > 1_000_000) return { reason: 'too_deep', message: 'Request is too large to inspect' };
    if (v === null || typeof v !== 'object') continue;
    if (depth > maxDepth)
      return { reason: 'too_deep', message: `Request nesting exceeds ${maxDepth} levels` };
    if (Array.isArray(v)) {
      for (const x of v) stack.push([x, depth + 1]);
      continue;
    }
    for (const k of Object.keys(v)) {
      if (k === '__proto__')
        return { reason: 'forbidden_member', message: 'Member "__proto__" is not allowed' };
      const child = (v as JsonObject)[k];
      if (k === 'constructor' && child !== null && typeof child === 'object') {
        return { reason: 'forbidden_member', message: 'Member "constructor" may not hold an object' };
      }
      stack.push([child, depth + 1]);
    }
  }
  return undefined;
}

/** Classify a parsed JSON value as one JSON-RPC message. */
export function classifyMessage(value: unknown): ParseResult {
  if (!isJsonObject(value)) {
    return refusal('invalid_request', { message: 'Invalid Request: the body must be a JSON-RPC object' });
  }
  const m = value as JsonObject;
  const rawId = m.id;
  const idPresent = Object.hasOwn(m, 'id');
  const readableId = isRequestId(rawId) ? rawId : undefined;
  const bad = (message: string): ParseResult => {
    const r = refusal('invalid_request', { message });
    return readableId !== undefined ? { ...r, id: readableId } : r;
  };
  if (m.jsonrpc !== '2.0') return bad('Invalid Request: jsonrpc must be "2.0"');
  if (idPresent && readableId === undefined) {
    return refusal('invalid_id', {
      message:
        rawId === null
          ? 'Request id must not be null: omit it for a notification'
          : 'Request id must be a string or a safe integer',
    });
  }
  if (Object.hasOwn(m, 'method')) {
    const method = m.method;
    // Any string within the bound, the empty one included: a method no server has is answered -32601 by the
    // dispatcher.
    if (typeof method !== 'string') return bad('Invalid Request: method must be a string');
    if (method.length > MAX_METHOD_LENGTH) {
      const r = refusal('method_too_long', {
        message: `Method name is longer than ${MAX_METHOD_LENGTH} characters`,
      });
      return readableId !== undefined ? { ...r, id: readableId } : r;
    }
    if (Object.hasOwn(m, 'result') || Object.hasOwn(m, 'error'))
      return bad('Invalid Request: a request cannot carry result or error');
    let params: JsonObject | undefined;
    if (Object.hasOwn(m, 'params') && m.params !== null) {
      if (!isJsonObject(m.params)) {
        return bad('Invalid Request: params must be an object');
      }
      params = m.params as JsonObject;
    }
    if (readableId !== undefined) {
      const out: { ok: true } & RequestMessage = {
        ok: true,
        kind: 'request',
        id: readableId,
        method,
        raw: m,
      };
      if (params) out.params = params;
      return out;
    }
    const out: { ok: true } & NotificationMessage = { ok: true, kind: 'notification', method, raw: m };
    if (params) out.params = params;
    return out;
  }
  const hasResult = Object.hasOwn(m, 'result');
  const hasError = Object.hasOwn(m, 'error');
  if (hasResult && hasError) return bad('Invalid Request: a response cannot carry both result and error');
  if (hasResult) {
    if (readableId === undefined) return bad('Invalid Request: a response needs an id');
    return { ok: true, kind: 'response', id: readableId, result: m.result, raw: m };
  }
  if (hasError) {
    const e = m.error;
    if (!isJsonObject(e)) return bad('Invalid Request: error must be an object');
    const eo = e as JsonObject;
    if (typeof eo.code !== 'number' || !Number.isInteger(eo.code) || typeof eo.message !== 'string') {
      return bad('Invalid Request: error needs an integer code and a string message');
    }
    const error: ErrorMessage['error'] = { code: eo.code, message: eo.message };
    if (Object.hasOwn(eo, 'data')) error.data = eo.data;
    const out: { ok: true } & ErrorMessage = { ok: true, kind: 'error', error, raw: m };
    if (readableId !== undefined) out.id = readableId;
    return out;
  }
  return bad('Invalid Request: not a request, notification, response or error');
}
