/** The forwarded session token: signed, bound to the principal, expiring, bounded; any changed character fails. */
import fc from 'fast-check';
import {
  MAX_FORWARD_SESSION_LENGTH,
  signForwardSession,
  verifyForwardSession,
} from '../../lib/forward-session';
import { signSession, verifySession } from '../../lib/session';

const KEY = Buffer.alloc(32, 7);
const OLD = Buffer.alloc(32, 9);
const NOW = 1_800_000_000_000;
const LATER = NOW + 60_000;

describe('forwarded session tokens', () => {
  test('a token verifies for its principal with the server id it carries, under any of the keys', () => {
    const token = signForwardSession('upstream-123', 'ann', LATER, OLD)!;
    expect(token).toMatch(/^f1\.[\w-]+\.[\w-]+$/);
    expect(verifyForwardSession(token, 'ann', [KEY, OLD], NOW)).toEqual({
      ok: true,
      serverId: 'upstream-123',
      expiresAt: LATER,
    });
    expect(verifyForwardSession(token, 'ann', [KEY], NOW)).toEqual({ ok: false, reason: 'bad_signature' });
  });

  test('another principal: foreign; at the expiry: expired', () => {
    const token = signForwardSession('upstream-123', 'ann', LATER, KEY)!;
    expect(verifyForwardSession(token, 'bob', [KEY], NOW)).toEqual({ ok: false, reason: 'foreign' });
    expect(verifyForwardSession(token, 'ann', [KEY], LATER)).toEqual({ ok: false, reason: 'expired' });
  });

  test('a server id that is not 1-256 visible ASCII characters is not wrapped', () => {
    for (const id of ['', 'a b', 'é', 'x'.repeat(257)])
      expect(signForwardSession(id, 'ann', LATER, KEY)).toBeUndefined();
    expect(signForwardSession('x'.repeat(256), 'ann', LATER, KEY)!.length).toBeLessThanOrEqual(
      MAX_FORWARD_SESSION_LENGTH,
    );
  });

  test('a value over the bound is refused before anything is decoded; other shapes are malformed', () => {
    const token = signForwardSession('upstream-123', 'ann', LATER, KEY)!;
    expect(verifyForwardSession(token + '.'.repeat(MAX_FORWARD_SESSION_LENGTH), 'ann', [KEY], NOW)).toEqual({
      ok: false,
      reason: 'too_large',
    });
    for (const v of [undefined, ['a'], '', 'f1', 'f1.x', 'upstream-123', token.replace(/^f1/, 's1')])
      expect(verifyForwardSession(v, 'ann', [KEY], NOW)).toMatchObject({ ok: false, reason: 'malformed' });
  });

  test('neither a dispatch session nor a forwarded session verifies as the other, under the same key', () => {
    const forwarded = signForwardSession('upstream-123', 'ann', LATER, KEY)!;
    const dispatch = signSession({ version: '2025-11-25', capabilities: {}, expiresAt: LATER }, 'ann', KEY);
    expect(verifySession(forwarded, 'ann', [KEY], NOW).ok).toBe(false);
    expect(verifyForwardSession(dispatch, 'ann', [KEY], NOW).ok).toBe(false);
  });

  test('any changed character fails', () => {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.';
    fc.assert(
      fc.property(
        fc.stringMatching(/^[!-~]{1,64}$/),
        fc.nat(),
        fc.constantFrom(...alphabet),
        (serverId, at, c) => {
          const token = signForwardSession(serverId, 'ann', LATER, KEY)!;
          const i = at % token.length;
          fc.pre(token[i] !== c);
          const changed = token.slice(0, i) + c + token.slice(i + 1);
          expect(verifyForwardSession(changed, 'ann', [KEY], NOW).ok).toBe(false);
        },
      ),
      { numRuns: 500 },
    );
  });
});
