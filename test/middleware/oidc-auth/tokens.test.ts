/**
 * oidcAuth over HTTP: what a token must be to pass (signature, issuer, expiry, audience, claims), on node:http and Express.
 */
import request from 'supertest';
import { oidcAuth } from '../../../middleware/oidc-auth/index';
import { TestIssuer } from '../../../testing/index';
import { FLAVOURS, type Harness, PING, bearer, memoryLogger, serve } from '../../support/auth-harness';

const AUD = 'https://mcp.test/mcp';
const PRM = 'https://mcp.test/.well-known/oauth-protected-resource/mcp';

describe.each(FLAVOURS)('oidcAuth on %s', (flavour) => {
  let idp: TestIssuer;
  let h: Harness;
  const logger = memoryLogger();

  beforeAll(async () => {
    idp = await TestIssuer.start({ path: '/realms/test' });
    const mw = oidcAuth({
      issuer: idp.url,
      audience: AUD,
      clientId: 'mcp-client',
      resourceMetadataUrl: PRM,
      logger,
    });
    await mw.ready;
    h = await serve(flavour, mw);
  });
  afterAll(async () => {
    await h.close();
    await idp.stop();
  });
  beforeEach(() => {
    h.seen.length = 0;
    logger.entries.length = 0;
  });

  const post = (token?: string) => {
    const r = request(h.url).post('/mcp');
    return (token === undefined ? r : r.set(...bearer(token))).send(PING);
  };

  test.each(['RS256', 'ES256'] as const)('a valid %s token passes with its principal', async (alg) => {
    const token = await idp.sign(
      {
        sub: 'alice',
        aud: AUD,
        email: 'alice@example.com',
        groups: ['/admins'],
        realm_access: { roles: ['user'] },
      },
      { alg },
    );
    const r = await post(token);
    expect(r.status).toBe(200);
    expect(r.body.principal).toMatchObject({
      userId: 'alice',
      email: 'alice@example.com',
      groups: ['admins'],
      roles: ['user'],
      method: 'oidc',
      // A subject is unique within its issuer only.
      source: idp.url,
    });
    expect(r.body.principal.claims.sub).toBe('alice');
    expect(r.body.auth).toEqual({ outcome: 'ok', method: 'oidc' });
  });

  test('no token → 401 with the metadata URL and no error code', async () => {
    const r = await post();
    expect(r.status).toBe(401);
    expect(r.headers['www-authenticate']).toBe(`Bearer resource_metadata="${PRM}"`);
    expect(r.body).toEqual({ jsonrpc: '2.0', error: { code: 401, message: 'Authentication required' } });
  });

  test('expired → 401 Token expired', async () => {
    const r = await post(await idp.sign({ sub: 'alice', aud: AUD }, { expiresIn: -60 }));
    expect(r.status).toBe(401);
    expect(r.headers['www-authenticate']).toBe(`Bearer resource_metadata="${PRM}", error="invalid_token"`);
    expect(r.body.error).toEqual({ code: 401, message: 'Token expired' });
    expect(h.seen[0]!.auth).toEqual({ outcome: 'expired', method: 'oidc' });
    expect(logger.text()).toContain('ERR_JWT_EXPIRED');
  });

  test('not yet valid (nbf in the future) → 401 Invalid token, nbf in the log', async () => {
    const r = await post(await idp.sign({ sub: 'alice', aud: AUD }, { notBefore: 3600 }));
    expect(r.status).toBe(401);
    expect(r.body.error.message).toBe('Invalid token');
    expect(logger.entries[0]!.meta).toMatchObject({ why: 'ERR_JWT_CLAIM_VALIDATION_FAILED', claim: 'nbf' });
  });

  test('wrong audience → 401; the expected audience goes to the log, not the answer', async () => {
    const r = await post(await idp.sign({ sub: 'alice', aud: 'https://other.test/mcp', azp: 'mcp-client' }));
    expect(r.status).toBe(401);
    expect(r.body.error.message).toBe('Invalid token');
    expect(r.text).not.toContain('mcp.test');
    expect(logger.entries[0]!.meta).toMatchObject({
      why: 'wrong_audience',
      aud: 'https://other.test/mcp',
      expected: [AUD],
    });
  });

  test('with audience set, azp naming our client is not enough (RFC 8707)', async () => {
    const r = await post(await idp.sign({ sub: 'alice', aud: 'mcp-client', azp: 'mcp-client' }));
    expect(r.status).toBe(401);
  });

  test('the audience may carry a trailing slash, but not another case', async () => {
    expect((await post(await idp.sign({ sub: 'alice', aud: ['account', `${AUD}/`] }))).status).toBe(200);
    const r = await post(await idp.sign({ sub: 'alice', aud: ['account', 'HTTPS://MCP.TEST/mcp/'] }));
    expect(r.status).toBe(401);
  });

  test('wrong issuer → 401 (not recognized), even when signed with the right key', async () => {
    const r = await post(await idp.sign({ sub: 'alice', aud: AUD, iss: 'https://evil.test' }));
    expect(r.status).toBe(401);
    expect(r.body.error.message).toBe('Invalid token');
    expect(logger.entries[0]!.meta).toMatchObject({ passed: [{ method: 'oidc', why: 'other_issuer' }] });
  });

  test('the right iss signed with a key the issuer never published → 401', async () => {
    const keyId = await idp.createUnpublishedKey('RS256');
    const r = await post(await idp.sign({ sub: 'alice', aud: AUD }, { keyId, kid: idp.currentKid('RS256') }));
    expect(r.status).toBe(401);
    expect(logger.entries[0]!.meta).toMatchObject({ why: 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED' });
  });

  test('alg: none → 401', async () => {
    const r = await post(idp.unsigned({ sub: 'alice', aud: AUD }));
    expect(r.status).toBe(401);
    expect(logger.entries[0]!.meta).toMatchObject({ why: 'ERR_JOSE_ALG_NOT_ALLOWED', alg: 'none' });
  });

  test.each(['pem', 'jwk'] as const)('HS256 signed with the public key (%s) → 401', async (secret) => {
    const r = await post(idp.hmacWithPublicKey({ sub: 'alice', aud: AUD }, { secret }));
    expect(r.status).toBe(401);
    expect(logger.entries[0]!.meta).toMatchObject({ why: 'ERR_JOSE_ALG_NOT_ALLOWED', alg: 'HS256' });
  });

  test('a token without exp → 401', async () => {
    const r = await post(await idp.sign({ sub: 'alice', aud: AUD }, { expiresIn: null }));
    expect(r.status).toBe(401);
    expect(logger.entries[0]!.meta).toMatchObject({ claim: 'exp', reason: 'missing' });
  });

  test('a token without sub → 401', async () => {
    const r = await post(await idp.sign({ aud: AUD }));
    expect(r.status).toBe(401);
    expect(logger.entries[0]!.meta).toMatchObject({ why: 'missing_subject' });
  });

  test('a groups claim of the wrong type → 401', async () => {
    const r = await post(await idp.sign({ sub: 'alice', aud: AUD, groups: 42 }));
    expect(r.status).toBe(401);
    expect(logger.entries[0]!.meta).toMatchObject({ why: 'invalid_claim', claim: 'groups' });
  });

  test('a tampered payload → 401', async () => {
    const [hd, , sig] = (await idp.sign({ sub: 'alice', aud: AUD })).split('.');
    const forged = Buffer.from(
      JSON.stringify({ iss: idp.url, sub: 'root', aud: AUD, exp: 9999999999 }),
    ).toString('base64url');
    const r = await post(`${hd}.${forged}.${sig}`);
    expect(r.status).toBe(401);
  });

  test('a bearer value that is not a JWT → 401 (not recognized)', async () => {
    const r = await post('opaque-token-value');
    expect(r.status).toBe(401);
    expect(r.headers['www-authenticate']).toContain('error="invalid_token"');
  });

  test('a token in the query string is ignored', async () => {
    const token = await idp.sign({ sub: 'alice', aud: AUD });
    const r = await request(h.url).post(`/mcp?access_token=${token}`).send(PING);
    expect(r.status).toBe(401);
    expect(r.headers['www-authenticate']).toBe(`Bearer resource_metadata="${PRM}"`);
  });

  test('valid requests fetch nothing: discovery once, JWKS once', async () => {
    const before = { ...idp.stats };
    for (let i = 0; i < 3; i++)
      expect((await post(await idp.sign({ sub: 'alice', aud: AUD }))).status).toBe(200);
    expect(idp.stats).toEqual(before);
  });
});

describe('oidcAuth: audience by client id (no audience set)', () => {
  let idp: TestIssuer;
  let h: Harness;
  beforeAll(async () => {
    idp = await TestIssuer.start();
    const mw = oidcAuth({ issuer: idp.url, clientId: 'mcp-client', logger: memoryLogger() });
    await mw.ready;
    h = await serve('node:http', mw);
  });
  afterAll(async () => {
    await h.close();
    await idp.stop();
  });

  test.each<[string, Record<string, unknown>, number]>([
    ['client id in aud', { aud: ['mcp-client', 'account'] }, 200],
    ['azp equals the client id, aud does not hold it', { aud: 'account', azp: 'mcp-client' }, 401],
    ['neither', { aud: 'account', azp: 'someone-else' }, 401],
  ])('%s', async (_n, claims, status) => {
    const r = await request(h.url)
      .post('/mcp')
      .set(...bearer(await idp.sign({ sub: 'u', ...claims })))
      .send(PING);
    expect(r.status).toBe(status);
  });
});
