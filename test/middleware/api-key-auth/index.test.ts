import request from 'supertest';
import { hashKey } from '../../../lib/apikeys';
import { apiKeyAuth } from '../../../middleware/api-key-auth/index';
import { FLAVOURS, type Harness, PING, memoryLogger, serve } from '../../support/auth-harness';

const ALICE_KEY = 'alice-key-0123456789abcdef';
const BOB_KEY = 'bob-key-0123456789abcdef01';
const OLD_KEY = 'old-key-0123456789abcdef012';
const PRM = 'https://mcp.test/.well-known/oauth-protected-resource/mcp';

const keys = [
  { userId: 'alice', hash: hashKey(ALICE_KEY), groups: ['admins', 'ops'], roles: ['writer'] },
  { userId: 'bob', hash: hashKey(BOB_KEY).slice('sha256:'.length).toUpperCase(), groups: ['readers'] },
  { userId: 'old', hash: hashKey(OLD_KEY), groups: ['readers'], expiresAt: Date.now() - 1000 },
];

describe.each(FLAVOURS)('apiKeyAuth on %s', (flavour) => {
  let h: Harness;
  const logger = memoryLogger();
  beforeAll(async () => {
    h = await serve(flavour, apiKeyAuth({ keys, resourceMetadataUrl: PRM, logger }));
  });
  afterAll(() => h.close());
  beforeEach(() => {
    h.seen.length = 0;
    logger.entries.length = 0;
  });

  test('a valid key passes with its principal', async () => {
    const r = await request(h.url).post('/mcp').set('Authorization', `Bearer ${ALICE_KEY}`).send(PING);
    expect(r.status).toBe(200);
    expect(r.body.principal).toEqual({
      userId: 'alice',
      groups: ['admins', 'ops'],
      roles: ['writer'],
      method: 'api-key',
      source: 'api-key',
    });
    expect(r.body.auth).toEqual({ outcome: 'ok', method: 'api-key' });
  });

  test('a hash written as upper-case bare hex works, and the scheme is case-insensitive', async () => {
    const r = await request(h.url).post('/mcp').set('Authorization', `bearer ${BOB_KEY}`).send(PING);
    expect(r.status).toBe(200);
    expect(r.body.principal.userId).toBe('bob');
  });

  test('no credential → 401 with a bare challenge naming the metadata URL, and a JSON-RPC error', async () => {
    const r = await request(h.url).post('/mcp').send(PING);
    expect(r.status).toBe(401);
    expect(r.headers['www-authenticate']).toBe(`Bearer resource_metadata="${PRM}"`);
    expect(r.body).toEqual({ jsonrpc: '2.0', error: { code: 401, message: 'Authentication required' } });
    expect(h.seen[0]!.auth).toEqual({ outcome: 'missing' });
    expect(h.seen[0]!.refusal).toEqual({ reason: 'unauthorized', code: 401, status: 401, by: 'apiKeyAuth' });
    expect(h.seen[0]!.principal).toBeUndefined();
  });

  test('a wrong key → 401 invalid_token; the answer says only the outcome', async () => {
    const r = await request(h.url).post('/mcp').set('Authorization', 'Bearer not-a-key').send(PING);
    expect(r.status).toBe(401);
    expect(r.headers['www-authenticate']).toBe(`Bearer resource_metadata="${PRM}", error="invalid_token"`);
    expect(r.body).toEqual({ jsonrpc: '2.0', error: { code: 401, message: 'Invalid token' } });
    expect(h.seen[0]!.auth).toEqual({ outcome: 'invalid' });
  });

  test('an expired key → 401 Token expired, logged with the user', async () => {
    const r = await request(h.url).post('/mcp').set('Authorization', `Bearer ${OLD_KEY}`).send(PING);
    expect(r.status).toBe(401);
    expect(r.body.error.message).toBe('Token expired');
    expect(r.headers['www-authenticate']).toContain('error="invalid_token"');
    expect(h.seen[0]!.auth).toEqual({ outcome: 'expired', method: 'api-key' });
    expect(logger.text()).toContain('"userId":"old"');
  });

  test('a key in the query string is ignored', async () => {
    const r = await request(h.url).post(`/mcp?access_token=${ALICE_KEY}&api_key=${ALICE_KEY}`).send(PING);
    expect(r.status).toBe(401);
    expect(r.body.error.message).toBe('Authentication required');
  });

  test('another scheme is treated as no credential', async () => {
    const r = await request(h.url)
      .post('/mcp')
      .set('Authorization', `Basic ${Buffer.from('alice:' + ALICE_KEY).toString('base64')}`)
      .send(PING);
    expect(r.status).toBe(401);
    expect(r.headers['www-authenticate']).toBe(`Bearer resource_metadata="${PRM}"`);
  });

  test('a Bearer value with two tokens is invalid', async () => {
    const r = await request(h.url).post('/mcp').set('Authorization', `Bearer ${ALICE_KEY} extra`).send(PING);
    expect(r.status).toBe(401);
    expect(r.body.error.message).toBe('Invalid token');
  });

  test('the key is not in the response or the log', async () => {
    const r = await request(h.url).post('/mcp').set('Authorization', 'Bearer wrong-secret-value').send(PING);
    expect(r.text).not.toContain('wrong-secret-value');
    expect(logger.text()).not.toContain('wrong-secret-value');
  });

  test('GET is authenticated too; OPTIONS (CORS preflight) passes', async () => {
    expect((await request(h.url).get('/mcp')).status).toBe(401);
    expect((await request(h.url).options('/mcp')).status).toBe(200);
  });
});

