/**
 * The audience a token must name, over HTTP with a real issuer: with `clientId` and no `audience`, only `aud`
 * holding the client id opens the server (never `azp`); with `audience`, only the configured string (or it
 * with or without one trailing `/`), never a spelling the URL parser would map onto it.
 */
import request from 'supertest';
import { audienceMatches, checkAudience } from '../../../lib/oidcclaims';
import { oidcAuth } from '../../../middleware/oidc-auth/index';
import { TestIssuer } from '../../../testing/index';
import { type Harness, PING, bearer, memoryLogger, serve } from '../../support/auth-harness';

const AUD = 'https://mcp.example.test/mcp';
const CLIENT = 'mcp-client';

/** Every look-alike of {@link AUD}, and whether the audience check accepts it. */
const LOOK_ALIKES: [string, string, boolean][] = [
  ['the exact string', AUD, true],
  ['a trailing slash', `${AUD}/`, true],
  ['two trailing slashes', `${AUD}//`, false],
  ['a full-width host', 'https://ｍｃｐ.example.test/mcp', false],
  ['a soft hyphen (U+00AD) in the host', 'https://mc\u00adp.example.test/mcp', false],
  ['a zero-width space (U+200B) in the host', 'https://mcp\u200b.example.test/mcp', false],
  ['userinfo', 'https://attacker@mcp.example.test/mcp', false],
  ['userinfo with a password', 'https://attacker:x@mcp.example.test/mcp', false],
  ['an upper-case host', 'https://MCP.EXAMPLE.TEST/mcp', false],
  ['an upper-case scheme', 'HTTPS://mcp.example.test/mcp', false],
  ['the default port', 'https://mcp.example.test:443/mcp', false],
  ['a percent-encoded path', 'https://mcp.example.test/%6dcp', false],
  ['a percent-encoded host', 'https://%6dcp.example.test/mcp', false],
  ['a trailing dot on the host', 'https://mcp.example.test./mcp', false],
  ['a fragment', `${AUD}#x`, false],
  ['an empty query', `${AUD}?`, false],
  ['a dot segment', 'https://mcp.example.test/./mcp', false],
  ['a backslash', 'https:\\\\mcp.example.test\\mcp', false],
  ['a leading space', ` ${AUD}`, false],
  ['a trailing NUL', `${AUD}\u0000`, false],
  ['an upper-case path', 'https://mcp.example.test/MCP', false],
  ['a path prefix', 'https://mcp.example.test/mcp/admin', false],
  ['http instead of https', 'http://mcp.example.test/mcp', false],
];

describe('audienceMatches: a string, one trailing slash forgiven', () => {
  test.each(LOOK_ALIKES)('%s', (_name, aud, ok) => {
    expect(audienceMatches(aud, AUD)).toBe(ok);
    expect(checkAudience({ aud }, { audience: [AUD] }).ok).toBe(ok);
    expect(checkAudience({ aud: ['other', aud] }, { audience: [AUD] }).ok).toBe(ok);
  });

  test('the rule is symmetric: a configured trailing slash accepts the bare form', () => {
    expect(audienceMatches(AUD, `${AUD}/`)).toBe(true);
    expect(audienceMatches(`${AUD}/`, `${AUD}/`)).toBe(true);
  });

  test.each<[string, Record<string, unknown>, boolean]>([
    ['aud is the client id', { aud: CLIENT }, true],
    ['aud holds the client id', { aud: ['account', CLIENT] }, true],
    [
      'aud names another API, azp is the client',
      { aud: 'https://other-resource.example/api', azp: CLIENT },
      false,
    ],
    ['no aud, azp is the client', { azp: CLIENT }, false],
    ['aud is the client id with a trailing slash', { aud: `${CLIENT}/` }, false],
    ['aud is the client id in another case', { aud: 'MCP-CLIENT' }, false],
  ])('without audience: %s', (_name, payload, ok) => {
    expect(checkAudience(payload, { clientId: CLIENT }).ok).toBe(ok);
  });
});

describe('oidcAuth over HTTP: which audience opens the server', () => {
  let idp: TestIssuer;
  let byClient: Harness;
  let byAudience: Harness;
  const logger = memoryLogger();

  beforeAll(async () => {
    idp = await TestIssuer.start({ path: '/realms/aud' });
    const clientOnly = oidcAuth({ issuer: idp.url, clientId: CLIENT, logger });
    const withAudience = oidcAuth({ issuer: idp.url, audience: AUD, logger });
    await Promise.all([clientOnly.ready, withAudience.ready]);
    byClient = await serve('node:http', clientOnly);
    byAudience = await serve('node:http', withAudience);
  });
  afterAll(async () => {
    await byClient.close();
    await byAudience.close();
    await idp.stop();
  });

  const post = async (h: Harness, claims: Record<string, unknown>) =>
    request(h.url)
      .post('/mcp')
      .set(...bearer(await idp.sign({ sub: 'alice', ...claims })))
      .send(PING);

  test('clientId only: a token for another API is refused although azp is our client', async () => {
    const r = await post(byClient, { aud: 'https://other-resource.example/api', azp: CLIENT });
    expect(r.status).toBe(401);
    expect(r.headers['www-authenticate']).toBe('Bearer error="invalid_token"');
    expect(r.body).toEqual({ jsonrpc: '2.0', error: { code: 401, message: 'Invalid token' } });
  });

  test('clientId only: a token without aud is refused although azp is our client', async () => {
    const r = await post(byClient, { azp: CLIENT });
    expect(r.status).toBe(401);
    expect(r.body.error.message).toBe('Invalid token');
  });

  test('clientId only: a token whose aud holds the client id passes', async () => {
    const r = await post(byClient, { aud: ['account', CLIENT], azp: 'someone-else' });
    expect(r.status).toBe(200);
    expect(r.body.principal.userId).toBe('alice');
  });

  test.each(LOOK_ALIKES)('audience set: %s', async (_name, aud, ok) => {
    const r = await post(byAudience, { aud });
    expect(r.status).toBe(ok ? 200 : 401);
  });
});
