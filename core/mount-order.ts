/**
 * Mount-order checks the middlewares share. `dispatch()` answers every POST and passes on only what it does not
 * answer (OPTIONS), which it marks. A middleware that meets a marked request, or one whose answer is
 * already sent, is mounted after the answer: it never sees the requests `dispatch()` answers, so it would do
 * nothing, silently. It logs that once per instance, naming itself, and a request already answered goes on.
 *
 * @see docs/middleware/dispatch.md#mount-order
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { log } from './log.js';
import { localsOf, stderrLogger } from './respond.js';
import type { Logger, RequestLocals } from './types.js';

const PASSED_ON = Symbol.for('mcpware.passedOnByDispatch');
type Marked = RequestLocals & { [PASSED_ON]?: true };

/** Mark a request `dispatch()` passes on with `next()` (OPTIONS): whoever sees it next is mounted after it. */
export function markPassedOn(req: IncomingMessage): void {
  (localsOf(req) as Marked)[PASSED_ON] = true;
}

/** True when `dispatch()` passed the request on: whoever sees it is mounted after `dispatch()`. */
export function passedOnByDispatch(req: IncomingMessage): boolean {
  return (req.locals as Marked | undefined)?.[PASSED_ON] === true;
}

/**
 * The check for one middleware instance named `by`: true when the request's answer is already sent (the
 * middleware then calls `next()` and does nothing more). The first request that shows the middleware mounted
 * after the answer (sent, or passed on by `dispatch()`) logs one error naming it.
 */
export function mountOrderCheck(
  by: string,
  logger: Logger = stderrLogger,
): (req: IncomingMessage, res: ServerResponse) => boolean {
  let told = false;
  return (req, res) => {
    const answered = res.headersSent || res.writableEnded;
    if (!answered && (req.locals as Marked | undefined)?.[PASSED_ON] !== true) return false;
    if (!told) {
      told = true;
      log(
        logger,
        'error',
        `${by}: mounted after dispatch() (or after the answer was sent), so it never sees the requests ` +
          `dispatch() answers: mount ${by} before dispatch()`,
        { by, answered },
      );
    }
    return answered;
  };
}
