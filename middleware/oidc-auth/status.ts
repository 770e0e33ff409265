/**
 * What `oidcAuth().status()` reports: the start-up phase and the state of the key set.
 *
 * @see docs/middleware/oidc-auth.md
 */

/** `starting` → `ready`, or `retrying` between attempts, `failed` for good, `closed` by `close()`. */
export type OidcPhase = 'starting' | 'retrying' | 'ready' | 'failed' | 'closed';

export interface OidcStatus {
  phase: OidcPhase;
  /** The JWKS URL found by discovery. */
  jwksUri?: string;
  /** Last successful JWKS fetch (epoch ms). */
  jwksFetchedAt?: number;
  /** True while the identity provider cannot be reached and stale keys are in use. */
  outage: boolean;
}
