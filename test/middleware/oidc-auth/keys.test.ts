/**
 * The key resolver alone: the last good keys during an outage, and a coded error when none can decide.
 */
import { type JWK, exportJWK, generateKeyPair } from 'jose';
import { type JwksCache, KeysUnavailable, createKeyResolver } from '../../../middleware/oidc-auth/keys';
import { memoryLogger } from '../../support/auth-harness';

const CONFIG = {
  issuer: 'https://idp.test',
  cooldownMs: 30_000,
  cacheMaxAgeMs: 600_000,
  staleIfErrorMs: 3_600_000,
};

async function publicJwk(kid: string): Promise<JWK> {
  const { publicKey } = await generateKeyPair('RS256');
  return { ...(await exportJWK(publicKey)), kid, alg: 'RS256' };
}

/** A remote key set whose identity provider cannot be reached. */
const unreachable = Object.assign(
  async () => {
    throw new TypeError('fetch failed');
  },
  {
    reload: async () => undefined,
    jwks: () => undefined,
    coolingDown: false,
    fresh: false,
    reloading: false,
  },
) as never;

describe('createKeyResolver', () => {
  test('no key set yet and the provider unreachable: KeysUnavailable with its code, outage logged once', async () => {
    const logger = memoryLogger();
    const keys = createKeyResolver(
      { ...CONFIG, logger },
      {},
      { remote: unreachable, jwksUri: 'https://idp.test/jwks' },
    );
    const header = { alg: 'RS256', kid: 'k1' };
    const err = await Promise.resolve(keys.getKey(header, {} as never)).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(KeysUnavailable);
    expect(err).toMatchObject({ code: 'ERR_OIDC_KEYS_UNAVAILABLE', reason: 'fetch failed' });
    expect(keys.outage).toBe(true);
    // Within the cooldown the provider is not asked again, and the outage is not logged again.
    await expect(keys.getKey(header, {} as never)).rejects.toMatchObject({
      code: 'ERR_OIDC_KEYS_UNAVAILABLE',
    });
    expect(logger.entries.filter((e) => /JWKS refetch failed/.test(e.message))).toHaveLength(1);
  });

  test('the last good keys verify during an outage; an unknown kid is KeysUnavailable, not a bad token', async () => {
    const jwk = await publicJwk('k1');
    const cache: JwksCache = { uat: Date.now(), jwks: { keys: [jwk] } };
    const keys = createKeyResolver({ ...CONFIG, logger: memoryLogger() }, cache, {
      remote: unreachable,
      jwksUri: 'https://idp.test/jwks',
    });
    await expect(keys.getKey({ alg: 'RS256', kid: 'k1' }, {} as never)).resolves.toBeDefined();
    await expect(keys.getKey({ alg: 'RS256', kid: 'k2' }, {} as never)).rejects.toMatchObject({
      code: 'ERR_OIDC_KEYS_UNAVAILABLE',
      reason: 'unknown kid while the identity provider is unreachable',
    });
  });
});
