/**
 * One caller cannot lock others out of `subscriptions/listen`: each principal holds at most
 * `maxListenStreamsPerPrincipal` open streams (429 beyond, the cap in `data`), whatever the mount order of
 * `limits()`, so the server-wide `maxListenStreams` is never one caller's to fill. A stream's slot comes back
 * when its client goes away; callers without a principal share one slot key. Bare node:http and Express 5,
 * real API-key authentication.
 */
import { apiKeyAuth, hashKey } from '../../middleware/api-key-auth/index';
import { type DispatchMiddleware, type DispatchOptions, dispatch } from '../../middleware/dispatch/index';
import { limits } from '../../middleware/limits/index';
import { parse } from '../../middleware/parse/index';
import type { Middleware, RequestLocals } from '../../core/types';
import { ToolRegistry } from '../../handlers/tools/index';
import { PLATFORMS, type Platform, type Stack, stack } from '../support/dispatch-harness';
import { type Stream, envelope, modernHeaders, openStream, until } from '../support/streaming';

const quiet = { error: () => {}, warn: () => {} };
const KEYS = { alice: 'alice-key-0123456789', bob: 'bob-key-0123456789' } as const;
type User = keyof typeof KEYS | 'anonymous';

const auth = () =>
  apiKeyAuth({
    keys: [
      { userId: 'alice', hash: hashKey(KEYS.alice), groups: ['users'] },
      { userId: 'bob', hash: hashKey(KEYS.bob), groups: ['users'] },
    ],
    logger: quiet,
  });

/** Where `limits()` sits: before `parse()` it cannot tell a listen stream from a call. */
const ORDERS = {
  'no limits': (): Middleware[] => [auth(), parse()],
  'limits after parse': (): Middleware[] => [
    auth(),
    parse(),
    limits({ perUserConcurrency: 100, logger: quiet }),
  ],
  'limits before parse': (): Middleware[] => [
    auth(),
    limits({ perUserConcurrency: 100, logger: quiet }),
    parse(),
  ],
};
type Order = keyof typeof ORDERS;

describe.each(PLATFORMS)('on %s', (platform: Platform) => {
  let s: Stack | undefined;
  let mcp: DispatchMiddleware;
  let seen: RequestLocals[] = [];
  const open: Stream[] = [];
  let nextId = 1;

  async function serveWith(before: Middleware[], streams: DispatchOptions['streams'] = {}): Promise<void> {
    mcp = dispatch({
      anonymous: true,
      handlers: { tools: new ToolRegistry() },
      serverInfo: { name: 'listen-cap', version: '1' },
      streams: { keepAliveMs: 0, ...streams },
      logger: quiet,
    });
    seen = [];
    const record: Middleware = (req, res, next) => {
      res.once('finish', () => seen.push(req.locals ?? {}));
      next();
    };
    s = await stack(platform, [record, ...before, mcp]);
  }

  afterEach(async () => {
    for (const st of open.splice(0)) st.close();
    if (s) {
      await until(() => mcp.stats().listenStreams === 0, 'every listen stream to be gone');
      await s.close();
      s = undefined;
    }
  });

  async function listen(user: User): Promise<Stream & { id: number }> {
    const id = nextId++;
    const headers = modernHeaders('subscriptions/listen');
    if (user !== 'anonymous') headers.Authorization = `Bearer ${KEYS[user]}`;
    const body = {
      jsonrpc: '2.0',
      id,
      method: 'subscriptions/listen',
      params: { notifications: { toolsListChanged: true }, _meta: envelope() },
    };
    const st = await openStream(`${s!.base}/mcp`, body, headers);
    open.push(st);
    return Object.assign(st, { id });
  }

  describe.each(Object.keys(ORDERS) as Order[])('%s', (order) => {
    test('a caller at its cap gets 429 with the cap in data; another caller still gets a stream', async () => {
      await serveWith(ORDERS[order](), { maxListenStreams: 4, maxListenStreamsPerPrincipal: 2 });
      for (let i = 0; i < 2; i++) {
        const st = await listen('alice');
        expect(st.status).toBe(200);
        expect((await st.next()).method).toBe('notifications/subscriptions/acknowledged');
      }
      const over = await listen('alice');
      expect(over.status).toBe(429);
      expect(await over.next()).toEqual({
        jsonrpc: '2.0',
        id: over.id,
        error: {
          code: 429,
          message: 'Too many subscriptions are open for this caller; close one first',
          data: { limit: 'listen_streams_per_principal', max: 2 },
        },
      });
      const bob = await listen('bob');
      expect(bob.status).toBe(200);
      expect(mcp.stats().listenStreams).toBe(3);
    });
  });

  test('the refusal is recorded for audit and metrics', async () => {
    await serveWith(ORDERS['no limits'](), { maxListenStreamsPerPrincipal: 1 });
    expect((await listen('alice')).status).toBe(200);
    expect((await listen('alice')).status).toBe(429);
    await until(() => seen.length === 1, 'the refusal to finish');
    expect(seen[0]!.refusal).toEqual({
      reason: 'rate_limited',
      code: 429,
      status: 429,
      by: 'dispatch',
      detail: 'listen_streams_per_principal',
    });
  });

  test('a slot comes back when the client closes its stream, and the caller is forgotten at zero', async () => {
    await serveWith(ORDERS['no limits'](), { maxListenStreamsPerPrincipal: 1 });
    const first = await listen('alice');
    expect(first.status).toBe(200);
    expect((await listen('alice')).status).toBe(429);
    expect(mcp.stats().listenPrincipals).toBe(1);
    first.close();
    await until(() => mcp.stats().listenStreams === 0, 'the closed stream to be released');
    expect(mcp.stats().listenPrincipals).toBe(0);
    const again = await listen('alice');
    expect(again.status).toBe(200);
    expect(mcp.stats().listenPrincipals).toBe(1);
  });

  test('the default cap is 10 streams per caller', async () => {
    await serveWith(ORDERS['no limits']());
    for (let i = 0; i < 10; i++) expect((await listen('alice')).status).toBe(200);
    const over = await listen('alice');
    expect(over.status).toBe(429);
    expect((await over.next()).error).toMatchObject({ data: { max: 10 } });
    expect((await listen('bob')).status).toBe(200);
  });

  test('callers without a principal share one slot key', async () => {
    await serveWith([parse()], { maxListenStreamsPerPrincipal: 1 });
    expect((await listen('anonymous')).status).toBe(200);
    expect((await listen('anonymous')).status).toBe(429);
  });

  test('0 turns the per-caller cap off: only the server-wide cap (503) is left', async () => {
    await serveWith(ORDERS['no limits'](), { maxListenStreams: 3, maxListenStreamsPerPrincipal: 0 });
    for (let i = 0; i < 3; i++) expect((await listen('alice')).status).toBe(200);
    expect((await listen('bob')).status).toBe(503);
  });
});
