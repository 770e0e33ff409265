import { createHash, timingSafeEqual } from 'node:crypto';
import fc from 'fast-check';
import {
  constantTimeFind,
  hashKey,
  keyDigest,
  normalizeKeys,
  parseApiKeysEnv,
  parseKeyHash,
} from '../../lib/apikeys';
import { bearerChallenge, readBearer } from '../../lib/bearer';
import {
  canonicalResource,
  checkAudience,
  defaultRolesClaims,
  hasAnyRole,
  identityOf,
  missingScopes,
  peekJwt,
  readNames,
  scopesOf,
} from '../../lib/oidcclaims';

const ABC = 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad';

describe('hashKey / parseKeyHash', () => {
  test('hashKey is sha256: + lower-case hex of the UTF-8 bytes', () => {
    expect(hashKey('abc')).toBe(`sha256:${ABC}`);
    expect(hashKey('é')).toBe(
      'sha256:' + createHash('sha256').update(Buffer.from('é', 'utf8')).digest('hex'),
    );
  });

  test.each([
    [`sha256:${ABC}`],
    [ABC],
    [ABC.toUpperCase()],
    [`SHA256:${ABC.toUpperCase()}`],
    [`  sha256:${ABC}\n`],
  ])('accepts %j and normalizes it to lower-case bare hex', (v) => {
    const r = parseKeyHash(v);
    expect(r).toEqual({ ok: true, hex: ABC, digest: Buffer.from(ABC, 'hex') });
  });

  test.each([
    ['sha256:'],
    [ABC.slice(1)],
    [ABC + '0'],
    [`sha256:${ABC.slice(0, 63)}g`],
    [`md5:${ABC}`],
    [`sha256: ${ABC}`],
    ['my-plaintext-key'],
    [''],
    [42],
    [undefined],
  ])('refuses %j', (v) => {
    expect(parseKeyHash(v)).toEqual({ ok: false, reason: 'malformed_hash' });
  });
});

describe('constantTimeFind', () => {
  const digests = ['a', 'b', 'c', 'd', 'e'].map(keyDigest);

  function counting(): { calls: number; equal: (a: Uint8Array, b: Uint8Array) => boolean } {
    const c = {
      calls: 0,
      equal: (a: Uint8Array, b: Uint8Array): boolean => {
        c.calls++;
        return timingSafeEqual(a, b);
      },
    };
    return c;
  }

  test.each([
    ['a', 0],
    ['c', 2],
    ['e', 4],
    ['z', -1],
  ])('finds %j at %d after comparing every entry (no early exit)', (key, index) => {
    const c = counting();
    expect(constantTimeFind(keyDigest(key), digests, c.equal)).toBe(index);
    expect(c.calls).toBe(digests.length);
  });

  test('property: the index is the first match and the comparison count is always the list length', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.string(), { maxLength: 12 }), fc.string(), (keys, probe) => {
        const list = keys.map(keyDigest);
        const c = counting();
        const got = constantTimeFind(keyDigest(probe), list, c.equal);
        return got === keys.indexOf(probe) && c.calls === list.length;
      }),
    );
  });

  test('uses crypto.timingSafeEqual by default', () => {
    expect(constantTimeFind(keyDigest('d'), digests)).toBe(3);
    expect(constantTimeFind(keyDigest('x'), [])).toBe(-1);
  });
});

