/**
 * The operational errors of `oidcAuth`, each with a stable `code`, and how a failure is described in the log.
 *
 * @see docs/middleware/oidc-auth.md
 */
import { McpwareError } from '../../lib/errors.js';
import { clip } from '../../lib/clip.js';

/** What went wrong, as a stable string: match on it, never on the message. */
export type OidcAuthErrorCode =
  /** The discovery document could not be fetched or is unusable. */
  | 'ERR_OIDC_DISCOVERY'
  /** The JWKS could not be fetched or holds no keys. */
  | 'ERR_OIDC_JWKS'
  /** Start-up failed for good (`ready` rejects with it; `cause` is the last attempt's error). */
  | 'ERR_OIDC_START_FAILED'
  /** `close()` was called before start-up finished. */
  | 'ERR_OIDC_CLOSED'
  /** No usable key set can be had: the identity provider's fault, not the caller's (a 503). */
  | 'ERR_OIDC_KEYS_UNAVAILABLE';

/**
 * The operational error of {@link oidcAuth}: the discovery or key set of the identity provider cannot be
 * had, or the authenticator is closed. Branch on its `code` ({@link OidcAuthErrorCode}), never on the
 * message.
 * @see docs/middleware/oidc-auth.md
 * @example
 * ```ts
 * import { OidcAuthError, oidcAuth } from 'mcpware/oidc-auth';
 *
 * const auth = oidcAuth({ issuer: 'https://idp.example.com', audience: 'https://mcp.example.com/mcp' });
 * try {
 *   await auth.ready;
 * } catch (err) {
 *   if (err instanceof OidcAuthError) console.error(err.code, err.message);
 *   else throw err;
 * }
 * ```
 */
export class OidcAuthError extends McpwareError<OidcAuthErrorCode> {}

/** A short description of a fetch or start-up failure for the log. */
export function describeFailure(err: unknown): string {
  // Duck-typed: errors thrown by fetch (undici) may come from another realm, where `instanceof Error` fails.
  if (typeof err === 'object' && err !== null && typeof (err as Error).message === 'string') {
    const e = err as Error & { code?: unknown; cause?: { code?: unknown } };
    if (e.name === 'TimeoutError' || e.code === 'ERR_JWKS_TIMEOUT') return 'timed out';
    const code = e.cause && typeof e.cause.code === 'string' ? ` (${e.cause.code})` : '';
    return `${e.message}${code}`;
  }
  return String(err);
}

/** A value seen in a token or a document, cut to a size fit for a log line. */
export function clipValue(v: unknown): unknown {
  if (typeof v === 'string') return clip(v, 128);
  if (Array.isArray(v)) return v.slice(0, 10).map(clipValue);
  if (typeof v === 'number' || typeof v === 'boolean' || v === null || v === undefined) return v;
  return `[${typeof v}]`;
}
