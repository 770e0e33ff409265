/**
 * `methodGuard()`: the MCP endpoint answers POST only. GET, DELETE, PUT, PATCH and every other HTTP method →
 * 405 with `Allow: POST` and a JSON-RPC error without id. This server keeps no sessions and pushes nothing on
 * a standalone GET stream (2025-11-25 allows 405 for both; 2026-07-28 says 405).
 * @see docs/middleware/method-guard.md
 */
import { refuseMethod } from '../../core/post-only.js';
import { boolOption, knownKeys, optionsObject } from '../../core/options.js';
import type { Middleware } from '../../core/types.js';

export interface MethodGuardOptions {
  /** Also let OPTIONS through to a CORS middleware mounted after this one. Default false. */
  allowOptions?: boolean;
}

const OPTIONS = ['allowOptions'] as const;

/**
 * Answer every HTTP method but POST with a JSON 405 and `Allow: POST` (OPTIONS passes on with
 * `allowOptions`, for a CORS middleware after it). Mount the stack with `app.use`, so that a GET reaches it.
 * @param options - {@link MethodGuardOptions}
 * @see docs/middleware/method-guard.md
 * @example
 * ```ts
 * import { methodGuard } from 'mcpware/method-guard';
 *
 * app.use('/mcp', methodGuard({ allowOptions: true }));
 * ```
 */
export function methodGuard(options?: MethodGuardOptions): Middleware {
  const o = optionsObject('methodGuard', options);
  knownKeys('methodGuard', o, OPTIONS);
  const allowOptions = boolOption('methodGuard', 'allowOptions', o.allowOptions, false);
  return function mcpMethodGuard(req, res, next) {
    if (req.method === 'POST' || (allowOptions && req.method === 'OPTIONS')) return next();
    refuseMethod(req, res, 'methodGuard');
  };
}