describe('normalizeKeys', () => {
  const good = { userId: 'alice', hash: `sha256:${ABC}`, groups: ['admins'] };

  test('normalizes hashes, dedupes groups, keeps roles and expiry', () => {
    const r = normalizeKeys([
      {
        ...good,
        hash: ABC.toUpperCase(),
        groups: ['a', 'a', 'b'],
        roles: ['r'],
        expiresAt: '2030-01-01T00:00:00Z',
      },
    ]);
    expect(r).toEqual({
      ok: true,
      keys: [
        {
          userId: 'alice',
          hex: ABC,
          digest: Buffer.from(ABC, 'hex'),
          groups: ['a', 'b'],
          roles: ['r'],
          expiresAt: Date.UTC(2030, 0, 1),
        },
      ],
    });
  });

  test.each<[string, unknown, string, string]>([
    ['not a list', { userId: 'x' }, 'not_a_list', 'keys'],
    ['an entry that is not an object', ['x'], 'not_an_object', 'keys[0]'],
    ['an empty user id', [{ ...good, userId: '' }], 'invalid_user_id', 'keys[0].userId'],
    [
      'a control character in the user id',
      [{ ...good, userId: 'a\nb' }],
      'invalid_user_id',
      'keys[0].userId',
    ],
    ['a malformed hash', [{ ...good, hash: 'hunter2-plaintext' }], 'malformed_hash', 'keys[0].hash'],
    [
      'the same key twice',
      [good, { ...good, userId: 'bob', hash: ABC.toUpperCase() }],
      'duplicate_hash',
      'keys[1].hash',
    ],
    ['no groups', [{ userId: 'a', hash: ABC }], 'missing_groups', 'keys[0].groups'],
    ['an empty group list', [{ ...good, groups: [] }], 'missing_groups', 'keys[0].groups'],
    ['groups that are not strings', [{ ...good, groups: [1] }], 'invalid_groups', 'keys[0].groups'],
    ['a bad role list', [{ ...good, roles: 'admin' }], 'invalid_roles', 'keys[0].roles'],
    ['a bad expiry', [{ ...good, expiresAt: 'soon' }], 'invalid_expiry', 'keys[0].expiresAt'],
  ])('refuses %s', (_name, list, reason, field) => {
    const r = normalizeKeys(list);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.reason).toBe(reason);
      expect(r.field).toBe(field);
    }
  });

  test('never repeats a malformed hash (it may be a plaintext key)', () => {
    const r = normalizeKeys([{ ...good, hash: 'super-secret-plaintext-key' }]);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.message).not.toContain('super-secret');
  });

  test('allowNoGroups accepts keys without groups', () => {
    const r = normalizeKeys([{ userId: 'a', hash: ABC }], { allowNoGroups: true });
    expect(r.ok && r.keys[0]!.groups).toEqual([]);
  });
});

describe('parseApiKeysEnv', () => {
  const h2 = hashKey('second');

  test('parses entries with and without the sha256: prefix and groups, separated by commas or whitespace', () => {
    const r = parseApiKeysEnv(
      ` alice:sha256:${ABC}:admins|ops ,bob:${h2.slice(7)}\n carol:${h2.toUpperCase()}`,
    );
    expect(r).toEqual({
      ok: true,
      keys: [
        { userId: 'alice', hash: `sha256:${ABC}`, groups: ['admins', 'ops'] },
        { userId: 'bob', hash: h2.slice(7) },
        { userId: 'carol', hash: `sha256:${h2.slice(7).toUpperCase()}` },
      ],
    });
  });

  test('an empty or blank string is an empty list', () => {
    expect(parseApiKeysEnv('')).toEqual({ ok: true, keys: [] });
    expect(parseApiKeysEnv(' ,\n ')).toEqual({ ok: true, keys: [] });
  });

  test.each([
    ['alice', 'malformed_entry', 1],
    [`alice:sha256:${ABC}:a:b`, 'malformed_entry', 1],
    [`:${ABC}`, 'malformed_entry', 1],
    [`ok:${ABC},alice:hunter2`, 'malformed_hash', 2],
    [`alice:${ABC}:a||b`, 'malformed_entry', 1],
    [`alice:${ABC}:`, 'malformed_entry', 1],
  ])('refuses %j (%s at entry %d) without repeating it', (v, reason, entry) => {
    const r = parseApiKeysEnv(v);
    expect(r).toMatchObject({ ok: false, reason, entry });
    if (!r.ok) expect(r.message).not.toContain('hunter2');
  });

  test('property: an entry written from parts parses back to them', () => {
    const name = fc.stringMatching(/^[A-Za-z0-9_.@-]{1,12}$/);
    fc.assert(
      fc.property(
        name,
        fc.string(),
        fc.option(fc.array(name, { minLength: 1, maxLength: 3 }), { nil: undefined }),
        (user, key, groups) => {
          const hash = hashKey(key);
          const r = parseApiKeysEnv(`${user}:${hash}${groups ? ':' + groups.join('|') : ''}`);
          const want = groups ? { userId: user, hash, groups } : { userId: user, hash };
          expect(r).toEqual({ ok: true, keys: [want] });
        },
      ),
    );
  });
});

