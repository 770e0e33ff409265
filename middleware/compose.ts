/**
 * `compose(...middlewares)`: run Connect-style middlewares in order on bare `node:http`, without Express or
 * Connect. An error passed to `next(err)` (or thrown synchronously) ends the chain with a generic -32603 answer
 * and goes to the logger; a request that falls off the end of the chain gets 404.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { sendInternalError, sendJson, stderrLogger } from './respond.js';
import type { Logger, Middleware } from './types.js';

export interface ComposeOptions {
  logger?: Logger;
}

export function compose(middlewares: readonly Middleware[], options: ComposeOptions = {}): RequestListener {
  if (!Array.isArray(middlewares) || middlewares.some((m) => typeof m !== 'function')) {
    throw new TypeError('compose: expected an array of middleware functions');
  }
  const logger = options.logger ?? stderrLogger;
  const chain = [...middlewares];
  return function composed(req: IncomingMessage, res: ServerResponse) {
    let i = 0;
    const next = (err?: unknown): void => {
      if (err !== undefined && err !== null) return sendInternalError(req, res, err, 'compose', logger);
      const mw = chain[i++];
      if (!mw) {
        if (!res.headersSent) sendJson(res, 404, { error: 'Not found' });
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
