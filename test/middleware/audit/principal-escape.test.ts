/**
 * The audit names who really called: OIDC subjects that differ from `victim` only by an edge space, a NUL, a
 * left-to-right mark or a right-to-left override are recorded as themselves, escaped, never as `victim`. Real
 * issuer (TestIssuer), real HTTP, the audit's own record builder; and the auth log line shows them the same way.
 */
import request from 'supertest';
import { audit } from '../../../middleware/audit/index';
import { oidcAuth } from '../../../middleware/oidc-auth/index';
import type { Middleware } from '../../../core/types';
import { TestIssuer } from '../../../testing/index';
import { memoryLogger, until } from '../../support/auth-harness';
import { run } from '../../support/observe-harness';

type Meta = Record<string, unknown>;
const AUD = 'https://mcp.test/mcp';

const SUBJECTS: [string, string][] = [
  ['victim', 'victim'],
  [' victim', '\\u{0020}victim'],
  ['victim ', 'victim\\u{0020}'],
  ['\u0000victim', '\\u{0000}victim'],
  ['victim\u0000', 'victim\\u{0000}'],
  ['victim\u200e', 'victim\\u{200E}'],
  ['victim\u202e', 'victim\\u{202E}'],
  ['\u202evictim', '\\u{202E}victim'],
];

const answer: Middleware = (_req, res) => {
  res.statusCode = 200;
  res.setHeader('Content-Type', 'application/json');
  res.end('{"jsonrpc":"2.0","id":1,"result":{}}');
};

describe('audit principal: an OIDC subject is recorded as itself', () => {
  let idp: TestIssuer;
  const records: Meta[] = [];
  const authLog = memoryLogger();
  let allowed: ReturnType<typeof run>;
  let needsRole: ReturnType<typeof run>;

  beforeAll(async () => {
    idp = await TestIssuer.start({ path: '/realms/escape' });
    const logger = { log: (_l: string, _m: string, meta: Meta) => void records.push(meta) };
    const oidc = oidcAuth({ issuer: idp.url, audience: AUD, logger: authLog });
    const strict = oidcAuth({ issuer: idp.url, audience: AUD, requiredRoles: ['admin'], logger: authLog });
    await Promise.all([oidc.ready, strict.ready]);
    allowed = run([audit({ logger }), oidc, answer]);
    needsRole = run([audit({ logger }), strict, answer]);
  });
  afterAll(() => idp.stop());
  beforeEach(() => {
    records.length = 0;
    authLog.entries.length = 0;
  });

  const call = async (app: ReturnType<typeof run>, sub: string) =>
    request(app)
      .post('/mcp')
      .set('Authorization', `Bearer ${await idp.sign({ sub, aud: AUD })}`)
      .send({ jsonrpc: '2.0', id: 1, method: 'ping' });

  test('each subject gets a record of its own, and only victim reads as victim', async () => {
    for (const [sub] of SUBJECTS) expect((await call(allowed, sub)).status).toBe(200);
    await until(() => records.length === SUBJECTS.length);
    const shown = records.map((r) => r.principal);
    expect(shown).toEqual(SUBJECTS.map(([, escaped]) => escaped));
    expect(new Set(shown).size).toBe(SUBJECTS.length);
    expect(shown.filter((p) => p === 'victim')).toHaveLength(1);
    for (const r of records) expect(r.principal_source).toBe(idp.url);
  });

  test('a refused subject is logged escaped too, so the log line names who tried', async () => {
    for (const [sub] of SUBJECTS) expect((await call(needsRole, sub)).status).toBe(403);
    const subs = authLog.entries.map((e) => e.meta.sub);
    expect(subs).toEqual(SUBJECTS.map(([, escaped]) => escaped));
    await until(() => records.length === SUBJECTS.length);
    // A refusal after the token was verified: the audit names no principal, the log names the subject.
    for (const r of records) expect(r).toMatchObject({ principal: '', auth: 'forbidden' });
  });
});
