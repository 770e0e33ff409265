/**
 * A request with two `Authorization` lines is refused (400, RFC 6750 §3.1 `invalid_request`) by apiKeyAuth,
 * oidcAuth and an authenticate() chain, on bare node:http and Express, over real HTTP: node:http keeps only the
 * first line, so serving it would answer as whoever that line names while a proxy may have checked the other.
 */
import http from 'node:http';
import { hashKey } from '../../../lib/apikeys';
import { authorizationLines } from '../../../lib/bearer';
import { apiKeyAuth } from '../../../middleware/api-key-auth/index';
import { authenticate } from '../../../middleware/auth/index';
import { oidcAuth } from '../../../middleware/oidc-auth/index';
import type { Middleware } from '../../../core/types';
import { TestIssuer } from '../../../testing/index';
import { FLAVOURS, type Harness, PING, memoryLogger, serve } from '../../support/auth-harness';

const ALICE_KEY = 'alice-key-0123456789abcdef';
const MALLORY_KEY = 'mallory-key-0123456789abcdef';
const AUD = 'https://mcp.test/mcp';
const PRM = 'https://mcp.test/.well-known/oauth-protected-resource/mcp';
const keys = [
  { userId: 'alice', hash: hashKey(ALICE_KEY), groups: ['admins'] },
  { userId: 'mallory', hash: hashKey(MALLORY_KEY), groups: ['readers'] },
];

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: unknown;
}

/** POST a ping with the given `Authorization` lines (an array sends one line per item). */
function post(url: string, authorization: string | string[]): Promise<Answer> {
  const body = JSON.stringify(PING);
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${url}/mcp`,
      {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          'Content-Length': Buffer.byteLength(body),
          Authorization: authorization,
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: JSON.parse(text) as unknown }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const REFUSED = {
  jsonrpc: '2.0',
  error: { code: -32600, message: 'Authorization must be sent once' },
};

test('authorizationLines counts the Authorization lines in any case', () => {
  expect(authorizationLines(['Host', 'x', 'authorization', 'a', 'AUTHORIZATION', 'b'])).toBe(2);
  expect(authorizationLines(['Authorization', 'a', 'X-Authorization', 'b'])).toBe(1);
  expect(authorizationLines([])).toBe(0);
  expect(authorizationLines(undefined)).toBe(0);
});

describe.each(FLAVOURS)('two Authorization lines on %s', (flavour) => {
  let idp: TestIssuer;
  const harnesses = new Map<string, Harness>();
  const logger = memoryLogger();

  beforeAll(async () => {
    idp = await TestIssuer.start({ path: '/realms/twice' });
    const oidc = oidcAuth({ issuer: idp.url, audience: AUD, resourceMetadataUrl: PRM, logger });
    await oidc.ready;
    const mws: [string, Middleware][] = [
      ['apiKeyAuth', apiKeyAuth({ keys, resourceMetadataUrl: PRM, logger })],
      ['oidcAuth', oidc],
      [
        'authenticate',
        authenticate([apiKeyAuth({ keys, logger }), oidc], { resourceMetadataUrl: PRM, logger }),
      ],
    ];
    for (const [name, mw] of mws) harnesses.set(name, await serve(flavour, mw));
  });
  afterAll(async () => {
    for (const h of harnesses.values()) await h.close();
    await idp.stop();
  });

  const tokenOf = async (who: string): Promise<string> =>
    who === 'alice' ? ALICE_KEY : idp.sign({ sub: 'alice', aud: AUD });

  test.each(['apiKeyAuth', 'oidcAuth', 'authenticate'])(
    '%s: one line is served, two lines are 400 invalid_request',
    async (name) => {
      const h = harnesses.get(name)!;
      const good = await tokenOf(name === 'oidcAuth' ? 'oidc' : 'alice');
      const one = await post(h.url, `Bearer ${good}`);
      expect(one.status).toBe(200);

      for (const lines of [
        [`Bearer ${good}`, `Bearer ${MALLORY_KEY}`],
        [`Bearer ${good}`, `Bearer ${good}`],
        [`Bearer ${good}`, ''],
      ]) {
        h.seen.length = 0;
        const two = await post(h.url, lines);
        expect(two.status).toBe(400);
        expect(two.headers['www-authenticate']).toBe(
          `Bearer resource_metadata="${PRM}", error="invalid_request"`,
        );
        expect(two.body).toEqual(REFUSED);
        expect(h.seen[0]).toMatchObject({
          auth: { outcome: 'invalid' },
          refusal: { reason: 'invalid_request', status: 400, by: name },
        });
        expect(h.seen[0]!.principal).toBeUndefined();
      }
    },
  );
});
