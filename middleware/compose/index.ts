/**
 * `compose(...middlewares)`: run Connect-style middlewares in order as one function. On bare `node:http` it is the
 * request listener; in Express or Connect it mounts as one middleware (`app.use('/mcp', compose([...]))`). An
 * error passed to `next(err)` (or thrown synchronously) ends the chain with a generic -32603 answer and goes to
 * the logger. A request that falls off the end of the chain goes on to the host's `next()` when there is one
 * (Express, Connect), and gets 404 otherwise (bare `node:http`).
 * @see docs/middleware/compose.md
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendInternalError, sendJson, stderrLogger } from '../internal/respond.js';
import { knownKeys, loggerOption, optionsObject } from '../internal/options.js';
import type { Logger, Middleware } from '../types.js';

export interface ComposeOptions {
  /** Where errors passed to `next(err)` or thrown by a middleware are logged. Default: stderr. */
  logger?: Logger;
}

/** A request listener for node:http that is also a Connect-style middleware. */
export type Composed = (req: IncomingMessage, res: ServerResponse, next?: (err?: unknown) => void) => void;

export function compose(middlewares: readonly Middleware[], options?: ComposeOptions): Composed {
  if (!Array.isArray(middlewares) || middlewares.some((m) => typeof m !== 'function')) {
    throw new TypeError('compose: expected an array of middleware functions');
  }
  const o = optionsObject('compose', options);
  knownKeys('compose', o, ['logger']);
  const logger = loggerOption('compose', o.logger, stderrLogger);
  const chain = [...middlewares];
  return function composed(req: IncomingMessage, res: ServerResponse, outer?: (err?: unknown) => void) {
    let i = 0;
    const next = (err?: unknown): void => {
      if (err !== undefined && err !== null) return sendInternalError(req, res, err, 'compose', logger);
      const mw = chain[i++];
      if (!mw) {
        // node:http passes no third argument; Express and Connect pass their own next.
        if (typeof outer === 'function') outer();
        else if (!res.headersSent) sendJson(res, 404, { error: 'Not found' });
        return;
      }
      try {
        mw(req, res, next);
      } catch (e) {
        sendInternalError(req, res, e, 'compose', logger);
      }
    };
    next();
  };
}
