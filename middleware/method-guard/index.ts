/**
 * `methodGuard()`: the MCP endpoint answers POST only. GET, DELETE, PUT, PATCH and every other HTTP method →
 * 405 with `Allow: POST` and a JSON-RPC error without id. This server keeps no sessions and pushes nothing on
 * a standalone GET stream (2025-11-25 allows 405 for both; 2026-07-28 says 405).
 */
import { refusal } from '../../lib/errors.js';
import { sendRefusal } from '../internal/respond.js';
import type { Middleware } from '../types.js';

export interface MethodGuardOptions {
  /** Also let OPTIONS through to a CORS middleware mounted after this one. Default false. */
  allowOptions?: boolean;
}

export function methodGuard(options: MethodGuardOptions = {}): Middleware {
  if (options === null || typeof options !== 'object')
    throw new TypeError('methodGuard: options must be an object');
  if (options.allowOptions !== undefined && typeof options.allowOptions !== 'boolean') {
    throw new TypeError(
      `methodGuard: option "allowOptions" must be a boolean, got ${JSON.stringify(options.allowOptions)}`,
    );
  }
  const allowOptions = options.allowOptions === true;
  return function mcpMethodGuard(req, res, next) {
    if (req.method === 'POST' || (allowOptions && req.method === 'OPTIONS')) return next();
    sendRefusal(req, res, refusal('method_not_allowed'), 'methodGuard', {
      id: undefined,
      headers: { Allow: 'POST' },
    });
  };
}
