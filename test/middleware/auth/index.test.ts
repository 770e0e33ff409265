/**
 * authenticate([...]): API keys and OIDC in one chain; the first authenticator that recognizes the credential
 * decides.
 */
import request from 'supertest';
import { hashKey } from '../../../lib/apikeys';
import { apiKeyAuth } from '../../../middleware/api-key-auth/index';
import { type AuthDecision, type Authenticator, authenticate } from '../../../middleware/auth/index';
import { oidcAuth } from '../../../middleware/oidc-auth/index';
import { TestIssuer } from '../../../testing/index';
import { FLAVOURS, type Harness, PING, memoryLogger, serve } from '../../support/auth-harness';

const AUD = 'https://mcp.test/mcp';
const PRM = 'https://mcp.test/.well-known/oauth-protected-resource/mcp';
const KEY = 'ci-key-0123456789abcdef0123';

function fake(method: string, decide: (token: string) => AuthDecision): Authenticator & { calls: number } {
  const a = {
    method,
    by: `${method}Auth`,
    ready: Promise.resolve(),
    challenge: {},
    calls: 0,
    check(token: string) {
      a.calls++;
      return decide(token);
    },
  };
  return a;
}

describe.each(FLAVOURS)('authenticate([apiKeyAuth, oidcAuth]) on %s', (flavour) => {
  let idp: TestIssuer;
  let idp2: TestIssuer;
  let h: Harness;
  const logger = memoryLogger();

  beforeAll(async () => {
    [idp, idp2] = await Promise.all([TestIssuer.start(), TestIssuer.start({ path: '/second' })]);
    const keys = apiKeyAuth({ keys: [{ userId: 'ci', hash: hashKey(KEY), groups: ['deploy'] }] });
    const first = oidcAuth({ issuer: idp.url, audience: AUD, logger });
    const second = oidcAuth({ issuer: idp2.url, audience: AUD, requiredRoles: ['ops'], logger });
    const chain = authenticate([keys, first, second], { resourceMetadataUrl: PRM, logger });
    await chain.ready;
    h = await serve(flavour, chain);
  });
  afterAll(async () => {
    await h.close();
    await Promise.all([idp.stop(), idp2.stop()]);
  });
  beforeEach(() => {
    h.seen.length = 0;
    logger.entries.length = 0;
  });
  const post = (token?: string) => {
    const r = request(h.url).post('/mcp');
    return (token === undefined ? r : r.set('Authorization', `Bearer ${token}`)).send(PING);
  };

  test('an API key is decided by the API-key authenticator', async () => {
    const r = await post(KEY);
    expect(r.status).toBe(200);
    expect(r.body.principal).toEqual({
      userId: 'ci',
      groups: ['deploy'],
      roles: [],
      method: 'api-key',
      source: 'api-key',
    });
  });

  test('a token of the first issuer is decided by the first OIDC authenticator', async () => {
    const r = await post(await idp.sign({ sub: 'alice', aud: AUD }));
    expect(r.status).toBe(200);
    expect(r.body.principal).toMatchObject({ userId: 'alice', method: 'oidc' });
  });

  test('a token of the second issuer is decided by the second, with its own role requirement', async () => {
    expect((await post(await idp2.sign({ sub: 'bob', aud: AUD, roles: ['ops'] }))).status).toBe(200);
    const r = await post(await idp2.sign({ sub: 'bob', aud: AUD, roles: ['dev'] }));
    expect(r.status).toBe(403);
    expect(r.headers['www-authenticate']).toBe(
      `Bearer resource_metadata="${PRM}", error="insufficient_scope"`,
    );
    expect(h.seen[1]!.refusal?.by).toBe('oidcAuth');
  });

  test('an expired token of a known issuer is refused by its authenticator: Token expired', async () => {
    const r = await post(await idp.sign({ sub: 'alice', aud: AUD }, { expiresIn: -60 }));
    expect(r.status).toBe(401);
    expect(r.body.error.message).toBe('Token expired');
    expect(h.seen[0]!.auth).toEqual({ outcome: 'expired', method: 'oidc' });
  });

  test('a credential nobody recognizes → 401 invalid_token, recorded by the chain', async () => {
    for (const token of ['wrong-key', await idp.sign({ sub: 'x', aud: AUD, iss: 'https://unknown.test' })]) {
      const r = await post(token);
      expect(r.status).toBe(401);
      expect(r.headers['www-authenticate']).toBe(`Bearer resource_metadata="${PRM}", error="invalid_token"`);
      expect(r.body.error.message).toBe('Invalid token');
    }
    expect(h.seen.map((l) => [l.auth, l.refusal?.by])).toEqual([
      [{ outcome: 'invalid' }, 'authenticate'],
      [{ outcome: 'invalid' }, 'authenticate'],
    ]);
    expect(logger.entries[0]!.meta.passed).toEqual([
      { method: 'api-key', why: 'unknown_key' },
      { method: 'oidc', why: 'not_a_jwt' },
      { method: 'oidc', why: 'not_a_jwt' },
    ]);
  });

  test('no credential → 401 missing with the chain challenge; query-string tokens are ignored', async () => {
    const r = await request(h.url).post(`/mcp?access_token=${KEY}`).send(PING);
    expect(r.status).toBe(401);
    expect(r.headers['www-authenticate']).toBe(`Bearer resource_metadata="${PRM}"`);
    expect(h.seen[0]!.auth).toEqual({ outcome: 'missing' });
  });
});

