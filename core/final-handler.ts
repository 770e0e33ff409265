/**
 * Whether the answers are written by a final handler of mcpware's. `dispatch()` and the forwarding handlers
 * record each answer's outcome on `req.locals.response` (or a refusal on `req.locals.refusal`), and apply the
 * outbound transforms of `req.locals.outbound`. Another final handler (an official SDK transport handed the
 * body) does neither: `redact()` in front of it masks nothing, and `audit()` and `metrics()` record `ok` for
 * whatever it answered. Each of them checks the first answered requests of an instance, and when one shows such
 * a handler it logs one warning naming the cause and the fix, instead of failing silently.
 *
 * The check concludes at the first 2xx answer to a POST that carried a JSON-RPC request (or a body nothing
 * parsed): with an outcome recorded, the final handler is mcpware's and nothing is said; without, the warning.
 * Either way it then stops: `pending` is false and nothing more is done per request.
 *
 * @see docs/middleware/redact.md#in-front-of-another-final-handler
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { log } from './log.js';
import { stderrLogger } from './respond.js';
import type { Logger } from './types.js';

export interface FinalHandlerCheck {
  /** True until an answer has shown who writes them: call {@link FinalHandlerCheck.finished} then. */
  readonly pending: boolean;
  /** A response finished (its last bytes were handed to the client). */
  finished(req: IncomingMessage, res: ServerResponse): void;
}

export interface FinalHandlerCheckOptions {
  /** The middleware's name, e.g. `redact`. */
  by: string;
  /** What another final handler fails to do, e.g. `does not apply req.locals.outbound`. */
  lacks: string;
  /** What follows for the middleware's promise, e.g. `nothing was masked`. */
  consequence: string;
  /** Where the docs say more, e.g. `docs/middleware/redact.md#in-front-of-another-final-handler`. */
  docs: string;
  logger?: Logger;
}

/** The check of one middleware instance. */
export function finalHandlerCheck(options: FinalHandlerCheckOptions): FinalHandlerCheck {
  const { by, lacks, consequence, docs } = options;
  const logger = options.logger ?? stderrLogger;
  let pending = true;
  return {
    get pending() {
      return pending;
    },
    finished(req, res) {
      if (!pending || req.method !== 'POST' || res.statusCode < 200 || res.statusCode > 299) return;
      const locals = req.locals;
      const mcp = locals?.mcp;
      // A notification or a posted answer shows nothing: it has no result to mask or outcome to record.
      if (mcp !== undefined && mcp.kind !== 'request') return;
      pending = false;
      if (locals?.response !== undefined || locals?.refusal !== undefined) return;
      const what = mcp?.method !== undefined ? mcp.method : 'a POST';
      log(
        logger,
        'warn',
        `${by}(): the answer to ${what} was written by a handler that ${lacks}, so ${consequence}: serve it ` +
          `through dispatch(), sdk() or proxy() (${docs})`,
        { by, reason: 'foreign_final_handler' },
      );
    },
  };
}