describe('readBearer', () => {
  test.each<[string | undefined, ReturnType<typeof readBearer>]>([
    [undefined, { kind: 'none' }],
    ['', { kind: 'none' }],
    ['Bearer', { kind: 'none' }],
    ['Bearer tok', { kind: 'bearer', token: 'tok' }],
    ['bearer tok', { kind: 'bearer', token: 'tok' }],
    ['BEARER   a.b.c  ', { kind: 'bearer', token: 'a.b.c' }],
    ['Basic dXNlcjpwYXNz', { kind: 'other_scheme', scheme: 'Basic' }],
    ['Bearer a b', { kind: 'malformed' }],
    ['Bearer tök', { kind: 'malformed' }],
  ])('%j', (header, want) => {
    expect(readBearer(header)).toEqual(want);
  });

  test('a token over 16 KiB is malformed', () => {
    expect(readBearer('Bearer ' + 'x'.repeat(16 * 1024))).toEqual({
      kind: 'bearer',
      token: 'x'.repeat(16 * 1024),
    });
    expect(readBearer('Bearer ' + 'x'.repeat(16 * 1024 + 1))).toEqual({ kind: 'malformed' });
  });
});

describe('bearerChallenge', () => {
  test('parameters in a fixed order, values quoted and escaped', () => {
    expect(bearerChallenge({})).toBe('Bearer');
    expect(
      bearerChallenge({
        resourceMetadata: 'https://x/.well-known/oauth-protected-resource',
        error: 'invalid_token',
      }),
    ).toBe(
      'Bearer resource_metadata="https://x/.well-known/oauth-protected-resource", error="invalid_token"',
    );
    expect(bearerChallenge({ error: 'insufficient_scope', scope: 'a b', realm: 'r"\\' })).toBe(
      'Bearer realm="r\\"\\\\", scope="a b", error="insufficient_scope"',
    );
  });

  test('a value that would break the header is dropped', () => {
    expect(bearerChallenge({ realm: 'a\r\nSet-Cookie: x=1' })).toBe('Bearer');
  });
});

function jwt(header: object, payload: object, sig = 'c2ln'): string {
  const enc = (v: object): string => Buffer.from(JSON.stringify(v)).toString('base64url');
  return `${enc(header)}.${enc(payload)}.${sig}`;
}

describe('peekJwt', () => {
  test('decodes a compact JWS without verifying it', () => {
    expect(peekJwt(jwt({ alg: 'RS256' }, { iss: 'x' }))).toEqual({
      ok: true,
      header: { alg: 'RS256' },
      payload: { iss: 'x' },
    });
    expect(peekJwt(jwt({ alg: 'none' }, { iss: 'x' }, '')).ok).toBe(true);
  });

  test.each([
    ['an API key', 'mcp_live_0123456789abcdef'],
    ['two segments', 'a.b'],
    ['four segments', 'a.b.c.d'],
    ['a header without alg', jwt({ typ: 'JWT' }, {})],
    ['a payload that is an array', jwt({ alg: 'RS256' }, [1])],
    ['non-base64url characters', 'e30=.e30.x'],
    ['garbage', '....'],
  ])('refuses %s', (_n, token) => {
    expect(peekJwt(token)).toEqual({ ok: false, reason: 'not_a_jwt' });
  });
});

