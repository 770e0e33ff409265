/**
 * An upstream failure of the forwarding engine (core/forward.ts) with its stable reason. A module of its own, so
 * that the engine's parts (request side, lists, relay) and the adapters share it without importing the engine's
 * factory.
 */

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

/** Thrown (or rejected) by an adapter's `Send` (core/forward.ts) to report an upstream failure with its stable reason. */
export class UpstreamError extends Error {
  readonly reason: UpstreamFailureReason;
  constructor(reason: UpstreamFailureReason, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'UpstreamError';
    this.reason = reason;
  }
}
