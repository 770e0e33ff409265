/**
 * Logs cannot be forged: every operational log line the library writes that carries request data (an unverified
 * token's header and claims, an Authorization scheme, a method name, a handler's error message) holds no C1
 * controls, bidi controls, U+2028/U+2029 or other line breaks, on a real winston logger with the JSON format
 * (which escapes C0 controls only). Over HTTP, on bare node:http and Express.
 */
import request from 'supertest';
import { apiKeyAuth } from '../../middleware/api-key-auth/index';
import { classifyRevision } from '../../middleware/classify-revision/index';
import { dispatch } from '../../middleware/dispatch/index';
import { oidcAuth } from '../../middleware/oidc-auth/index';
import { parse } from '../../middleware/parse/index';
import { TestIssuer } from '../../testing/index';
import { FLAVOURS, PING, serve } from '../support/auth-harness';
import { stack } from '../support/dispatch-harness';
import { FORGED, forgedIn, jsonLogger } from '../support/json-logger';

const AUD = 'https://mcp.test/mcp';
const PRM = 'https://mcp.test/.well-known/oauth-protected-resource/mcp';
const b64 = (v: object) => Buffer.from(JSON.stringify(v)).toString('base64url');

/** The records that start with `prefix`: at least one, and every line of the log free of forgery material. */
function cleanRecords(log: ReturnType<typeof jsonLogger>, prefix: string): Record<string, unknown>[] {
  const found = log.records(prefix);
  expect(found.length).toBeGreaterThan(0);
  expect(log.lines.map(forgedIn).filter((x) => x !== undefined)).toEqual([]);
  return found;
}

describe.each(FLAVOURS)('on %s', (flavour) => {
  test('oidcAuth: invalid credential, from an unverified token with forged kid, alg and sub', async () => {
    const idp = await TestIssuer.start({ path: '/realms/forgery' });
    const log = jsonLogger();
    const mw = oidcAuth({ issuer: idp.url, audience: AUD, resourceMetadataUrl: PRM, logger: log.logger });
    await mw.ready;
    const h = await serve(flavour, mw);
    try {
      const token = [
        b64({ alg: 'RS256', typ: 'JWT', kid: `kid${FORGED}1` }),
        b64({ iss: idp.url, aud: AUD, sub: `alice${FORGED}admin`, exp: Math.floor(Date.now() / 1000) + 60 }),
        Buffer.from('not a signature').toString('base64url'),
      ].join('.');
      const r = await request(h.url).post('/mcp').set('Authorization', `Bearer ${token}`).send(PING);
      expect(r.status).toBe(401);
      const [record] = cleanRecords(log, 'oidcAuth: invalid credential');
      expect(record).toMatchObject({ outcome: 'invalid', kid: expect.stringMatching(/^kid.*1$/) });
      expect(record!.sub).toMatch(/^alice.*admin$/);
    } finally {
      await h.close();
      await idp.stop();
    }
  });

  test('apiKeyAuth: no bearer credential, with a forged Authorization scheme (latin-1 C1 bytes)', async () => {
    const log = jsonLogger();
    const mw = apiKeyAuth({
      keys: [{ userId: 'u', hash: 'sha256:' + 'ab'.repeat(32), groups: ['users'] }],
      logger: log.logger,
    });
    const h = await serve(flavour, mw);
    try {
      const r = await request(h.url)
        .post('/mcp')
        .set('Authorization', 'Ba\u0085si\u009bc\u00ad x')
        .send(PING);
      expect(r.status).toBe(401);
      const [record] = cleanRecords(log, 'apiKeyAuth: no bearer credential');
      expect(record).toMatchObject({ outcome: 'missing', scheme: expect.stringMatching(/^Ba/) });
    } finally {
      await h.close();
    }
  });

  test('dispatch: a failing handler and notification handler, named and failing with forged text', async () => {
    const log = jsonLogger();
    const member = `run${FORGED}`;
    const s = await stack(flavour, [
      parse(),
      classifyRevision(),
      dispatch({
        anonymous: true,
        serverInfo: { name: 'forgery', version: '1.0.0' },
        logger: log.logger,
        handlers: {
          x: {
            [member]: (params: Record<string, unknown>) => {
              throw new Error(`no such record: ${String(params.name)}`);
            },
          },
          notifications: {
            [member]: () => {
              throw new Error(`notification failed${FORGED}`);
            },
          },
        },
      }),
    ]);
    try {
      const c = s.client({ era: 'legacy' });
      const r = await c.request(`x/${member}`, { name: `bob${FORGED}` });
      expect(r.body.error?.code).toBe(-32603);
      await c.notify(`notifications/${member}`);
      // The notification is answered 202 before its handler runs: wait for the line.
      for (let i = 0; i < 50 && log.records('dispatch: notification handler').length === 0; i++)
        await new Promise((res) => setTimeout(res, 10));
      const [failed] = cleanRecords(log, 'dispatch: handler for x/run');
      expect((failed!.error as { message: string }).message).toMatch(/^no such record: bob/);
      cleanRecords(log, 'dispatch: notification handler for notifications/run');
    } finally {
      await s.close();
    }
  });
});
