/**
 * lib/session.ts: the signed legacy session id. Round trip, rotation, expiry, principal binding, the bounds on
 * what it carries, strict decoding (tables), and properties: any one-character change fails verification, and
 * neither a session id nor a requestState verifies as the other although both are signed with the same keys.
 */
import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { paramsDigest, signRequestState, verifyRequestState } from '../../lib/mrtr';
import {
  MAX_SESSION_ID_LENGTH,
  type SessionClaims,
  sessionCapabilities,
  signSession,
  verifySession,
} from '../../lib/session';

const KEY = Buffer.from('0123456789abcdef0123456789abcdef', 'utf8');
const OLD = Buffer.from('fedcba9876543210fedcba9876543210', 'utf8');
const NOW = 1_800_000_000_000;
const ALICE = '["api-key","api-key","alice"]';
const CLAIMS: SessionClaims = {
  version: '2025-11-25',
  capabilities: { elicitation: { form: {} }, roots: { listChanged: true } },
  expiresAt: NOW + 1000,
};

const reason = (
  token: unknown,
  principal = ALICE,
  keys: readonly Uint8Array[] = [KEY],
  now = NOW,
): string => {
  const r = verifySession(token, principal, keys, now);
  return r.ok ? 'ok' : r.reason;
};

/** A token whose payload is `payload` exactly, correctly signed with KEY (to test what the MAC does not catch). */
function forge(payload: unknown, prefix = 's1'): string {
  const signed = `${prefix}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}`;
  return `${signed}.${createHmac('sha256', KEY).update(signed).digest('base64url')}`;
}

