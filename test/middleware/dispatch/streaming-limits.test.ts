/**
 * A subscriptions/listen stream does not hold concurrency slots when the request was parsed before limits()
 * (the recommended order): with one slot per user, an open subscription leaves room for calls, while two
 * ordinary requests at once are still limited.
 */
import { dispatch } from '../../../middleware/dispatch/index';
import { limits } from '../../../middleware/limits/index';
import { parse } from '../../../middleware/parse/index';
import { ToolRegistry, textResult } from '../../../handlers/tools/index';
import type { Middleware } from '../../../core/types';
import { PLATFORMS, type Stack, stack } from '../../support/dispatch-harness';
import { envelope, modernHeaders, openStream, post, until } from '../../support/streaming';

const principal: Middleware = (req, _res, next) => {
  (req.locals ??= {}).principal = { userId: 'u1', groups: ['g'], roles: [], method: 'test' };
  next();
};

describe.each(PLATFORMS)('listen streams and concurrency slots on %s', (platform) => {
  let s: Stack;
  let release: (() => void) | undefined;
  const lim = limits({ perUserRpm: 0, perUserConcurrency: 1, globalConcurrency: 1, costBudgetPerHour: 0 });
  const tools = new ToolRegistry({
    tools: [
      { name: 'quick', call: () => textResult('ok') },
      { name: 'held', call: () => new Promise((r) => (release = () => r(textResult('done')))) },
    ],
  });
  beforeAll(async () => {
    s = await stack(platform, [
      principal,
      parse(),
      lim,
      dispatch({ anonymous: true, handlers: { tools }, serverInfo: { name: 'l', version: '1' } }),
    ]);
  });
  afterAll(() => s.close());

  const call = (id: number, name: string) => ({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name, arguments: {}, _meta: envelope() },
  });

  test('an open subscription leaves the only slot free; a held call does not', async () => {
    const url = `${s.base}/mcp`;
    const listen = await openStream(
      url,
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'subscriptions/listen',
        params: { notifications: { toolsListChanged: true }, _meta: envelope() },
      },
      modernHeaders('subscriptions/listen'),
    );
    const ack = await listen.next();
    expect(ack.method).toBe('notifications/subscriptions/acknowledged');
    expect(lim.stats().inflight).toEqual({ user: 0, global: 0 });

    const ok = await post(url, call(2, 'quick'), modernHeaders('tools/call', 'quick'));
    expect(ok.status).toBe(200);

    const held = openStream(url, call(3, 'held'), modernHeaders('tools/call', 'held'));
    await until(() => lim.stats().inflight.user === 1, 'the held call to take the slot');
    const refused = await post(url, call(4, 'quick'), modernHeaders('tools/call', 'quick'));
    expect(refused.status).toBe(429);
    release!();
    await (
      await held
    ).ended;
    listen.close();
  });
});
