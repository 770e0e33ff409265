/**
 * oidcAuth over HTTP against the real jose verifier and a real issuer on loopback (TestIssuer).
 */
import request from 'supertest';
import { type OidcAuthOptions, oidcAuth } from '../../../middleware/oidc-auth/index';
import { TestIssuer } from '../../../testing/index';
import { FLAVOURS, type Harness, PING, memoryLogger, serve } from '../../support/auth-harness';

const AUD = 'https://mcp.test/mcp';
const PRM = 'https://mcp.test/.well-known/oauth-protected-resource/mcp';

function bearer(token: string): [string, string] {
  return ['Authorization', `Bearer ${token}`];
}

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

  test('the audience may be spelled with upper-case host and a trailing slash', async () => {
    const r = await post(await idp.sign({ sub: 'alice', aud: ['account', 'HTTPS://MCP.TEST/mcp/'] }));
    expect(r.status).toBe(200);
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
    ['azp equals the client id', { aud: 'account', azp: 'mcp-client' }, 200],
    ['neither', { aud: 'account', azp: 'someone-else' }, 401],
  ])('%s', async (_n, claims, status) => {
    const r = await request(h.url)
      .post('/mcp')
      .set(...bearer(await idp.sign({ sub: 'u', ...claims })))
      .send(PING);
    expect(r.status).toBe(status);
  });
});

describe('oidcAuth: roles and scopes', () => {
  let idp: TestIssuer;
  let h: Harness;
  const logger = memoryLogger();
  beforeAll(async () => {
    idp = await TestIssuer.start();
    const mw = oidcAuth({
      issuer: idp.url,
      audience: AUD,
      clientId: 'mcp-client',
      requiredRoles: ['mcp-user', 'mcp-admins'],
      resourceMetadataUrl: PRM,
      logger,
    });
    await mw.ready;
    h = await serve('express', mw);
  });
  afterAll(async () => {
    await h.close();
    await idp.stop();
  });
  beforeEach(() => {
    logger.entries.length = 0;
  });
  const post = async (claims: Record<string, unknown>) =>
    request(h.url)
      .post('/mcp')
      .set(...bearer(await idp.sign({ sub: 'bob', aud: AUD, ...claims })))
      .send(PING);

  test('missing role → 403 insufficient_scope; roles seen go to the log only', async () => {
    const r = await post({ roles: ['secret-role-x'], groups: ['/secret-group-y'] });
    expect(r.status).toBe(403);
    expect(r.headers['www-authenticate']).toBe(
      `Bearer resource_metadata="${PRM}", error="insufficient_scope"`,
    );
    expect(r.body).toEqual({ jsonrpc: '2.0', error: { code: 403, message: 'Insufficient permissions' } });
    expect(r.text).not.toContain('secret-role-x');
    expect(r.text).not.toContain('mcp-admins');
    expect(logger.entries[0]!.meta).toMatchObject({
      why: 'missing_role',
      roles: ['secret-role-x'],
      groups: ['secret-group-y'],
    });
  });

  test.each<[string, Record<string, unknown>]>([
    ['a top-level roles claim', { roles: ['mcp-user'] }],
    ['realm_access.roles', { realm_access: { roles: ['mcp-user'] } }],
    ['resource_access.<client>.roles', { resource_access: { 'mcp-client': { roles: ['mcp-user'] } } }],
    ['a group with a leading slash', { groups: ['/mcp-admins'] }],
    ['a single string group', { groups: 'mcp-admins' }],
  ])('the role may come from %s', async (_n, claims) => {
    expect((await post(claims)).status).toBe(200);
  });

  test("another client's roles do not count", async () => {
    expect((await post({ resource_access: { other: { roles: ['mcp-user'] } } })).status).toBe(403);
  });
});

