/**
 * oidcAuth: key rotation at the issuer (unknown kid, cooldown, retired keys).
 */
import request from 'supertest';
import { oidcAuth } from '../../../middleware/oidc-auth/index';
import { TestIssuer } from '../../../testing/index';
import { PING, bearer, memoryLogger, serve } from '../../support/auth-harness';

const AUD = 'https://mcp.test/mcp';

describe('oidcAuth: key rotation', () => {
  let idp: TestIssuer;
  beforeEach(async () => {
    idp = await TestIssuer.start();
  });
  afterEach(() => idp.stop());

  test('an unknown kid is refused, then accepted once the issuer publishes it (one refetch)', async () => {
    const mw = oidcAuth({ issuer: idp.url, audience: AUD, jwksCooldownMs: 0, logger: memoryLogger() });
    await mw.ready;
    const h = await serve('node:http', mw);
    try {
      // A kid the issuer has not published (yet): refetch, still unknown → 401.
      const early = await request(h.url)
        .post('/mcp')
        .set(...bearer(await idp.sign({ sub: 'u', aud: AUD }, { alg: 'ES256', kid: 'es256-2' })))
        .send(PING);
      expect(early.status).toBe(401);
      expect(idp.stats.jwks).toBe(2);
      const { ES256: kid } = await idp.rotate();
      expect(kid).toBe('es256-2');
      const token = await idp.sign({ sub: 'u', aud: AUD }, { alg: 'ES256' });
      const r = await request(h.url)
        .post('/mcp')
        .set(...bearer(token))
        .send(PING);
      expect(r.status).toBe(200);
      expect(idp.stats.jwks).toBe(3);
      expect(
        (
          await request(h.url)
            .post('/mcp')
            .set(...bearer(token))
            .send(PING)
        ).status,
      ).toBe(200);
      expect(idp.stats.jwks).toBe(3);
    } finally {
      await h.close();
    }
  });

  test("within jose's cooldown an unknown kid triggers no fetch (a flood of random kids cannot hammer the IdP)", async () => {
    const mw = oidcAuth({ issuer: idp.url, audience: AUD, logger: memoryLogger() });
    await mw.ready;
    await idp.rotate();
    for (let i = 0; i < 3; i++) {
      const d = await mw.check(await idp.sign({ sub: 'u', aud: AUD }), {} as never);
      expect(d).toMatchObject({ kind: 'refuse', outcome: 'invalid', why: 'ERR_JWKS_NO_MATCHING_KEY' });
    }
    expect(idp.stats.jwks).toBe(1);
  });

  test('a retired key stops verifying after the refetch', async () => {
    const mw = oidcAuth({ issuer: idp.url, audience: AUD, jwksCooldownMs: 0, logger: memoryLogger() });
    await mw.ready;
    const oldToken = await idp.sign({ sub: 'u', aud: AUD });
    expect((await mw.check(oldToken, {} as never)).kind).toBe('ok');
    await idp.rotate({ retire: true });
    // The new kid makes the verifier refetch; the set it gets no longer holds the old key.
    expect((await mw.check(await idp.sign({ sub: 'u', aud: AUD }), {} as never)).kind).toBe('ok');
    expect(await mw.check(oldToken, {} as never)).toMatchObject({ kind: 'refuse', outcome: 'invalid' });
  });
});
