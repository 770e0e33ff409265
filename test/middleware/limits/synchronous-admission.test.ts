/**
 * The in-memory store decides synchronously: next() in the same tick, synchronous release and charge, and windows
 * that reset after their duration. (Its fixed windows, lib/limits `FixedWindows`, are checked against
 * rate-limiter-flexible's `RateLimiterMemory` in test/lib/limits.test.ts.)
 */
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import type { LimitReason } from '../../../lib/limits';
import { type LimitsOptions, limits } from '../../../middleware/limits/index';
import type { McpRequest } from '../../../lib/request';

const OFF = { perUserRpm: 0, perUserConcurrency: 0, globalConcurrency: 0, costBudgetPerHour: 0 };

/** A request and its response in process, no socket: what the middleware sees from node:http. */
function call(user: string | undefined, id: unknown = 1) {
  const req = new IncomingMessage(new Socket());
  req.method = 'POST';
  req.url = '/mcp';
  req.locals = {
    // Parsed already (the recommended order), so a refusal echoes the id without reading the body.
    mcp: { kind: 'request', id, method: 'tools/call' } as unknown as McpRequest,
  };
  if (user !== undefined) req.locals.principal = { userId: user, groups: [], roles: [], method: 'test' };
  const res = new ServerResponse(req);
  let body = '';
  res.end = ((chunk?: unknown) => {
    if (typeof chunk === 'string') body += chunk;
    return res;
  }) as typeof res.end;
  return {
    req,
    res,
    /** The refusal written, once the (asynchronous) refusal path ran. */
    answer: () => ({
      status: res.statusCode,
      retryAfter: res.getHeader('Retry-After'),
      body: body ? (JSON.parse(body) as { id?: unknown; error?: { data?: unknown } }) : undefined,
    }),
    close: () => res.emit('close'),
  };
}