describe('chain semantics', () => {
  test('the first authenticator that does not pass decides; later ones are not asked', async () => {
    const a = fake('a', () => ({ kind: 'pass', why: 'nope' }));
    const b = fake('b', () => ({ kind: 'refuse', outcome: 'forbidden', why: 'no', scope: ['s1'] }));
    const c = fake('c', () => ({
      kind: 'ok',
      principal: { userId: 'c', groups: [], roles: [], method: 'c' },
    }));
    const h = await serve('node:http', authenticate([a, b, c], { realm: 'mcp', logger: memoryLogger() }));
    try {
      const r = await request(h.url).post('/mcp').set('Authorization', 'Bearer t').send(PING);
      expect(r.status).toBe(403);
      expect(r.headers['www-authenticate']).toBe(
        'Bearer realm="mcp", scope="s1", error="insufficient_scope"',
      );
      expect([a.calls, b.calls, c.calls]).toEqual([1, 1, 0]);
      expect(h.seen[0]!.auth).toEqual({ outcome: 'forbidden', method: 'b' });
      expect(h.seen[0]!.refusal?.by).toBe('bAuth');
    } finally {
      await h.close();
    }
  });

  test('order matters only for credentials two members both recognize', async () => {
    const ok = fake('x', () => ({
      kind: 'ok',
      principal: { userId: 'x', groups: [], roles: [], method: 'x' },
    }));
    const refuse = fake('y', () => ({ kind: 'refuse', outcome: 'invalid', why: 'no' }));
    const h1 = await serve('node:http', authenticate([ok, refuse], { logger: memoryLogger() }));
    const h2 = await serve('node:http', authenticate([refuse, ok], { logger: memoryLogger() }));
    try {
      expect((await request(h1.url).post('/mcp').set('Authorization', 'Bearer t').send(PING)).status).toBe(
        200,
      );
      expect((await request(h2.url).post('/mcp').set('Authorization', 'Bearer t').send(PING)).status).toBe(
        401,
      );
    } finally {
      await Promise.all([h1.close(), h2.close()]);
    }
  });

  test('an authenticator that throws → 500 with a generic message, the error in the log', async () => {
    const logger = memoryLogger();
    const boom = fake('boom', () => {
      throw new Error('secret internals');
    });
    const h = await serve('express', authenticate([boom], { logger }));
    try {
      const r = await request(h.url).post('/mcp').set('Authorization', 'Bearer t').send(PING);
      expect(r.status).toBe(500);
      expect(r.body).toEqual({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' } });
      expect(logger.text()).toContain('secret internals');
    } finally {
      await h.close();
    }
  });

  test('challenge options default to the first member that has them; the chain can override', async () => {
    const keys = apiKeyAuth({
      keys: [{ userId: 'u', hash: hashKey('k'), groups: ['g'] }],
      resourceMetadataUrl: PRM,
      realm: 'keys',
    });
    const h1 = await serve('node:http', authenticate([keys], { logger: memoryLogger() }));
    const h2 = await serve(
      'node:http',
      authenticate([keys], { realm: 'chain', scopes: ['mcp'], logger: memoryLogger() }),
    );
    try {
      expect((await request(h1.url).post('/mcp').send(PING)).headers['www-authenticate']).toBe(
        `Bearer realm="keys", resource_metadata="${PRM}"`,
      );
      expect((await request(h2.url).post('/mcp').send(PING)).headers['www-authenticate']).toBe(
        `Bearer realm="chain", resource_metadata="${PRM}", scope="mcp"`,
      );
    } finally {
      await Promise.all([h1.close(), h2.close()]);
    }
  });

  test('with the issuer down, API keys still work and tokens of that issuer get 503', async () => {
    const idp = await TestIssuer.start();
    await idp.down('refuse');
    const oidc = oidcAuth({ issuer: idp.url, audience: AUD, logger: memoryLogger() });
    const chain = authenticate(
      [apiKeyAuth({ keys: [{ userId: 'ci', hash: hashKey(KEY), groups: ['g'] }] }), oidc],
      { logger: memoryLogger() },
    );
    await expect(chain.ready).rejects.toThrow(/cannot start/);
    const h = await serve('node:http', chain);
    try {
      expect(
        (await request(h.url).post('/mcp').set('Authorization', `Bearer ${KEY}`).send(PING)).status,
      ).toBe(200);
      expect(
        (
          await request(h.url)
            .post('/mcp')
            .set('Authorization', `Bearer ${await idp.sign({ sub: 'u', aud: AUD })}`)
            .send(PING)
        ).status,
      ).toBe(503);
    } finally {
      await h.close();
      await idp.stop();
    }
  });

  test('misuse is refused at construction', () => {
    expect(() => authenticate([])).toThrow(/non-empty array of authenticators/);
    expect(() => authenticate([apiKeyAuth as never])).toThrow(/did you pass the factory/);
    expect(() =>
      authenticate([fake('a', () => ({ kind: 'pass', why: '' }))], { relam: 'x' } as never),
    ).toThrow(/unknown option "relam"/);
  });

  test('a misspelt option is refused naming the right one', () => {
    const member = fake('a', () => ({ kind: 'pass', why: '' }));
    expect(() => authenticate([member], { relam: 'x' } as never)).toThrow(/did you mean "realm"\?/);
    expect(() => authenticate([member], { resourceMetadataURL: 'x' } as never)).toThrow(
      /authenticate: unknown option "resourceMetadataURL"; did you mean "resourceMetadataUrl"\?/,
    );
  });
});
