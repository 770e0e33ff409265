/**
 * The TestIssuer itself: what users' tests rely on.
 */
import { decodeProtectedHeader, jwtVerify, createLocalJWKSet, type JSONWebKeySet } from 'jose';
import { TestIssuer } from '../../testing/index';

async function getJson(url: string): Promise<{ status: number; body: unknown }> {
  const r = await fetch(url);
  return { status: r.status, body: r.status === 200 ? await r.json() : undefined };
}

describe('TestIssuer', () => {
  let idp: TestIssuer;
  beforeAll(async () => {
    idp = await TestIssuer.start({ path: '/realms/t' });
  });
  afterAll(() => idp.stop());

  test('listens on loopback and serves a discovery document and a JWKS', async () => {
    expect(idp.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/realms\/t$/);
    const d = await getJson(idp.discoveryUrl);
    expect(d.body).toMatchObject({ issuer: idp.url, jwks_uri: idp.jwksUri });
    const j = (await getJson(idp.jwksUri)).body as JSONWebKeySet;
    expect(j.keys.map((k) => [k.kid, k.kty, k.alg, k.use])).toEqual([
      ['rs256-1', 'RSA', 'RS256', 'sig'],
      ['es256-1', 'EC', 'ES256', 'sig'],
    ]);
    expect(j.keys.some((k) => 'd' in k)).toBe(false);
  });

  test('signs tokens the published keys verify, with default and chosen claims', async () => {
    const jwks = createLocalJWKSet((await getJson(idp.jwksUri)).body as JSONWebKeySet);
    for (const alg of ['RS256', 'ES256'] as const) {
      const token = await idp.sign({ sub: 'u', aud: 'a' }, { alg, expiresIn: 60, notBefore: -5 });
      expect(decodeProtectedHeader(token)).toEqual({ alg, typ: 'JWT', kid: idp.currentKid(alg) });
      const { payload } = await jwtVerify(token, jwks, { issuer: idp.url, audience: 'a' });
      expect(payload.exp! - payload.iat!).toBe(60);
      expect(payload.nbf).toBe(payload.iat! - 5);
    }
  });

  test('attack tokens: alg none and HMAC over the public key', () => {
    expect(decodeProtectedHeader(idp.unsigned({})).alg).toBe('none');
    expect(idp.unsigned({}).endsWith('.')).toBe(true);
    expect(decodeProtectedHeader(idp.hmacWithPublicKey({}))).toEqual({
      alg: 'HS256',
      typ: 'JWT',
      kid: idp.currentKid('RS256'),
    });
  });

  test('kids are unique', async () => {
    await expect(idp.createUnpublishedKey('RS256', 'rs256-1')).rejects.toThrow(/exists already/);
  });
});

describe('TestIssuer outages', () => {
  test('refuse closes the port and up reopens it on the same one', async () => {
    const idp = await TestIssuer.start();
    try {
      await idp.down('refuse');
      await expect(fetch(idp.jwksUri)).rejects.toThrow();
      await idp.up();
      expect((await getJson(idp.jwksUri)).status).toBe(200);
    } finally {
      await idp.stop();
    }
  });

  test('error answers 503; hang never answers until up', async () => {
    const idp = await TestIssuer.start();
    try {
      await idp.down('error');
      expect((await getJson(idp.jwksUri)).status).toBe(503);
      await idp.down('hang');
      await expect(fetch(idp.jwksUri, { signal: AbortSignal.timeout(100) })).rejects.toThrow();
      await idp.up();
      expect((await getJson(idp.jwksUri)).status).toBe(200);
    } finally {
      await idp.stop();
    }
  });
});

describe('TestIssuer options', () => {
  test('a misspelt option is refused naming the right one', async () => {
    await expect(TestIssuer.start({ pth: '/realms/t' } as never)).rejects.toThrow(
      /TestIssuer: unknown option "pth"; did you mean "path"\?/,
    );
    await expect(TestIssuer.start({ path: 'realms' })).rejects.toThrow(/option "path" must be a path like/);
    const idp = await TestIssuer.start();
    try {
      await expect(idp.sign({}, { expiresIN: 60 } as never)).rejects.toThrow(
        /TestIssuer.sign: unknown option "expiresIN"; did you mean "expiresIn"\?/,
      );
      expect(() => idp.hmacWithPublicKey({}, { secrets: 'jwk' } as never)).toThrow(/did you mean "secret"\?/);
    } finally {
      await idp.stop();
    }
  });
});