describe('oidcAuth: requiredScopes, typ, custom claims', () => {
  let idp: TestIssuer;
  beforeAll(async () => {
    idp = await TestIssuer.start();
  });
  afterAll(() => idp.stop());

  test('a missing scope → 403 naming the required scopes in the challenge', async () => {
    const mw = oidcAuth({
      issuer: idp.url,
      audience: AUD,
      requiredScopes: ['mcp:read', 'mcp:write'],
      logger: memoryLogger(),
    });
    await mw.ready;
    const h = await serve('node:http', mw);
    try {
      const no = await request(h.url)
        .post('/mcp')
        .set(...bearer(await idp.sign({ sub: 'u', aud: AUD, scope: 'openid mcp:read' })))
        .send(PING);
      expect(no.status).toBe(403);
      expect(no.headers['www-authenticate']).toBe(
        'Bearer scope="mcp:read mcp:write", error="insufficient_scope"',
      );
      const yes = await request(h.url)
        .post('/mcp')
        .set(...bearer(await idp.sign({ sub: 'u', aud: AUD, scp: ['mcp:write', 'mcp:read'] })))
        .send(PING);
      expect(yes.status).toBe(200);
    } finally {
      await h.close();
    }
  });

  test('typ: at+jwt refuses an ID token', async () => {
    const mw = oidcAuth({ issuer: idp.url, audience: AUD, typ: 'at+jwt', logger: memoryLogger() });
    await mw.ready;
    const idToken = await mw.check(await idp.sign({ sub: 'u', aud: AUD }), {} as never);
    expect(idToken).toMatchObject({ kind: 'refuse', outcome: 'invalid', detail: { claim: 'typ' } });
    const access = await mw.check(await idp.sign({ sub: 'u', aud: AUD }, { typ: 'at+jwt' }), {} as never);
    expect(access.kind).toBe('ok');
  });

  test('custom groups and roles claims replace the defaults', async () => {
    const mw = oidcAuth({
      issuer: idp.url,
      audience: AUD,
      groupsClaim: ['ext', 'teams'],
      rolesClaims: ['perms'],
      logger: memoryLogger(),
    });
    await mw.ready;
    const d = await mw.check(
      await idp.sign({ sub: 'u', aud: AUD, groups: ['g'], roles: ['r'], ext: { teams: ['t'] }, perms: 'p' }),
      {} as never,
    );
    expect(d).toMatchObject({ kind: 'ok', principal: { groups: ['t'], roles: ['p'] } });
  });

  test('clockTolerance: a token expired 30 s ago passes with 60 s of tolerance, not with 0', async () => {
    const token = await idp.sign({ sub: 'u', aud: AUD }, { expiresIn: -30 });
    const lax = oidcAuth({ issuer: idp.url, audience: AUD, clockTolerance: 60, logger: memoryLogger() });
    const strict = oidcAuth({ issuer: idp.url, audience: AUD, clockTolerance: 0, logger: memoryLogger() });
    await Promise.all([lax.ready, strict.ready]);
    expect((await lax.check(token, {} as never)).kind).toBe('ok');
    expect(await strict.check(token, {} as never)).toMatchObject({ kind: 'refuse', outcome: 'expired' });
  });
});

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

