/**
 * @module mcpware/oidc-auth: `oidcAuth({ issuer, audience })`, OIDC / OAuth 2.1 access tokens (JWT) verified
 * with jose against the issuer's published keys; start-up is awaited through `ready`.
 *
 * @see docs/middleware/oidc-auth.md
 *
 * @example
 * const oidc = oidcAuth({ issuer: 'https://idp.example.com/realms/acme', audience: 'https://mcp.example.com/mcp' });
 * await oidc.ready;
 * app.use('/mcp', oidc);
 */
import { type AuthMiddleware, chainMiddleware } from '../auth/chain.js';
import { type Discovery, createDiscovery } from './discovery.js';
import { type JwksCache, type KeyResolver, createKeyResolver } from './keys.js';
import { FACTORY, OIDC_METHOD, type OidcAuthOptions, resolveOidcOptions } from './options.js';
import type { OidcStatus } from './status.js';
import { createVerifier } from './verify.js';

export { ASYMMETRIC_ALGORITHMS, OIDC_METHOD } from './options.js';
export type { OidcAuthOptions, OidcRetryOptions } from './options.js';
export type { OidcPhase, OidcStatus } from './status.js';
export { OidcAuthError } from './errors.js';
export type { OidcAuthErrorCode } from './errors.js';
// Re-exported so users can write claim paths with the same type.
export type { ClaimPath } from '../../lib/oidcclaims.js';
// So `mcpware/oidc-auth` alone is enough to chain authenticators.
export { authenticate } from '../auth/index.js';

export interface OidcAuthMiddleware extends AuthMiddleware {
  /** Resolves when discovery and the first JWKS fetch succeeded; rejects when start-up failed. */
  readonly ready: Promise<void>;
  status(): OidcStatus;
  /** Stop start-up retries (and make `ready` reject if it has not settled). */
  close(): void;
}

function statusOf(discovery: Discovery, keys: KeyResolver, cache: JwksCache): OidcStatus {
  const s: OidcStatus = { phase: discovery.phase, outage: keys.outage };
  if (discovery.jwksUri !== undefined) s.jwksUri = discovery.jwksUri;
  if (cache.uat !== undefined) s.jwksFetchedAt = cache.uat;
  return s;
}

/**
 * OIDC bearer-token authentication. Returns a middleware that is also an authenticator for `authenticate`.
 * Await `ready` before accepting traffic.
 * @param options - {@link OidcAuthOptions}
 * @see docs/middleware/oidc-auth.md
 * @example
 * ```ts
 * import { oidcAuth } from 'mcpware/oidc-auth';
 *
 * const auth = oidcAuth({ issuer: 'https://idp.example.com/realms/acme', audience: 'https://mcp.example.com/mcp' });
 * await auth.ready;
 * app.use('/mcp', auth);
 * ```
 */
export function oidcAuth(options: OidcAuthOptions): OidcAuthMiddleware {
  const config = resolveOidcOptions(options);
  // jose writes each fetched key set here; the key resolver falls back on it during an outage.
  const cache: JwksCache = {};
  const discovery = createDiscovery(config, cache);
  const keys = createKeyResolver(config, cache, discovery);
  const self = {
    method: OIDC_METHOD,
    by: FACTORY,
    ready: discovery.ready,
    challenge: config.challenge,
    check: createVerifier(config.verify, discovery, keys.getKey),
    status: (): OidcStatus => statusOf(discovery, keys, cache),
    close: (): void => discovery.close(),
  };
  return Object.assign(chainMiddleware([self], config.challenge, config.logger, FACTORY), self);
}