describe('apiKeyAuth options', () => {
  const good = { userId: 'a', hash: hashKey('k'), groups: ['g'] };

  test('an empty key list throws unless insecureAllowEmpty is set', () => {
    expect(() => apiKeyAuth({ keys: [] })).toThrow(/empty list.*insecureAllowEmpty/);
    expect(() => apiKeyAuth({} as never)).toThrow(/"keys" is required/);
  });

  test.each(FLAVOURS)(
    'insecureAllowEmpty: requests pass without a principal (%s), with a warning at start',
    async (flavour) => {
      const logger = memoryLogger();
      const h = await serve(flavour, apiKeyAuth({ keys: [], insecureAllowEmpty: true, logger }));
      try {
        const r = await request(h.url).post('/mcp').send(PING);
        expect(r.status).toBe(200);
        expect(r.body.principal).toBeNull();
        expect(logger.entries.map((e) => e.level)).toEqual(['warn']);
      } finally {
        await h.close();
      }
    },
  );

  test('a malformed hash throws without showing it', () => {
    expect(() => apiKeyAuth({ keys: [{ ...good, hash: 'my-plaintext-key' }] })).toThrow(/keys\[0\]\.hash/);
    expect(() => apiKeyAuth({ keys: [{ ...good, hash: 'my-plaintext-key' }] })).not.toThrow(
      /my-plaintext-key/,
    );
  });

  test('duplicates, missing groups, bad types and unknown options throw', () => {
    expect(() => apiKeyAuth({ keys: [good, { ...good, userId: 'b' }] })).toThrow(
      /keys\[1\]\.hash.*same key as keys\[0\]/,
    );
    expect(() => apiKeyAuth({ keys: [{ userId: 'a', hash: hashKey('k') }] })).toThrow(/keys\[0\]\.groups/);
    expect(() =>
      apiKeyAuth({ keys: [{ userId: 'a', hash: hashKey('k') }], allowKeysWithoutGroups: true }),
    ).not.toThrow();
    expect(() => apiKeyAuth({ keys: [good], allowKeysWithoutGroups: 'yes' as never })).toThrow(
      /allowKeysWithoutGroups/,
    );
    expect(() => apiKeyAuth({ keys: [good], kyes: [] } as never)).toThrow(/unknown option "kyes"/);
    expect(() => apiKeyAuth({ keys: [good], resourceMetadataUrl: 'https://x/"\r\n' })).toThrow(
      /resourceMetadataUrl/,
    );
    expect(() => apiKeyAuth(undefined as never)).toThrow(TypeError);
  });

  test('a misspelt option is refused naming the right one', () => {
    expect(() => apiKeyAuth({ keys: [good], allowKeysWithoutGroup: true } as never)).toThrow(
      /apiKeyAuth: unknown option "allowKeysWithoutGroup"; did you mean "allowKeysWithoutGroups"\?/,
    );
    expect(() => apiKeyAuth({ keys: [good], insecureAllowEmty: true } as never)).toThrow(
      /did you mean "insecureAllowEmpty"\?/,
    );
    expect(() => apiKeyAuth({ key: [good] } as never)).toThrow(/did you mean "keys"\?/);
  });

  test('the middleware is also an authenticator', async () => {
    const mw = apiKeyAuth({ keys: [good] });
    expect(mw.method).toBe('api-key');
    expect(mw.by).toBe('apiKeyAuth');
    await expect(mw.ready).resolves.toBeUndefined();
    expect(await mw.check('k', {} as never)).toMatchObject({ kind: 'ok', principal: { userId: 'a' } });
    expect(await mw.check('other', {} as never)).toEqual({ kind: 'pass', why: 'unknown_key' });
  });
});
