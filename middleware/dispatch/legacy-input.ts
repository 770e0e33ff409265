/**
 * Legacy (2025-11-25) input requests: a handler's input-required result is served to a legacy client with real
 * server-to-client JSON-RPC requests on the request's SSE answer, and the client posts its answers as JSON-RPC
 * responses. The broker owns the requests awaiting an answer.
 *
 * - Each request id is `mcpware-input-<uuid>`: unguessable, and only the caller who was asked may answer it.
 * - A request fails when the client does not answer in time, when the call is cancelled, and at `failAll()`.
 * - A request may take at most `maxRounds` rounds of input.
 *
 * @see docs/guides/input-required.md
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { ErrorCode, McpError } from '../../lib/errors.js';
import type { JsonObject } from '../../lib/jsonrpc.js';
import { type InputRequest, type InputRequiredResult } from '../../lib/mrtr.js';
import { principalKey } from '../../lib/principal.js';
import type { McpRequest } from '../../lib/request.js';
import { localsOf } from '../../core/respond.js';
import type { Call } from './handler-context.js';
import { isJsonObject } from '../../lib/json.js';
import { clip } from '../../lib/clip.js';
import { inputMethods, lackingCapabilities, lackingCapabilityError } from './session.js';

export interface InputBroker {
  /**
   * Send the input requests of round `round` (counted from 1) on the call's SSE answer and await every answer,
   * keyed as the requests were.
   */
  ask(call: Call, value: InputRequiredResult, round: number): Promise<Record<string, JsonObject>>;
  /** A posted JSON-RPC response: the answer to one of this broker's requests, or ignored. */
  deliver(req: IncomingMessage, mcp: McpRequest): void;
  /** Fail every request awaiting an answer (shutdown). */
  failAll(): void;
  /** Requests awaiting an answer. */
  readonly pending: number;
}

/** Prefix of the ids of the server's own legacy requests (answers carrying another id are just acknowledged). */
const INPUT_ID_PREFIX = 'mcpware-input-';

interface Pending {
  principal: string;
  settle(message: { result?: unknown; error?: unknown }): void;
  fail(err: Error): void;
}

export function createInputBroker(options: { timeoutMs: number; maxRounds: number }): InputBroker {
  const { timeoutMs, maxRounds } = options;
  const pending = new Map<string, Pending>();

  /** One input request: sent, then settled by the client's answer, a timeout or the call's end. */
  function askOne(call: Call, key: string, request: InputRequest): Promise<JsonObject> {
    return new Promise<JsonObject>((resolve, reject) => {
      const id = INPUT_ID_PREFIX + randomUUID();
      const cleanup = (): void => {
        pending.delete(id);
        clearTimeout(timer);
        call.ac.signal.removeEventListener('abort', onAbort);
      };
      const fail = (err: Error): void => {
        cleanup();
        reject(err);
      };
      const onAbort = (): void => fail(new Error('The client went away'));
      const timer = setTimeout(() => {
        fail(
          new McpError(
            ErrorCode.InternalError,
            'Timed out waiting for the client to answer an input request',
            {
              inputRequest: clip(key, 128),
            },
          ),
        );
      }, timeoutMs);
      timer.unref?.();
      call.ac.signal.addEventListener('abort', onAbort, { once: true });
      pending.set(id, {
        principal: call.principal,
        fail,
        settle(message) {
          cleanup();
          if (isJsonObject(message.result)) resolve(message.result);
          else reject(clientError(key, message.error));
        },
      });
      const msg: JsonObject = { jsonrpc: '2.0', id, method: request.method };
      msg.params = isJsonObject(request.params) ? request.params : {};
      // Critical: a request that cannot be sent would leave the call waiting for an answer that never comes.
      if (!call.reply.push(msg, true)) fail(new Error('The input request could not be sent'));
    });
  }

  return {
    async ask(call, value, round) {
      if (round > maxRounds) {
        throw new McpError(
          ErrorCode.InternalError,
          `The request needed more than ${maxRounds} rounds of client input`,
        );
      }
      const requests = Object.entries(value.inputRequests ?? {});
      const answers: Record<string, JsonObject> = {};
      if (requests.length === 0) return answers;
      // Never a request the client cannot answer: only what its session declared.
      const missing = lackingCapabilities(inputMethods(value.inputRequests), call.clientCapabilities);
      if (missing) throw lackingCapabilityError(missing);
      if (!call.reply.canStream()) {
        throw new McpError(
          ErrorCode.InternalError,
          'This request needs input from the client, which a 2025-11-25 client receives on a text/event-stream answer; the request does not accept one',
        );
      }
      await Promise.all(
        requests.map(async ([key, request]) => {
          answers[key] = await askOne(call, key, request);
        }),
      );
      return answers;
    },
    deliver(req, mcp) {
      const id = mcp.id;
      if (typeof id !== 'string' || !id.startsWith(INPUT_ID_PREFIX)) return;
      const p = pending.get(id);
      // Only the caller who was asked may answer (ids are unguessable, this is defence in depth).
      if (!p || p.principal !== principalKey(localsOf(req).principal)) return;
      const m = mcp.message;
      p.settle(m.kind === 'response' ? { result: m.result } : m.kind === 'error' ? { error: m.error } : {});
    },
    failAll() {
      for (const p of [...pending.values()]) p.fail(new Error('The server is shutting down'));
    },
    get pending() {
      return pending.size;
    },
  };
}

/** The error a call fails with when the client answered an input request with an error. */
function clientError(key: string, error: unknown): McpError {
  const e = isJsonObject(error) ? error : {};
  return new McpError(ErrorCode.InternalError, 'The client could not answer an input request', {
    inputRequest: clip(key, 128),
    error: {
      code: typeof e.code === 'number' ? e.code : undefined,
      message: typeof e.message === 'string' ? clip(e.message, 256) : undefined,
    },
  });
}
