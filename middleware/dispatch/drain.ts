/**
 * The graceful end of a replica: while it drains, its readiness answers 503 (so a load balancer stops sending
 * to it), new requests get 503 with `Retry-After` (a client retries elsewhere), and the calls already in flight
 * finish. At the deadline the calls still running are cancelled and answered 503 too.
 *
 * Only calls still running once their handler has returned are tracked: a call answered in the turn it arrived
 * in is never in flight.
 *
 * @see docs/middleware/dispatch.md#shutdown
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ErrorCode, refusal } from '../../lib/errors.js';
import type { McpRequest } from '../../lib/request.js';
import { log } from '../../core/log.js';
import { intOption, knownKeys, optionsObject } from '../../core/options.js';
import { sendRefusal } from '../../core/respond.js';
import type { Logger } from '../../core/types.js';
import type { Call } from './handler-context.js';
import { DISPATCH } from './options.js';
import { sendRpcError } from './rpc-errors.js';
import { clip } from '../../lib/clip.js';

/** What `close()` takes. */
export interface CloseOptions {
  /** How long the calls in flight may run on, in ms. Default 10000. */
  deadlineMs?: number;
}

/** Seconds in the `Retry-After` of a refusal while draining: another replica can take the request now. */
const RETRY_AFTER = '1';
const CLOSE = `${DISPATCH}.close`;

/** The deadline of `close(options)`; throws a TypeError naming the option. */
export function closeDeadline(options: CloseOptions | undefined): number {
  const o = optionsObject(CLOSE, options);
  knownKeys(CLOSE, o, ['deadlineMs']);
  return intOption(CLOSE, 'deadlineMs', o.deadlineMs, 10_000, 0, 86_400_000);
}

export interface Drain {
  readonly draining: boolean;
  /** Calls in flight. */
  readonly inFlight: number;
  /** Track a call until `done` settles. */
  track(call: Call, done: Promise<void>): void;
  /** Start draining; resolves when no call is in flight, or at the deadline once the rest are cut off. */
  drain(deadlineMs: number): Promise<void>;
  /** 503 with `Retry-After` for a request that arrives while draining. */
  refuse(req: IncomingMessage, res: ServerResponse, mcp: McpRequest): void;
  /** `GET` readiness: 200 `{"status":"ready"}`, or 503 `{"status":"draining"}`. */
  readiness(req: IncomingMessage, res: ServerResponse): void;
}

export function createDrain(logger: Logger): Drain {
  const calls = new Set<Call>();
  let draining = false;
  let idle: (() => void) | undefined;
  return {
    get draining() {
      return draining;
    },
    get inFlight() {
      return calls.size;
    },
    track(call, done) {
      calls.add(call);
      const settled = (): void => {
        calls.delete(call);
        if (calls.size === 0) idle?.();
      };
      done.then(settled, settled);
    },
    async drain(deadlineMs) {
      draining = true;
      if (calls.size === 0) return;
      const timedOut = await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(true), deadlineMs);
        idle = () => {
          clearTimeout(timer);
          resolve(false);
        };
      });
      idle = undefined;
      if (timedOut) await Promise.all([...calls].map((c) => cutOff(c, logger)));
    },
    refuse(req, res, mcp) {
      const r = refusal('unavailable', { message: 'The server is shutting down; retry the request' });
      sendRefusal(req, res, r, DISPATCH, {
        id: mcp.id,
        headers: { 'Retry-After': RETRY_AFTER },
        detail: 'draining',
      });
    },
    readiness(_req, res) {
      res.statusCode = draining ? 503 : 200;
      res.setHeader('Content-Type', 'application/json');
      res.setHeader('Cache-Control', 'no-store');
      res.end(draining ? '{"status":"draining"}' : '{"status":"ready"}');
    },
  };
}

/** A call still running at the deadline: answered 503 (unless it already was), then cancelled. */
function cutOff(call: Call, logger: Logger): void | Promise<void> {
  const { reply } = call;
  if (reply.answered) return;
  log(logger, 'warn', 'dispatch: a call still running at the shutdown deadline was cancelled', {
    method: clip(call.method, 128),
  });
  if (!reply.res.headersSent) reply.res.setHeader('Retry-After', RETRY_AFTER);
  const sent = sendRpcError(
    reply,
    {
      code: ErrorCode.Unavailable,
      message: 'The server shut down before the call finished; retry it',
      status: 503,
    },
    logger,
  );
  call.ac.abort(new Error('The server is shutting down'));
  return sent;
}