/** Let the refusal path (which awaits the request id) write its answer. */
const settled = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('limits, memory store: decided synchronously', () => {
  const open = (o: LimitsOptions, denied: LimitReason[] = []) =>
    limits({ ...OFF, ...o, hooks: { ...o.hooks, onDenied: (r) => denied.push(r) } });

  it('calls next() before it returns, ahead of an already queued microtask, with every limit on', () => {
    const mw = limits({
      perUserRpm: 100,
      perUserConcurrency: 4,
      globalConcurrency: 8,
      costBudgetPerHour: 1_000_000,
    });
    const order: string[] = [];
    const c = call('alice');
    queueMicrotask(() => order.push('microtask'));
    mw(c.req, c.res, () => order.push('next'));
    order.push('returned');
    expect(order).toEqual(['next', 'returned']);
    expect(mw.stats().inflight).toEqual({ user: 1, global: 1 });
    // The close gives both slots back at once, no microtask later.
    c.close();
    expect(mw.stats().inflight).toEqual({ user: 0, global: 0 });
    expect(mw.stats().memorySlotKeys).toBe(0);
  });

  it('refuses synchronously too (the hook fires before the middleware returns), the answer follows', async () => {
    const denied: LimitReason[] = [];
    const mw = open({ perUserRpm: 2 }, denied);
    let admitted = 0;
    for (let i = 0; i < 2; i++) {
      const c = call('a');
      mw(c.req, c.res, () => admitted++);
    }
    const c = call('a', 'req-3');
    mw(c.req, c.res, () => admitted++);
    expect(admitted).toBe(2);
    expect(denied).toEqual(['rpm']);
    await settled();
    const a = c.answer();
    expect(a.status).toBe(429);
    expect(Number(a.retryAfter)).toBeGreaterThanOrEqual(59);
    expect(Number(a.retryAfter)).toBeLessThanOrEqual(60);
    expect(a.body).toMatchObject({
      id: 'req-3',
      error: { code: 429, data: { limit: 'rpm', retryAfterSeconds: Number(a.retryAfter) } },
    });
  });

  it('the charge on close counts at once: the budget refuses the very next request', () => {
    const denied: LimitReason[] = [];
    const charges: number[] = [];
    const mw = open({ costBudgetPerHour: 100, hooks: { onCharge: (ms) => charges.push(ms) } }, denied);
    const first = call('a');
    let admitted = 0;
    mw(first.req, first.res, () => admitted++);
    first.req.locals!.chargedMs = 150;
    first.close();
    expect(charges).toEqual([150]);
    const second = call('a');
    mw(second.req, second.res, () => admitted++);
    expect(admitted).toBe(1);
    expect(denied).toEqual(['cost_budget']);
  });

  it('exact counts: slots per user and global, the refused take nothing, released slots are taken again', () => {
    const denied: LimitReason[] = [];
    const mw = open({ perUserConcurrency: 2, globalConcurrency: 3, perUserRpm: 1000 }, denied);
    const held = [call('a'), call('a'), call('a'), call('b'), call('b'), call('c')];
    const admitted: number[] = [];
    held.forEach((c, i) => mw(c.req, c.res, () => admitted.push(i)));
    expect(admitted).toEqual([0, 1, 3]);
    expect(denied).toEqual(['user_concurrent', 'global_concurrent', 'global_concurrent']);
    expect(mw.stats().inflight).toEqual({ user: 3, global: 3 });
    held[0]!.close();
    const again = call('c');
    mw(again.req, again.res, () => admitted.push(6));
    expect(admitted).toEqual([0, 1, 3, 6]);
    for (const c of [held[1]!, held[3]!, again]) c.close();
    expect(mw.stats()).toEqual({
      inflight: { user: 0, global: 0 },
      memorySlotKeys: 0,
      redisSlots: 0,
      storeDown: false,
    });
  });

  it('an exception from next() is a 500, as before', async () => {
    const errors: string[] = [];
    const mw = limits({ ...OFF, perUserRpm: 5, logger: { error: (m) => errors.push(m) } });
    const c = call('a');
    mw(c.req, c.res, () => {
      throw new Error('downstream broke');
    });
    await settled();
    expect(c.answer().status).toBe(500);
    expect(c.req.locals?.refusal).toMatchObject({ reason: 'internal_error', by: 'limits' });
    expect(errors).toEqual(['limits: unexpected error']);
  });

  describe('windows end after their duration (fake clock)', () => {
    beforeEach(() => jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] }));
    afterEach(() => jest.useRealTimers());

    it('requests per minute: exactly N a minute, Retry-After counts down, a new window after 60 s', async () => {
      const denied: LimitReason[] = [];
      const mw = open({ perUserRpm: 3 }, denied);
      let admitted = 0;
      const send = (user = 'a') => {
        const c = call(user);
        mw(c.req, c.res, () => admitted++);
        return c;
      };
      for (let i = 0; i < 10; i++) send();
      expect(admitted).toBe(3);
      jest.advanceTimersByTime(20_500);
      const refused = send();
      await settled();
      expect(refused.answer().retryAfter).toBe('40'); // 39.5 s left, rounded up
      jest.advanceTimersByTime(39_499);
      const last = send();
      await settled();
      expect(last.answer().retryAfter).toBe('1');
      expect(admitted).toBe(3);
      jest.advanceTimersByTime(1); // 60 s after the first request
      for (let i = 0; i < 5; i++) send();
      expect(admitted).toBe(6);
      expect(denied.filter((r) => r === 'rpm')).toHaveLength(7 + 1 + 1 + 2);
      send('b');
      expect(admitted).toBe(7); // per user
    });

    it('the hourly budget: refused until the hour since the first charge has passed', async () => {
      const denied: LimitReason[] = [];
      const mw = open({ costBudgetPerHour: 1000 }, denied);
      let admitted = 0;
      const send = (chargeMs?: number) => {
        const c = call('a');
        mw(c.req, c.res, () => admitted++);
        if (chargeMs !== undefined) c.req.locals!.chargedMs = chargeMs;
        c.close();
        return c;
      };
      send(600);
      jest.advanceTimersByTime(1000);
      send(600); // used 600 < 1000: admitted, now 1200
      jest.advanceTimersByTime(600_000);
      const refused = send();
      await settled();
      expect(admitted).toBe(2);
      expect(refused.answer().retryAfter).toBe(String(3600 - 601));
      expect(refused.answer().body?.error?.data).toEqual({ limit: 'cost_budget', retryAfterSeconds: 2999 });
      jest.advanceTimersByTime(2_999_000);
      send(10);
      expect(admitted).toBe(3);
      expect(denied).toEqual(['cost_budget']);
    });
  });
});