describe('audience', () => {
  test('canonicalResource lower-cases scheme and host and drops the trailing slash and fragment', () => {
    expect(canonicalResource('HTTPS://MCP.Example.com/mcp/')).toBe('https://mcp.example.com/mcp');
    expect(canonicalResource('https://mcp.example.com/')).toBe('https://mcp.example.com');
    expect(canonicalResource('https://mcp.example.com/MCP#frag')).toBe('https://mcp.example.com/MCP');
    expect(canonicalResource('urn:mcp:Server')).toBe('urn:mcp:Server');
  });

  const R = 'https://mcp.test/mcp';
  test.each<[string, object, object, boolean]>([
    ['aud string equals audience', { aud: R }, { audience: [R] }, true],
    ['aud array contains audience', { aud: ['x', R] }, { audience: [R] }, true],
    ['aud with a trailing slash', { aud: `${R}/` }, { audience: [R] }, true],
    ['aud in another case is another audience', { aud: 'HTTPS://MCP.TEST/mcp/' }, { audience: [R] }, false],
    ['another resource', { aud: 'https://other.test/mcp' }, { audience: [R] }, false],
    ['a path prefix is not enough', { aud: 'https://mcp.test/mcp/admin' }, { audience: [R] }, false],
    [
      'with audience, azp is not consulted',
      { azp: 'client', aud: 'client' },
      { audience: [R], clientId: 'client' },
      false,
    ],
    ['no aud at all', {}, { audience: [R] }, false],
    ['without audience: client id in aud', { aud: ['client'] }, { clientId: 'client' }, true],
    [
      'without audience: azp equal to the client id does not stand in for aud',
      { aud: 'account', azp: 'client' },
      { clientId: 'client' },
      false,
    ],
    ['without audience: neither', { aud: 'account', azp: 'other' }, { clientId: 'client' }, false],
  ])('%s', (_n, payload, opts, ok) => {
    expect(checkAudience(payload as Record<string, unknown>, opts).ok).toBe(ok);
  });
});

describe('claims', () => {
  const mapping = { rolesClaims: defaultRolesClaims('mcp'), groupsClaim: 'groups' };

  test('identity: sub, email, the union of role claims, groups with the slash stripped, scopes', () => {
    const r = identityOf(
      {
        sub: 'u1',
        email: 'u1@example.com',
        roles: ['a'],
        realm_access: { roles: ['b', 'a'] },
        resource_access: { mcp: { roles: ['c'] }, other: { roles: ['x'] } },
        groups: ['/admins', 'ops'],
        scope: 'openid mcp:read',
      },
      mapping,
    );
    expect(r).toEqual({
      ok: true,
      userId: 'u1',
      email: 'u1@example.com',
      roles: ['a', 'b', 'c'],
      groups: ['admins', 'ops'],
      scopes: ['openid', 'mcp:read'],
    });
  });

  test('a single string counts as one group; an absent claim is none', () => {
    expect(readNames({ groups: '/g' }, 'groups', true)).toEqual({ ok: true, values: ['g'] });
    expect(readNames({}, 'groups')).toEqual({ ok: true, values: [] });
    expect(readNames({ a: { b: ['x'] } }, ['a', 'b'])).toEqual({ ok: true, values: ['x'] });
    expect(readNames({ a: ['x'] }, ['a', 'b'])).toEqual({ ok: true, values: [] });
  });

  test('a claim of another type is an error, not "no roles"', () => {
    expect(identityOf({ sub: 'u', groups: 7 }, mapping)).toEqual({
      ok: false,
      reason: 'invalid_claim',
      claim: 'groups',
    });
    expect(identityOf({ sub: 'u', realm_access: { roles: [1] } }, mapping)).toEqual({
      ok: false,
      reason: 'invalid_claim',
      claim: 'realm_access.roles',
    });
    expect(identityOf({ groups: [] }, mapping)).toEqual({
      ok: false,
      reason: 'missing_subject',
      claim: 'sub',
    });
  });

  test('a custom groups claim replaces the default', () => {
    const r = identityOf(
      { sub: 'u', groups: ['ignored'], teams: ['t'] },
      { rolesClaims: [], groupsClaim: 'teams' },
    );
    expect(r).toMatchObject({ ok: true, groups: ['t'], roles: [] });
  });

  test('requiredRoles is any-of over roles and groups; nothing required passes', () => {
    expect(hasAnyRole({ roles: ['r'], groups: [] }, ['x', 'r'])).toBe(true);
    expect(hasAnyRole({ roles: [], groups: ['g'] }, ['g'])).toBe(true);
    expect(hasAnyRole({ roles: ['r'], groups: ['g'] }, ['x'])).toBe(false);
    expect(hasAnyRole({ roles: [], groups: [] }, [])).toBe(true);
  });

  test('scopes: scope string, else scp; requiredScopes is all-of', () => {
    expect(scopesOf({ scope: 'a  b' })).toEqual(['a', 'b']);
    expect(scopesOf({ scp: ['a', 2, 'b'] })).toEqual(['a', 'b']);
    expect(scopesOf({ scp: 'a b' })).toEqual(['a', 'b']);
    expect(missingScopes(['a'], ['a', 'b'])).toEqual(['b']);
  });
});