describe('legacy session ids (lib)', () => {
  test('round trip: version, capabilities and expiry come back; visible ASCII, bounded', () => {
    const token = signSession(CLAIMS, ALICE, KEY);
    expect(token).toMatch(/^s1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(token.length).toBeLessThanOrEqual(MAX_SESSION_ID_LENGTH);
    expect(verifySession(token, ALICE, [KEY], NOW)).toEqual({ ok: true, ...CLAIMS });
    // The principal is not readable in the token.
    expect(Buffer.from(token.split('.')[1]!, 'base64url').toString()).not.toContain('alice');
  });

  test.each([
    ['expired at its expiry', signSession(CLAIMS, ALICE, KEY), ALICE, [KEY], NOW + 1000, 'expired'],
    [
      'another principal',
      signSession(CLAIMS, ALICE, KEY),
      '["api-key","api-key","eve"]',
      [KEY],
      NOW,
      'foreign',
    ],
    ['anonymous is a principal too', signSession(CLAIMS, ALICE, KEY), 'anonymous', [KEY], NOW, 'foreign'],
    ['another key', signSession(CLAIMS, ALICE, KEY), ALICE, [OLD], NOW, 'bad_signature'],
    ['rotation: an older key still listed', signSession(CLAIMS, ALICE, OLD), ALICE, [KEY, OLD], NOW, 'ok'],
    ['not a string', 42, ALICE, [KEY], NOW, 'malformed'],
    ['empty', '', ALICE, [KEY], NOW, 'malformed'],
    ['two parts', 's1.abc', ALICE, [KEY], NOW, 'malformed'],
    ['another prefix', 's2.abc.def', ALICE, [KEY], NOW, 'malformed'],
    ['padding', 's1.ab=c.def', ALICE, [KEY], NOW, 'malformed'],
    ['base64 not url', 's1.abc.de+f', ALICE, [KEY], NOW, 'malformed'],
    ['a space', 's1.abc.de f', ALICE, [KEY], NOW, 'malformed'],
    [
      'too long, before decoding',
      's1.' + 'a'.repeat(MAX_SESSION_ID_LENGTH) + '.b',
      ALICE,
      [KEY],
      NOW,
      'too_large',
    ],
  ])('%s', (_what, token, principal, keys, now, expected) => {
    expect(reason(token, principal as string, keys as Uint8Array[], now as number)).toBe(expected);
  });

  test.each([
    ['no purpose', { v: '2025-11-25', c: {}, u: 'x', e: NOW + 1 }],
    ['another purpose', { p: 'state', v: '2025-11-25', c: {}, u: 'x', e: NOW + 1 }],
    ['an extra member', { p: 'session', v: '2025-11-25', c: {}, u: 'x', e: NOW + 1, s: 1 }],
    [
      'a capability outside the three',
      { p: 'session', v: '2025-11-25', c: { tools: {} }, u: 'x', e: NOW + 1 },
    ],
    [
      'a deep capability',
      { p: 'session', v: '2025-11-25', c: { roots: { a: { b: 1 } } }, u: 'x', e: NOW + 1 },
    ],
    ['an empty version', { p: 'session', v: '', c: {}, u: 'x', e: NOW + 1 }],
    ['a fractional expiry', { p: 'session', v: '2025-11-25', c: {}, u: 'x', e: NOW + 0.5 }],
    ['an array', [1, 2]],
  ])('a signed payload with %s is refused as malformed', (_what, payload) => {
    expect(reason(forge(payload))).toBe('malformed');
  });

  test('what a session keeps of the declared capabilities is bounded', () => {
    const many = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`m${i}`, {}]));
    const kept = sessionCapabilities({
      elicitation: { form: {}, url: { deep: { deeper: 1 } }, odd: 'text', ['x'.repeat(40)]: {} },
      sampling: many,
      roots: true,
      tools: {},
      experimental: { big: 'x'.repeat(10_000) },
    });
    expect(kept).toEqual({
      elicitation: { form: {}, url: {} },
      sampling: Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`m${i}`, {}])),
    });
    expect(sessionCapabilities('nope')).toEqual({});
    // A member named __proto__ is data, kept as such.
    const proto = sessionCapabilities(JSON.parse('{"roots":{"__proto__":{"polluted":true}}}'));
    expect(Object.keys(proto.roots as object)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    const protoToken = signSession({ ...CLAIMS, capabilities: proto }, ALICE, KEY);
    expect(verifySession(protoToken, ALICE, [KEY], NOW)).toMatchObject({ ok: true });
    const big = signSession(
      {
        version: 'v'.repeat(500),
        capabilities: { elicitation: many, sampling: many, roots: many },
        expiresAt: NOW + 1,
      },
      ALICE,
      KEY,
    );
    expect(big.length).toBeLessThanOrEqual(MAX_SESSION_ID_LENGTH);
    expect(reason(big)).toBe('ok');
  });

  test('property: any one-character change of a session id fails verification', () => {
    const token = signSession(CLAIMS, ALICE, KEY);
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.=+/ ';
    fc.assert(
      fc.property(fc.nat({ max: token.length - 1 }), fc.constantFrom(...alphabet.split('')), (i, c) => {
        fc.pre(token[i] !== c);
        const changed = token.slice(0, i) + c + token.slice(i + 1);
        expect(reason(changed)).not.toBe('ok');
      }),
      { numRuns: 500 },
    );
  });

  test('property: round trip for any declared capabilities, version and principal', () => {
    fc.assert(
      fc.property(
        fc.jsonValue(),
        fc.string({ minLength: 1, maxLength: 32 }),
        fc.string(),
        fc.integer({ min: 1, max: 10_000_000 }),
        (declared, version, principal, ttl) => {
          const capabilities = sessionCapabilities(declared);
          const token = signSession(
            { version, capabilities: declared as never, expiresAt: NOW + ttl },
            principal,
            KEY,
          );
          expect(token.length).toBeLessThanOrEqual(MAX_SESSION_ID_LENGTH);
          expect(/^[\x21-\x7e]+$/.test(token)).toBe(true);
          expect(verifySession(token, principal, [KEY], NOW)).toEqual({
            ok: true,
            version,
            capabilities,
            expiresAt: NOW + ttl,
          });
        },
      ),
      { numRuns: 200 },
    );
  });

  test('a requestState does not verify as a session id, nor a session id as a requestState', () => {
    const binding = { principal: ALICE, method: 'tools/call', digest: paramsDigest({}) };
    const state = signRequestState({ a: 1 }, binding, KEY, NOW + 1000);
    expect(reason(state)).toBe('malformed');
    expect(reason('s1' + state.slice(2))).toBe('bad_signature');
    const session = signSession(CLAIMS, ALICE, KEY);
    const asState = verifyRequestState(session, binding, [KEY], NOW);
    expect(asState.ok).toBe(false);
    expect(verifyRequestState('v1' + session.slice(2), binding, [KEY], NOW)).toEqual({
      ok: false,
      reason: 'bad_signature',
    });
  });
});
