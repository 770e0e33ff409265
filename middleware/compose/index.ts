/**
 * `compose(...middlewares)`: run Connect-style middlewares in order as one function. On bare `node:http` it is the
 * request listener; in Express or Connect it mounts as one middleware (`app.use('/mcp', compose([...]))`). With
 * the `path` option the chain runs for that path only, and every other request goes on as if compose() were not
 * there: to the host's `next()`, or 404 on bare `node:http`. An error passed to `next(err)` (or thrown
 * synchronously) ends the chain with a generic -32603 answer and goes to the logger. A request that falls off
 * the end of the chain goes on to the host's `next()` when there is one (Express, Connect), and gets 404
 * otherwise (bare `node:http`).
 * @see docs/middleware/compose.md
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendInternalError, sendJson, stderrLogger } from '../../core/respond.js';
import {
  OPTION_ERRORS,
  badOption,
  knownKeys,
  loggerOption,
  optionError,
  optionsObject,
} from '../../core/options.js';
import type { Logger, Middleware } from '../../core/types.js';

export interface ComposeOptions {
  /** Where errors passed to `next(err)` or thrown by a middleware are logged. Default: stderr. */
  logger?: Logger;
  /**
   * The path the chain answers (`/mcp`), matched exactly against the request's full path without its query
   * string (`req.originalUrl` under an Express or Connect mount). Default: every request.
   */
  path?: string;
}

/** A request listener for node:http that is also a Connect-style middleware. */
export type Composed = (req: IncomingMessage, res: ServerResponse, next?: (err?: unknown) => void) => void;

const MAX_PATH = 1024;

/**
 * Run Connect-style middlewares in order as one function: the request listener of a bare `node:http` server,
 * or one middleware under Express or Connect. `next(err)` or a throw ends the chain with a generic -32603; a
 * request that falls off the end goes to the host's `next()`, or gets 404 on bare `node:http`.
 * @param middlewares - the chain, run in order
 * @param options - {@link ComposeOptions}
 * @see docs/middleware/compose.md
 * @example
 * ```ts
 * import http from 'node:http';
 * import { compose } from 'mcpware/compose';
 * import { dispatch } from 'mcpware/dispatch';
 * import { parse } from 'mcpware/parse';
 *
 * const serverInfo = { name: 'my-server', version: '1.0.0' };
 * const mcp = compose([parse(), dispatch({ anonymous: true, handlers: {}, serverInfo })], { path: '/mcp' });
 * http.createServer(mcp).listen(3000, '127.0.0.1');
 * ```
 */
export function compose(middlewares: readonly Middleware[], options?: ComposeOptions): Composed {
  if (!Array.isArray(middlewares) || middlewares.some((m) => typeof m !== 'function')) {
    throw optionError(OPTION_ERRORS.invalid, 'compose', 'compose: expected an array of middleware functions');
  }
  const o = optionsObject('compose', options);
  knownKeys('compose', o, ['logger', 'path']);
  const logger = loggerOption('compose', o.logger, stderrLogger);
  const path = pathOption(o.path);
  const chain = [...middlewares];
  return function composed(req: IncomingMessage, res: ServerResponse, outer?: (err?: unknown) => void) {
    // node:http passes no third argument; Express and Connect pass their own next.
    const passOn = (): void => {
      if (typeof outer === 'function') outer();
      else if (!res.headersSent) sendJson(res, 404, { error: 'Not found' });
    };
    if (path !== undefined && requestPath(req) !== path) return passOn();
    let i = 0;
    const next = (err?: unknown): void => {
      if (err !== undefined && err !== null) return sendInternalError(req, res, err, 'compose', logger);
      const mw = chain[i++];
      if (!mw) return passOn();
      try {
        mw(req, res, next);
      } catch (e) {
        sendInternalError(req, res, e, 'compose', logger);
      }
    };
    next();
  };
}

function pathOption(v: unknown): string | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || !v.startsWith('/') || /[?#]/.test(v) || v.length > MAX_PATH) {
    throw badOption(
      'compose',
      'path',
      v,
      `a path starting with "/", without a query string or fragment, of at most ${MAX_PATH} characters`,
    );
  }
  return v;
}

/**
 * The path of the request as it arrived: `req.originalUrl` where a host router rewrote `req.url` for a mount,
 * without the query string; an absolute-form target (`http://host/mcp`) by its path.
 */
function requestPath(req: IncomingMessage): string {
  const original = (req as { originalUrl?: unknown }).originalUrl;
  const target = typeof original === 'string' ? original : (req.url ?? '');
  let end = target.indexOf('?');
  if (end < 0) end = target.length;
  let start = 0;
  if (!target.startsWith('/')) {
    // Absolute form: scheme "://" authority, then the path.
    const scheme = target.indexOf('://');
    if (scheme < 0) return target.slice(0, end);
    const slash = target.indexOf('/', scheme + 3);
    if (slash < 0 || slash > end) return '/';
    start = slash;
  }
  return target.slice(start, end);
}
