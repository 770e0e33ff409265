/**
 * The answer to an HTTP method the MCP endpoint does not serve. The endpoint serves POST only: `methodGuard()`
 * answers every other method with 405, `Allow: POST` and a JSON-RPC error without id, and so does each
 * middleware that serves POST only (those that read the JSON-RPC message or act on its answer) when such a
 * request reaches it. So a stack without `methodGuard()` still answers JSON, never the host's HTML 404 page,
 * and a client that opens the 2025-11-25 GET stream learns there is none.
 *
 * Two requests go on instead: OPTIONS, a CORS preflight for the CORS middleware mounted after (the auth
 * middlewares let it through as well), and a request `dispatch()` passed on (it answers other methods with the
 * same 405 and passes OPTIONS on): the middleware is then mounted after `dispatch()` (its mount-order check
 * says so).
 *
 * @see docs/middleware/method-guard.md#the-other-middlewares
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { refusal } from '../lib/errors.js';
import { passedOnByDispatch } from './mount-order.js';
import { sendRefusal } from './respond.js';

const ALLOW: Readonly<Record<string, string>> = Object.freeze({ Allow: 'POST' });

/** Answer 405 `method_not_allowed` with `Allow: POST` and no id, recorded as refused by `by`. */
export function refuseMethod(req: IncomingMessage, res: ServerResponse, by: string): void {
  sendRefusal(req, res, refusal('method_not_allowed'), by, { id: undefined, headers: ALLOW });
}

/**
 * What a POST-only middleware named `by` does with a request whose method is not POST: `next()` for OPTIONS and
 * for a request `dispatch()` passed on, else the 405 of {@link refuseMethod}.
 */
export function notPost(req: IncomingMessage, res: ServerResponse, next: () => void, by: string): void {
  if (req.method === 'OPTIONS' || passedOnByDispatch(req)) return next();
  refuseMethod(req, res, by);
}
