/**
 * Legacy (2025-11-25) cancellation: a client that cancels a request sends `notifications/cancelled {requestId}`
 * as a POST of its own, and the receiver should stop the call and send no response for it. The legacy calls in
 * flight are registered under a key composed of the caller's principal key, the raw `Mcp-Session-Id` (none when
 * absent) and the request id; a cancellation stops the calls registered under exactly its key: their
 * `ctx.signal` aborts, the call is recorded as cancelled, and its answer ends as an SSE stream with no event (no
 * result), which releases whatever waits on the response's close (the limits' slot). A cancellation naming no
 * call here is handed to the relay, when there is one, for the replica that runs it.
 *
 * Bounded: at most `cancellation.maxInFlight` calls are registered, request ids of at most
 * {@link MAX_CANCEL_REQUEST_ID_LENGTH} characters and sessions of at most {@link MAX_CANCEL_SESSION_LENGTH}.
 * Modern requests are cancelled by closing their stream and are never registered.
 *
 * @see docs/middleware/dispatch.md#cancellation
 */
import type { IncomingMessage } from 'node:http';
import { isRequestId } from '../../lib/errors.js';
import type { JsonObject } from '../../lib/jsonrpc.js';
import { principalKey } from '../../lib/principal.js';
import type { McpRequest } from '../../lib/request.js';
import {
  type CancellationMessage,
  MAX_CANCEL_PRINCIPAL_LENGTH,
  MAX_CANCEL_REQUEST_ID_LENGTH,
  MAX_CANCEL_SESSION_LENGTH,
} from '../../core/change-feed.js';
import { errorMeta, log } from '../../core/log.js';
import { localsOf } from '../../core/respond.js';
import type { Call } from './handler-context.js';
import type { DispatchConfig } from './options.js';
import { spokenVersion } from './reply.js';

/** The method a legacy client cancels with. */
export const CANCELLED = 'notifications/cancelled';

export interface Cancellations {
  /** Legacy calls a cancellation can reach now. */
  readonly size: number;
  /** Register a legacy call still running until `done` settles (a call answered in its turn is never here). */
  track(call: Call, done: Promise<void>): void;
  /** A posted `notifications/cancelled`: stop the call it names here, or pass it on to the relay. */
  cancel(req: IncomingMessage, mcp: McpRequest): void;
  /** Stop receiving the relay's cancellations. */
  close(): void;
}

type RequestId = string | number;

/** A request id a cancellation can name: a string within its bound, or a safe integer. */
function requestIdOf(v: unknown): RequestId | undefined {
  if (!isRequestId(v)) return undefined;
  return typeof v === 'string' && v.length > MAX_CANCEL_REQUEST_ID_LENGTH ? undefined : v;
}

/** The raw `Mcp-Session-Id` (null when absent), or undefined when it is longer than the bound. */
function sessionOf(req: IncomingMessage): string | null | undefined {
  const h = req.headers['mcp-session-id'];
  const raw = Array.isArray(h) ? h.join(', ') : h;
  if (raw === undefined || raw === '') return null;
  return raw.length <= MAX_CANCEL_SESSION_LENGTH ? raw : undefined;
}

/** The registry key: an array's JSON, so no part can pass for another and `1` and `"1"` stay apart. */
function keyOf(principal: string, session: string | null, id: RequestId): string {
  return JSON.stringify([principal, session, id]);
}

/** Stop a call: its signal aborts, it is recorded cancelled, and its answer ends with no result. */
function stop(call: Call): void {
  const { reply } = call;
  // The result is already on its way: too late to cancel.
  if (reply.answered) return;
  call.ac.abort(new Error('The client cancelled the request'));
  reply.locals.response = { resultType: 'cancelled' };
  const { res } = reply;
  if (res.writableEnded || res.destroyed) return;
  if (!res.headersSent) {
    if (!reply.canStream()) return void res.destroy();
    const headers: string[] = ['Content-Type', 'text/event-stream', 'Cache-Control', 'no-cache'];
    const version = spokenVersion(reply.config, reply.mcp, reply.era);
    if (version !== undefined) headers.push('MCP-Protocol-Version', version);
    res.writeHead(200, headers);
  }
  // An SSE stream ending with no event: the client reads no response, and does not reconnect for one.
  res.end();
}

export function createCancellations(config: DispatchConfig): Cancellations {
  const { maxCancellable: max, cancelRelay: relay, logger } = config;
  const calls = new Map<string, Set<Call>>();
  let size = 0;
  let toldFull = false;

  const remove = (key: string, call: Call): void => {
    const set = calls.get(key);
    if (!set?.delete(call)) return;
    size--;
    if (set.size === 0) calls.delete(key);
  };

  /** Stop every call under `key`; false when there is none here. */
  const stopAll = (key: string): boolean => {
    const set = calls.get(key);
    if (set === undefined) return false;
    calls.delete(key);
    size -= set.size;
    for (const call of set) stop(call);
    return true;
  };

  const unsubscribe = relay?.onCancellation((m: CancellationMessage) => {
    try {
      const id = requestIdOf(m.requestId);
      if (id !== undefined) stopAll(keyOf(m.principal, m.session, id));
    } catch (err) {
      log(logger, 'error', 'dispatch: a relayed cancellation failed', { error: errorMeta(err) });
    }
  });

  return {
    get size() {
      return size;
    },
    track(call, done) {
      if (call.era !== 'legacy' || call.method === 'initialize' || max === 0) return;
      const id = requestIdOf(call.reply.mcp.id);
      const session = sessionOf(call.reply.req);
      if (id === undefined || session === undefined) return;
      if (size >= max) {
        if (!toldFull) {
          toldFull = true;
          log(
            logger,
            'warn',
            'dispatch: cancellation.maxInFlight reached; calls beyond it cannot be cancelled',
            {
              max,
            },
          );
        }
        return;
      }
      const key = keyOf(call.principal, session, id);
      let set = calls.get(key);
      if (set === undefined) calls.set(key, (set = new Set()));
      set.add(call);
      size++;
      const settled = (): void => remove(key, call);
      done.then(settled, settled);
    },
    cancel(req, mcp) {
      const params: JsonObject = mcp.params ?? {};
      const id = requestIdOf(Object.hasOwn(params, 'requestId') ? params.requestId : undefined);
      const session = sessionOf(req);
      if (id === undefined || session === undefined || max === 0) return;
      const principal = principalKey(localsOf(req).principal);
      if (stopAll(keyOf(principal, session, id))) return;
      // Not running here: perhaps on another replica.
      if (relay === undefined || principal.length > MAX_CANCEL_PRINCIPAL_LENGTH) return;
      try {
        relay.publishCancellation({ principal, session, requestId: id });
      } catch (err) {
        log(logger, 'error', 'dispatch: the cancellation relay threw', { error: errorMeta(err) });
      }
    },
    close() {
      unsubscribe?.();
    },
  };
}
