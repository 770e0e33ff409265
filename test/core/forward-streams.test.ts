/**
 * The forwarding engine's bound on open streams: each `subscriptions/listen` (and each session GET stream)
 * holds a connection to the server for as long as the client keeps it, so a caller gets at most
 * `maxStreamsPerPrincipal` (429, the bound in `data`) and the engine at most `maxStreams` (503). A stream that
 * ends gives its room back.
 */
import { resolveForwardOptions } from '../../core/forward';
import type { Middleware } from '../../core/types';
import { type Harness, event, sse, startHarness } from './forward-harness';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** Sets the principal from `X-User` (the harness has no authentication). */
const asUser: Middleware = (req, _res, next) => {
  const user = req.headers['x-user'];
  if (typeof user === 'string') {
    req.locals ??= {};
    req.locals.principal = { userId: user, groups: [], roles: [], method: 'test' };
  }
  next();
};

const listen = (id: number) => ({ jsonrpc: '2.0', id, method: 'subscriptions/listen', params: {} });

/** Opens a stream and waits for its first event, so it is surely held. */
async function open(harness: Harness, id: number, user: string, ack: () => void) {
  const ctrl = new AbortController();
  const res = await fetch(harness.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'x-user': user,
    },
    body: JSON.stringify(listen(id)),
    signal: ctrl.signal,
  });
  ack();
  const reader = res.body!.getReader();
  await reader.read();
  return { res, close: () => ctrl.abort() };
}

function streamingServer() {
  const streams: ReturnType<typeof sse>[] = [];
  const send = async () => {
    const s = sse();
    streams.push(s);
    s.push(event({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' }));
    return s.response;
  };
  return { streams, send };
}

test('a caller past maxStreamsPerPrincipal gets 429 with the bound; another caller still opens one', async () => {
  const server = streamingServer();
  h = await startHarness(server.send, { maxStreamsPerPrincipal: 2 }, { before: [asUser] });
  const a1 = await open(h, 1, 'ann', () => {});
  const a2 = await open(h, 2, 'ann', () => {});
  const refused = await h.post(listen(3), { 'x-user': 'ann' });
  expect(refused.status).toBe(429);
  expect(await refused.json()).toMatchObject({
    id: 3,
    error: { code: 429, data: { limit: 'streams_per_principal', max: 2 } },
  });
  expect(server.streams).toHaveLength(2);
  const b1 = await open(h, 4, 'bob', () => {});
  expect(b1.res.status).toBe(200);
  for (const s of [a1, a2, b1]) s.close();
});

test('past maxStreams, 503; a stream that ends gives its room back', async () => {
  const server = streamingServer();
  h = await startHarness(server.send, { maxStreams: 1 }, { before: [asUser] });
  const first = await open(h, 1, 'ann', () => {});
  const full = await h.post(listen(2), { 'x-user': 'bob' });
  expect(full.status).toBe(503);
  expect(h.audits.some((a) => a.reason === 'unavailable')).toBe(true);
  first.close();
  // The room comes back once the engine has seen the stream end.
  for (let i = 0; i < 200; i++) {
    const again = await h.post(listen(3 + i), { 'x-user': 'bob' }).catch(() => undefined);
    if (again?.status === 200) {
      await again.body?.cancel();
      return;
    }
    await again?.body?.cancel();
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('the room never came back');
});

test('the bounds are options: refused when not integers in range', () => {
  expect(() => resolveForwardOptions('proxy', { maxStreams: -1 })).toThrow(/maxStreams/);
  expect(() => resolveForwardOptions('proxy', { maxStreamsPerPrincipal: 1.5 })).toThrow(
    /maxStreamsPerPrincipal/,
  );
  expect(resolveForwardOptions('proxy', {})).toMatchObject({ maxStreams: 1000, maxStreamsPerPrincipal: 10 });
});
