/**
 * The forwarding engine shared by `sdk()` (an official SDK server in the same process) and `proxy()` (any MCP
 * server over HTTP): the stack's promises kept for answers mcpware does not write itself.
 *
 * An adapter supplies one function, {@link Send}: it turns a {@link ForwardRequest} into a web `Response` (the
 * SDK's `fetch`, or `fetch()` to the upstream). The engine does the rest: it reads the client's request through
 * the shared parse step, applies the tool views to `tools/call` (the actual name goes upstream) and to
 * `tools/list` (filtered and renamed; paged with mcpware's own cursors when `pageSize` is set), relays the answer
 * (a JSON body, or an SSE stream event by event with backpressure) through `req.locals.outbound` (redaction),
 * records the real outcome on `req.locals.response` (audit, metrics), and turns an upstream failure into a
 * JSON-RPC error with a stable reason.
 *
 * @see docs/architecture.md
 */
import type { IncomingMessage } from 'node:http';
import type { Principal } from './types.js';

/** What the engine asks an adapter to send. */
export interface ForwardRequest {
  /** The HTTP method: POST for messages; GET (a legacy server stream) and DELETE (a legacy session's end). */
  readonly method: 'POST' | 'GET' | 'DELETE';
  /**
   * The headers for the server: the client's MCP headers (allow-listed: `Accept`, `Content-Type`,
   * `MCP-Protocol-Version`, `Mcp-Session-Id`, `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`, `Last-Event-ID`), with
   * `Mcp-Name` rewritten when a tool view renamed the tool. Never `Authorization`, `Cookie` or `Host`: upstream
   * credentials are the adapter's own.
   */
  readonly headers: Headers;
  /** The JSON-RPC message as bytes (POST): the body as received, or re-encoded when the engine rewrote it. */
  readonly body?: Uint8Array;
  /** The same message, parsed (for in-process servers that take a parsed body). */
  readonly parsedBody?: unknown;
  /** Aborted when the client goes away, when the request's timeout passes, or when the engine closes. */
  readonly signal: AbortSignal;
  /** The principal the stack authenticated, when one did. */
  readonly principal?: Principal;
  /** The client's request (its URL and headers as received), for adapters that build a web `Request` from it. */
  readonly req: IncomingMessage;
}

/** An adapter: send one request to the server behind mcpware and resolve with its answer. */
export type Send = (request: ForwardRequest) => Promise<Response>;

/** Why an upstream exchange failed. Stable: logs, metrics and tests key on it. */
export type UpstreamFailureReason =
  /** The connection was refused, reset or could not be made. */
  | 'upstream_unreachable'
  /** No complete answer within the request's timeout. */
  | 'upstream_timeout'
  /** A 5xx, or a refusal of mcpware's own upstream credentials (401, 403). */
  | 'upstream_error'
  /** An answer that is not MCP: another media type, invalid JSON, not a JSON-RPC message, or too large. */
  | 'upstream_invalid';

/** Thrown (or rejected) by a {@link Send} to report an upstream failure with its stable reason. */
export class UpstreamError extends Error {
  readonly reason: UpstreamFailureReason;
  constructor(reason: UpstreamFailureReason, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'UpstreamError';
    this.reason = reason;
  }
}
