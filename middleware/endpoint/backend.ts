/**
 * The endpoint's `backend`: a terminal middleware of mcpware's in place of `dispatch()` (`sdk({ handler })` for
 * an official SDK server in the same process, `proxy({ url })` for any MCP server over HTTP). The endpoint gives
 * it what `dispatch()` has of its own: a readiness answer for the load balancer, and a graceful end (new
 * requests refused with 503 and `Retry-After`, the requests in flight given until the deadline to finish, then
 * the backend's own `close()`, which aborts what is still running).
 * @see docs/middleware/endpoint.md#backend
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { refusal } from '../../lib/errors.js';
import { badOption, intOption, knownKeys, optionsObject } from '../../core/options.js';
import { sendRefusal } from '../../core/respond.js';
import type { Middleware } from '../../core/types.js';

/** A terminal middleware with its shutdown, as `sdk()` and `proxy()` return it. */
export type McpEndpointBackend = Middleware & {
  /** Aborts the exchanges in flight; resolves when they have ended. */
  close?(): Promise<void>;
};

/** Seconds in the `Retry-After` of a refusal while draining: another replica can take the request now. */
const RETRY_AFTER = '1';
const FACTORY = 'mcpEndpoint';
const CLOSE = `${FACTORY}.close`;

/** The backend option, checked: a middleware function, with a `close()` function when it has one. */
export function backendOption(value: unknown): McpEndpointBackend {
  if (typeof value !== 'function') {
    throw badOption(
      FACTORY,
      'backend',
      value,
      'a terminal middleware such as sdk({ handler }) or proxy({ url })',
    );
  }
  const close: unknown = (value as { close?: unknown }).close;
  if (close !== undefined && typeof close !== 'function') {
    throw badOption(FACTORY, 'backend.close', close, 'a function');
  }
  return value as McpEndpointBackend;
}

/** The deadline of `close(options)`; throws a TypeError naming the option. */
export function closeDeadline(options: { deadlineMs?: number } | undefined): number {
  const o = optionsObject(CLOSE, options);
  knownKeys(CLOSE, o, ['deadlineMs']);
  return intOption(CLOSE, 'deadlineMs', o.deadlineMs, 10_000, 0, 86_400_000);
}

export interface DrainedBackend {
  /** The backend behind the draining gate and the count of requests in flight. */
  readonly middleware: Middleware;
  /** `GET` readiness: 200 `{"status":"ready"}`, or 503 `{"status":"draining"}`. */
  readiness(req: IncomingMessage, res: ServerResponse): void;
  /** Drain: refuse new requests, wait for those in flight up to `deadlineMs`, then close the backend. */
  close(deadlineMs: number): Promise<void>;
  /** Requests in flight. */
  readonly inFlight: number;
}

export function drainedBackend(backend: McpEndpointBackend): DrainedBackend {
  let inFlight = 0;
  let draining = false;
  let idle: (() => void) | undefined;
  let closing: Promise<void> | undefined;
  const ended = (): void => {
    inFlight--;
    if (inFlight === 0) idle?.();
  };
  const middleware: Middleware = function mcpEndpointBackend(req, res, next) {
    if (draining && req.method === 'POST') {
      const r = refusal('unavailable', { message: 'The server is shutting down; retry the request' });
      sendRefusal(req, res, r, FACTORY, { headers: { 'Retry-After': RETRY_AFTER }, detail: 'draining' });
      return;
    }
    inFlight++;
    res.once('close', ended);
    backend(req, res, next);
  };
  const drain = async (deadlineMs: number): Promise<void> => {
    draining = true;
    if (inFlight > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, deadlineMs);
        idle = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      idle = undefined;
    }
    await backend.close?.();
  };
  return {
    middleware,
    readiness(_req, res) {
      res.statusCode = draining ? 503 : 200;
      res.setHeader('Content-Type', 'application/json');
      res.setHeader('Cache-Control', 'no-store');
      res.end(draining ? '{"status":"draining"}' : '{"status":"ready"}');
    },
    close(deadlineMs) {
      closing ??= drain(deadlineMs);
      return closing;
    },
    get inFlight() {
      return inFlight;
    },
  };
}
