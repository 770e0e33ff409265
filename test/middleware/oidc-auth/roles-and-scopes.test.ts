/**
 * oidcAuth: requiredRoles, requiredScopes, typ, custom claim mappings and clock tolerance.
 */
import request from 'supertest';
import { oidcAuth } from '../../../middleware/oidc-auth/index';
import { TestIssuer } from '../../../testing/index';
import { type Harness, PING, bearer, memoryLogger, serve } from '../../support/auth-harness';

const AUD = 'https://mcp.test/mcp';
const PRM = 'https://mcp.test/.well-known/oauth-protected-resource/mcp';

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
