/**
 * What one JSON-RPC message from a server is, as audit and metrics record an answer: a result (a tool's
 * `isError: true` result told apart), an error with its code, a request or notification the server sends on
 * the way, or not a JSON-RPC message at all. The forwarding engine classifies each message of a server's
 * answer with it.
 *
 * Pure: no I/O.
 */
import type { RequestId } from './errors.js';
import { type JsonObject, classifyMessage } from './jsonrpc.js';
import { isJsonObject } from './json.js';

/** One classified message. */
export type AnswerClass =
  /** A result (`result` an object). `toolError`: `isError: true`; `resultType`: the modern member, else `complete`. */
  | {
      readonly kind: 'result';
      readonly id: RequestId;
      readonly result: JsonObject;
      readonly toolError: boolean;
      readonly resultType: string;
    }
  /** An error response; `id` when it has one. */
  | { readonly kind: 'error'; readonly id?: RequestId; readonly code: number }
  /** A server-to-client request (legacy) or a notification. */
  | { readonly kind: 'request' | 'notification'; readonly method: string }
  /** Not one JSON-RPC message, or a result that is not an object. */
  | { readonly kind: 'invalid' };

/** The longest `resultType` recorded as it is; a longer one is not a result (audit labels stay bounded). */
const MAX_RESULT_TYPE = 64;

/**
 * Classify a parsed JSON value as a server's message.
 * @example
 * ```ts
 * classifyAnswer({ jsonrpc: '2.0', id: 1, result: { content: [], isError: true } });
 * // { kind: 'result', id: 1, result: {...}, toolError: true, resultType: 'complete' }
 * ```
 */
export function classifyAnswer(value: unknown): AnswerClass {
  // An error about a request the server could not identify carries `id: null` (a v1 session not found): an
  // error without id.
  const nullId = isJsonObject(value) && value.id === null && Object.hasOwn(value, 'error');
  const m = classifyMessage(nullId ? { jsonrpc: value.jsonrpc, error: value.error } : value);
  if (!m.ok) return { kind: 'invalid' };
  switch (m.kind) {
    case 'response': {
      if (!isJsonObject(m.result)) return { kind: 'invalid' };
      const rt = m.result.resultType;
      if (rt !== undefined && (typeof rt !== 'string' || rt === '' || rt.length > MAX_RESULT_TYPE))
        return { kind: 'invalid' };
      return {
        kind: 'result',
        id: m.id,
        result: m.result,
        toolError: m.result.isError === true,
        resultType: rt ?? 'complete',
      };
    }
    case 'error':
      return m.id === undefined
        ? { kind: 'error', code: m.error.code }
        : { kind: 'error', id: m.id, code: m.error.code };
    case 'request':
    case 'notification':
      return { kind: m.kind, method: m.method };
  }
}
