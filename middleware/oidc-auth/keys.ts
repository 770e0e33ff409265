/**
 * The key resolver `oidcAuth` hands to `jwtVerify`: jose's remote JWKS while the identity provider answers, and
 * the last good key set, stale-if-error, while it does not.
 *
 * - A refetch that fails marks an outage (logged once) and is not tried again for `cooldownMs`: meanwhile
 *   tokens are checked against the last good keys without waiting on a dead identity provider.
 * - The last good keys stay usable until `cacheMaxAgeMs + staleIfErrorMs` after they were fetched. Past that,
 *   or for a `kid` they lack, {@link KeysUnavailable} is thrown: nobody can tell whether the token is good,
 *   so the answer is a 503, not a 401.
 * - Errors about the token itself (no key for its `alg`/`kid` while the provider answers, several keys, an
 *   unsupported key) pass through unchanged.
 *
 * @see docs/middleware/oidc-auth.md
 */
import {
  type JSONWebKeySet,
  type JWTVerifyGetKey,
  type createRemoteJWKSet,
  createLocalJWKSet,
  errors,
} from 'jose';
import { log } from '../../core/log.js';
import { OidcAuthError, describeFailure } from './errors.js';
import { FACTORY, type OidcConfig } from './options.js';

export type RemoteJWKSet = ReturnType<typeof createRemoteJWKSet>;

/** jose's JWKS cache: it writes every successful fetch here (`uat`, `jwks`), which is how the last good set is found. */
export interface JwksCache {
  uat?: number;
  jwks?: JSONWebKeySet;
}

/** Thrown by the key resolver when no usable key set can be had: the identity provider's fault, not the caller's. */
export class KeysUnavailable extends OidcAuthError {
  constructor(readonly reason: string) {
    super('ERR_OIDC_KEYS_UNAVAILABLE', `signing keys unavailable: ${reason}`);
    this.name = 'KeysUnavailable';
  }
}

/** Where the remote key set comes from: set once discovery has succeeded. */
export interface KeySource {
  readonly remote: RemoteJWKSet | undefined;
  readonly jwksUri: string | undefined;
}

export interface KeyResolver {
  readonly getKey: JWTVerifyGetKey;
  /** True while the identity provider cannot be reached and the last good keys are in use. */
  readonly outage: boolean;
}

/** Errors from the key resolver that are about the token (its `alg`/`kid`), not about the identity provider. */
function isTokenKeyError(err: unknown): boolean {
  return (
    err instanceof errors.JWKSNoMatchingKey ||
    err instanceof errors.JWKSMultipleMatchingKeys ||
    err instanceof errors.JOSENotSupported
  );
}

export function createKeyResolver(
  config: Pick<OidcConfig, 'issuer' | 'cooldownMs' | 'cacheMaxAgeMs' | 'staleIfErrorMs' | 'logger'>,
  cache: JwksCache,
  source: KeySource,
): KeyResolver {
  const { issuer, cooldownMs, cacheMaxAgeMs, staleIfErrorMs, logger } = config;
  let outage = false;
  let lastFailure = -Infinity;
  let stale: { uat: number; get: ReturnType<typeof createLocalJWKSet> } | undefined;

  /** The last good keys, when they are young enough to be used during an outage. */
  const lastGood = (failure: unknown): ReturnType<typeof createLocalJWKSet> => {
    const uat = cache.uat;
    if (cache.jwks === undefined || uat === undefined || Date.now() >= uat + cacheMaxAgeMs + staleIfErrorMs) {
      throw new KeysUnavailable(
        failure === undefined ? 'identity provider unreachable, no fresh keys' : describeFailure(failure),
      );
    }
    if (!stale || stale.uat !== uat) stale = { uat, get: createLocalJWKSet(cache.jwks) };
    return stale.get;
  };

  const getKey: JWTVerifyGetKey = async (header, token) => {
    let failure: unknown;
    // Right after a failed refetch, go straight to the last good keys instead of waiting on a dead IdP again.
    if (Date.now() >= lastFailure + cooldownMs) {
      try {
        const key = await source.remote!(header, token);
        if (outage) {
          outage = false;
          log(logger, 'warn', `${FACTORY}: JWKS reachable again`, { issuer, jwksUri: source.jwksUri });
        }
        return key;
      } catch (err) {
        if (isTokenKeyError(err)) throw err;
        lastFailure = Date.now();
        failure = err;
        if (!outage) {
          outage = true;
          log(logger, 'error', `${FACTORY}: JWKS refetch failed: ${describeFailure(err)}`, {
            issuer,
            jwksUri: source.jwksUri,
          });
        }
      }
    }
    try {
      return await lastGood(failure)(header, token);
    } catch (err) {
      // An unknown kid while the IdP is down may well be a new key: nobody can tell, so it is an outage.
      if (err instanceof errors.JWKSNoMatchingKey)
        throw new KeysUnavailable('unknown kid while the identity provider is unreachable');
      throw err;
    }
  };

  return {
    getKey,
    get outage() {
      return outage;
    },
  };
}