describe('oidcAuth: issuer down at start-up', () => {
  let idp: TestIssuer;
  beforeEach(async () => {
    idp = await TestIssuer.start();
  });
  afterEach(() => idp.stop());

  test('unreachable: ready rejects naming the issuer, the error is logged, tokens get 503', async () => {
    await idp.down('refuse');
    const logger = memoryLogger();
    const mw = oidcAuth({ issuer: idp.url, audience: AUD, logger });
    await expect(mw.ready).rejects.toThrow(
      new RegExp(
        `cannot start for issuer ${idp.url}: discovery at .* failed: fetch failed \\(ECONNREFUSED\\)`,
      ),
    );
    expect(mw.status().phase).toBe('failed');
    expect(logger.entries.filter((e) => e.level === 'error').map((e) => e.message)).toEqual([
      expect.stringContaining('start-up failed for issuer'),
    ]);
    const h = await serve('express', mw);
    try {
      const r = await request(h.url)
        .post('/mcp')
        .set(...bearer(await idp.sign({ sub: 'u', aud: AUD })))
        .send(PING);
      expect(r.status).toBe(503);
      expect(r.body).toEqual({
        jsonrpc: '2.0',
        error: { code: 503, message: 'Authentication is temporarily unavailable' },
      });
      expect(r.headers['retry-after']).toBe('5');
      expect(h.seen[0]!.auth).toEqual({ outcome: 'unavailable', method: 'oidc' });
    } finally {
      await h.close();
    }
  });

  test('a failed start-up nobody awaits is not an unhandled rejection', async () => {
    await idp.down('refuse');
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown): void => {
      unhandled.push(e);
    };
    process.on('unhandledRejection', onUnhandled);
    try {
      const mw = oidcAuth({ issuer: idp.url, audience: AUD, logger: memoryLogger() });
      // Wait for the failure without attaching a handler to mw.ready itself.
      while (mw.status().phase === 'starting') await new Promise((r) => setTimeout(r, 10));
      await new Promise((r) => setImmediate(r));
      expect(mw.status().phase).toBe('failed');
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  test('an issuer that accepts and never answers: start-up times out', async () => {
    await idp.down('hang');
    const mw = oidcAuth({ issuer: idp.url, audience: AUD, fetchTimeoutMs: 200, logger: memoryLogger() });
    await expect(mw.ready).rejects.toThrow(/discovery at .* failed: timed out/);
  });

  test('an issuer answering 503: start-up fails with the status', async () => {
    await idp.down('error');
    const mw = oidcAuth({ issuer: idp.url, audience: AUD, logger: memoryLogger() });
    await expect(mw.ready).rejects.toThrow(/answered HTTP 503/);
  });

  test('with retry: requests get 503 while it is down, then it starts when the issuer comes back', async () => {
    await idp.down('refuse');
    const logger = memoryLogger();
    const mw = oidcAuth({
      issuer: idp.url,
      audience: AUD,
      retry: { minDelayMs: 20, maxDelayMs: 50 },
      logger,
    });
    try {
      while (mw.status().phase === 'starting') await new Promise((r) => setTimeout(r, 10));
      expect(mw.status().phase).toBe('retrying');
      const token = await idp.sign({ sub: 'u', aud: AUD });
      expect(await mw.check(token, {} as never)).toMatchObject({ kind: 'refuse', outcome: 'unavailable' });
      await idp.up();
      await mw.ready;
      expect(mw.status()).toMatchObject({ phase: 'ready', jwksUri: idp.jwksUri });
      expect((await mw.check(token, {} as never)).kind).toBe('ok');
      expect(logger.entries.some((e) => e.level === 'error' && /attempt 1 failed/.test(e.message))).toBe(
        true,
      );
    } finally {
      mw.close();
    }
  });

  test('with retry attempts exhausted, ready rejects', async () => {
    await idp.down('error');
    const mw = oidcAuth({
      issuer: idp.url,
      audience: AUD,
      retry: { attempts: 2, minDelayMs: 1 },
      logger: memoryLogger(),
    });
    await expect(mw.ready).rejects.toThrow(/cannot start/);
    expect(idp.stats.discovery).toBe(0);
  });

  test('close() stops the retries and rejects ready', async () => {
    await idp.down('refuse');
    const mw = oidcAuth({ issuer: idp.url, audience: AUD, retry: true, logger: memoryLogger() });
    while (mw.status().phase === 'starting') await new Promise((r) => setTimeout(r, 10));
    mw.close();
    await expect(mw.ready).rejects.toThrow(/closed/);
    expect(mw.status().phase).toBe('closed');
  });

  test('a request that arrives during start-up waits for it', async () => {
    const mw = oidcAuth({ issuer: idp.url, audience: AUD, logger: memoryLogger() });
    const d = await mw.check(await idp.sign({ sub: 'u', aud: AUD }), {} as never);
    expect(d.kind).toBe('ok');
  });

  test('a discovery document naming another issuer fails start-up', async () => {
    const bad = await TestIssuer.start({ discovery: { issuer: 'https://impostor.test' } });
    try {
      const mw = oidcAuth({ issuer: bad.url, audience: AUD, logger: memoryLogger() });
      await expect(mw.ready).rejects.toThrow(/names issuer "https:\/\/impostor\.test", expected/);
    } finally {
      await bad.stop();
    }
  });

  test('a plain-http jwks_uri off loopback fails start-up', async () => {
    const bad = await TestIssuer.start({ discovery: { jwks_uri: 'http://keys.example.com/jwks' } });
    try {
      const mw = oidcAuth({ issuer: bad.url, audience: AUD, logger: memoryLogger() });
      await expect(mw.ready).rejects.toThrow(/no usable jwks_uri/);
    } finally {
      await bad.stop();
    }
  });

  test('an empty key set fails start-up', async () => {
    idp.retire(idp.currentKid('RS256'));
    idp.retire(idp.currentKid('ES256'));
    const mw = oidcAuth({ issuer: idp.url, audience: AUD, logger: memoryLogger() });
    await expect(mw.ready).rejects.toThrow(/holds no keys/);
  });
});

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

describe('oidcAuth options', () => {
  const issuer = 'https://idp.example.com/realms/x';
  // These constructions fail before any fetch: nothing is started.
  test.each<[string, Record<string, unknown>, RegExp]>([
    ['no issuer', { audience: AUD }, /"issuer"/],
    ['a plain-http issuer off loopback', { issuer: 'http://idp.example.com', audience: AUD }, /"issuer"/],
    ['an issuer with a query', { issuer: issuer + '?x=1', audience: AUD }, /"issuer"/],
    ['neither audience nor clientId', { issuer }, /"audience".*"clientId"/],
    ['alg none', { issuer, audience: AUD, algorithms: ['RS256', 'none'] }, /asymmetric algorithms only/],
    ['HS256', { issuer, audience: AUD, algorithms: ['HS256'] }, /asymmetric algorithms only/],
    ['an unknown algorithm', { issuer, audience: AUD, algorithms: ['RS257'] }, /drawn from/],
    ['a bad clockTolerance', { issuer, audience: AUD, clockTolerance: -1 }, /clockTolerance/],
    ['a bad timeout', { issuer, audience: AUD, fetchTimeoutMs: 1.5 }, /fetchTimeoutMs/],
    ['a typo', { issuer, audience: AUD, requiredRole: ['x'] }, /unknown option "requiredRole"/],
    ['a bad retry', { issuer, audience: AUD, retry: { attemps: 3 } }, /unknown option "attemps"/],
    ['bad requiredRoles', { issuer, audience: AUD, requiredRoles: 'admin' }, /requiredRoles/],
    ['a bad logger', { issuer, audience: AUD, logger: {} }, /logger/],
  ])('%s throws a TypeError', (_n, opts, msg) => {
    expect(() => oidcAuth(opts as never)).toThrow(TypeError);
    expect(() => oidcAuth(opts as never)).toThrow(msg);
  });
});
