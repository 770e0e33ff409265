/**
 * The test for a JSON object that every layer shares: request members, handler results and option values are
 * all checked with it.
 */
import type { JsonObject } from './jsonrpc.js';

/**
 * True for what JSON calls an object: not null, not an array. The prototype is not checked, so a class
 * instance or a `Buffer` passes too; code that needs a literal object checks `Object.getPrototypeOf` itself.
 */
export function isJsonObject(v: unknown): v is JsonObject {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
