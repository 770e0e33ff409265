/**
 * The span context an input-required round signs into its `requestState` (lib/mrtr.ts): carried canonical and
 * bounded, returned by verification, dropped when it does not parse, and covered by the MAC like the rest.
 */
import { paramsDigest, signRequestState, verifyRequestState } from '../../lib/mrtr';

const KEY = new Uint8Array(32).fill(7);
const binding = { principal: 'apikey:alice', method: 'tools/call', digest: paramsDigest({ name: 'x' }) };
const TP = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
const later = Date.now() + 60_000;

function payloadOf(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as Record<
    string,
    unknown
  >;
}

describe('requestState: the minting round’s span context', () => {
  it('travels in the signed payload and comes back from verification', () => {
    const token = signRequestState({ step: 1 }, binding, KEY, later, TP);
    expect(payloadOf(token).t).toBe(TP);
    const v = verifyRequestState(token, binding, [KEY], Date.now());
    expect(v).toEqual({ ok: true, state: { step: 1 }, expiresAt: Math.floor(later), trace: TP });
  });

  it('is absent when the round was not traced (the token is as before)', () => {
    const token = signRequestState(undefined, binding, KEY, later);
    expect(payloadOf(token)).not.toHaveProperty('t');
    const v = verifyRequestState(token, binding, [KEY], Date.now());
    expect(v.ok).toBe(true);
    expect(v.ok && 'trace' in v).toBe(false);
  });

  it('is re-formatted canonically (version 00, 55 characters) and dropped when it does not parse', () => {
    const later1 = `01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-${'x'.repeat(300)}`;
    const t1 = signRequestState(undefined, binding, KEY, later, later1);
    expect(payloadOf(t1).t).toBe(TP);
    for (const bad of ['', 'not-a-traceparent', `00-${'0'.repeat(32)}-00f067aa0ba902b7-01`, TP + 'x']) {
      const t = signRequestState(undefined, binding, KEY, later, bad);
      expect(payloadOf(t)).not.toHaveProperty('t');
    }
  });

  it('cannot be changed by the client: the MAC covers it', () => {
    const token = signRequestState(undefined, binding, KEY, later, TP);
    const [prefix, body] = token.split('.');
    const forged = { ...payloadOf(token), t: '00-11111111111111111111111111111111-2222222222222222-01' };
    const swapped = `${prefix}.${Buffer.from(JSON.stringify(forged)).toString('base64url')}.${token.split('.')[2]}`;
    expect(body).not.toBe(swapped.split('.')[1]);
    expect(verifyRequestState(swapped, binding, [KEY], Date.now())).toEqual({
      ok: false,
      reason: 'bad_signature',
    });
  });
});
