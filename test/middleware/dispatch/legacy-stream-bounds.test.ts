/**
 * The bounds of a legacy session's recorded subscriptions (middleware/dispatch/legacy-stream.ts): URIs per
 * session, their length in all, sessions per caller (the oldest gives way) and sessions in all (503).
 */
import { McpError } from '../../../lib/errors';
import { SessionSubscriptions } from '../../../middleware/dispatch/legacy-stream';

const LATER = Date.now() + 60_000;
const uri = (i: number, len = 20) => `docs://${String(i).padStart(len - 7, '0')}`;

function refusalOf(f: () => void): { code: number; data: unknown } {
  try {
    f();
  } catch (err) {
    expect(err).toBeInstanceOf(McpError);
    return { code: (err as McpError).code, data: (err as McpError).data };
  }
  throw new Error('not refused');
}

test('at most 1000 URIs per session', () => {
  const subs = new SessionSubscriptions(10, 10);
  for (let i = 0; i < 1000; i++) subs.add('s', 'ann', LATER, uri(i));
  expect(refusalOf(() => subs.add('s', 'ann', LATER, uri(1000)))).toMatchObject({
    code: -32602,
    data: { limit: 'session_subscriptions', max: 1000 },
  });
  subs.add('s', 'ann', LATER, uri(5)); // already there: no change
});

test('at most 128 KiB of URI characters per session; an unsubscribe gives its length back', () => {
  const subs = new SessionSubscriptions(10, 10);
  const long = (i: number) => uri(i, 2000);
  let i = 0;
  for (; i < 65; i++) subs.add('s', 'ann', LATER, long(i));
  expect(refusalOf(() => subs.add('s', 'ann', LATER, long(i)))).toMatchObject({
    data: { limit: 'session_subscription_chars', max: 128 * 1024 },
  });
  subs.remove('s', long(0));
  subs.add('s', 'ann', LATER, long(i));
  expect(subs.has('s', long(i))).toBe(true);
});

test("a caller's oldest session gives way past its share; past the total, 503 until one expires", () => {
  const subs = new SessionSubscriptions(3, 2);
  subs.add('a1', 'ann', LATER, uri(1));
  subs.add('a2', 'ann', LATER, uri(1));
  subs.add('a3', 'ann', LATER, uri(1));
  expect(subs.has('a1', uri(1))).toBe(false);
  expect(subs.has('a3', uri(1))).toBe(true);
  subs.add('b1', 'bob', Date.now() + 5, uri(1));
  expect(refusalOf(() => subs.add('c1', 'cid', LATER, uri(1)))).toMatchObject({ code: 503 });
  subs.add('c1', 'cid', LATER, uri(1), Date.now() + 10);
  expect(subs.has('c1', uri(1), Date.now() + 10)).toBe(true);
});
