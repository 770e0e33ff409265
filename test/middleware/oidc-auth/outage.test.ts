/**
 * oidcAuth: the issuer going down after start-up (stale-if-error keys, 503 when no key can decide).
 */
import request from 'supertest';
import { type OidcAuthOptions, oidcAuth } from '../../../middleware/oidc-auth/index';
import { TestIssuer } from '../../../testing/index';
import { PING, bearer, memoryLogger, serve } from '../../support/auth-harness';

const AUD = 'https://mcp.test/mcp';

describe('oidcAuth: issuer down later', () => {
  let idp: TestIssuer;
  beforeEach(async () => {
    idp = await TestIssuer.start();
  });
  afterEach(() => idp.stop());

  async function started(extra: Partial<OidcAuthOptions> = {}) {
    const logger = memoryLogger();
    const mw = oidcAuth({ issuer: idp.url, audience: AUD, jwksCooldownMs: 0, logger, ...extra });
    await mw.ready;
    return { mw, logger };
  }

  test('known keys keep working while the issuer is down', async () => {
    const { mw } = await started();
    await idp.down('refuse');
    expect((await mw.check(await idp.sign({ sub: 'u', aud: AUD }), {} as never)).kind).toBe('ok');
  });

  test('an unknown kid while the issuer is down → 503 over HTTP, not 401; recovers when it is back', async () => {
    const { mw, logger } = await started();
    const h = await serve('node:http', mw);
    try {
      await idp.rotate();
      const token = await idp.sign({ sub: 'u', aud: AUD });
      await idp.down('refuse');
      const r = await request(h.url)
        .post('/mcp')
        .set(...bearer(token))
        .send(PING);
      expect(r.status).toBe(503);
      expect(r.body.error.code).toBe(503);
      expect(mw.status().outage).toBe(true);
      expect(logger.entries.some((e) => e.level === 'error' && /JWKS refetch failed/.test(e.message))).toBe(
        true,
      );
      await idp.up();
      expect(
        (
          await request(h.url)
            .post('/mcp')
            .set(...bearer(token))
            .send(PING)
        ).status,
      ).toBe(200);
      expect(mw.status().outage).toBe(false);
    } finally {
      await h.close();
    }
  });

  test('keys past their max age: stale keys serve during the outage, within jwksStaleIfErrorMs', async () => {
    // cacheMaxAge 0: every request wants a refetch, so every request meets the outage.
    const { mw } = await started({ jwksCacheMaxAgeMs: 0 });
    await idp.down('error');
    const token = await idp.sign({ sub: 'u', aud: AUD });
    expect((await mw.check(token, {} as never)).kind).toBe('ok');
    expect(mw.status().outage).toBe(true);
  });

  test('keys past their max age and no stale window: 503', async () => {
    const { mw } = await started({ jwksCacheMaxAgeMs: 0, jwksStaleIfErrorMs: 0 });
    await idp.down('refuse');
    const d = await mw.check(await idp.sign({ sub: 'u', aud: AUD }), {} as never);
    expect(d).toMatchObject({ kind: 'refuse', outcome: 'unavailable', why: 'jwks_unavailable' });
  });

  test('a bad token during the outage is still a 401', async () => {
    const { mw } = await started({ jwksCacheMaxAgeMs: 0 });
    await idp.down('refuse');
    expect(
      await mw.check(await idp.sign({ sub: 'u', aud: AUD }, { expiresIn: -60 }), {} as never),
    ).toMatchObject({ outcome: 'expired' });
    expect(await mw.check(idp.unsigned({ sub: 'u', aud: AUD }), {} as never)).toMatchObject({
      outcome: 'invalid',
    });
  });
});
