/**
 * principalKey: the per-caller key of the limits, the listen-stream slots and the request state's binding is where the principal came from
 * and its id. The same id from two sources is two keys, no id can spell another source's key, and requests
 * without a principal share one key that no principal has.
 */
import fc from 'fast-check';
import { paramsDigest, signRequestState, verifyRequestState } from '../../lib/mrtr';
import { ANONYMOUS_KEY, principalKey, principalSource } from '../../lib/principal';
import type { Principal } from '../../core/types';

const p = (userId: string, method: string, source?: string): Principal => ({
  userId,
  groups: [],
  roles: [],
  method,
  ...(source === undefined ? {} : { source }),
});

describe('principalKey', () => {
  test.each([
    ['API key alice', p('alice', 'api-key', 'api-key'), '["api-key","api-key","alice"]'],
    ['OIDC alice', p('alice', 'oidc', 'https://idp.example'), '["oidc","https://idp.example","alice"]'],
    ['no source: the method stands in', p('alice', 'mtls'), '["mtls","mtls","alice"]'],
    [
      'an id that is literally anonymous',
      p('anonymous', 'api-key', 'api-key'),
      '["api-key","api-key","anonymous"]',
    ],
    ['no principal', undefined, ANONYMOUS_KEY],
    ['an empty id', p('', 'api-key', 'api-key'), ANONYMOUS_KEY],
    ['an id that is not a string', { ...p('x', 'api-key'), userId: 7 as never }, ANONYMOUS_KEY],
  ])('%s', (_what, principal, key) => {
    expect(principalKey(principal)).toBe(key);
  });

  test('the same id from two sources, or from two issuers, is two keys', () => {
    const keys = new Set([
      principalKey(p('alice', 'api-key', 'api-key')),
      principalKey(p('alice', 'oidc', 'https://a.example')),
      principalKey(p('alice', 'oidc', 'https://b.example')),
      principalKey(p('alice', 'custom')),
    ]);
    expect(keys.size).toBe(4);
  });

  test('an id cannot forge the key of another source', () => {
    // What a naive `${source}:${id}` join would confuse.
    expect(principalKey(p('api-key:alice', 'oidc', 'https://idp'))).not.toBe(
      principalKey(p('alice', 'api-key', 'api-key')),
    );
    expect(principalKey(p('alice","api-key', 'api-key', 'api-key'))).not.toBe(
      principalKey(p('alice', 'api-key', 'api-key","api-key')),
    );
  });

  test('distinct (method, source, id) triples never share a key', () => {
    const part = fc.string({
      minLength: 1,
      maxLength: 8,
      unit: fc.constantFrom('a', ':', '"', ',', '\\', '[', ' '),
    });
    fc.assert(
      fc.property(fc.tuple(part, part, part), fc.tuple(part, part, part), (a, b) => {
        const same = a[0] === b[0] && a[1] === b[1] && a[2] === b[2];
        expect(principalKey(p(a[2], a[0], a[1])) === principalKey(p(b[2], b[0], b[1]))).toBe(same);
      }),
    );
  });
});

describe('principalSource', () => {
  test.each([
    ['a source', p('alice', 'oidc', 'https://idp.example'), 'https://idp.example'],
    ['no source: the method', p('alice', 'mtls'), 'mtls'],
    ['an empty source: the method', p('alice', 'mtls', ''), 'mtls'],
    ['no principal', undefined, ''],
  ])('%s', (_what, principal, source) => {
    expect(principalSource(principal)).toBe(source);
  });
});

describe('principalKey of the same object twice', () => {
  test('a frozen principal keeps its key', () => {
    const frozen = Object.freeze(p('alice', 'api-key', 'api-key'));
    expect(principalKey(frozen)).toBe('["api-key","api-key","alice"]');
    expect(principalKey(frozen)).toBe('["api-key","api-key","alice"]');
  });

  test('a principal that is not frozen is keyed by what it holds now', () => {
    const open = p('alice', 'api-key', 'api-key');
    expect(principalKey(open)).toBe('["api-key","api-key","alice"]');
    (open as { userId: string }).userId = 'bob';
    expect(principalKey(open)).toBe('["api-key","api-key","bob"]');
  });
});

describe('a request state is bound to where its principal came from', () => {
  test('state minted for alice of one issuer does not verify for alice of another', () => {
    const key = Buffer.from('0123456789abcdef0123456789abcdef', 'utf8');
    const now = 1_800_000_000_000;
    const bind = (principal: Principal) => ({
      principal: principalKey(principal),
      method: 'tools/call',
      digest: paramsDigest({ name: 't' }),
    });
    const aliceOfA = p('alice', 'oidc', 'https://a.example');
    const aliceOfB = p('alice', 'oidc', 'https://b.example');
    const token = signRequestState({ step: 1 }, bind(aliceOfA), key, now + 60_000);
    expect(verifyRequestState(token, bind(aliceOfA), [key], now).ok).toBe(true);
    expect(verifyRequestState(token, bind(aliceOfB), [key], now)).toEqual({
      ok: false,
      reason: 'wrong_principal',
    });
  });
});
