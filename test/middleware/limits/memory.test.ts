/**
 * The limits middleware with the in-memory store, on bare node:http and on Express 5.
 */
import request from 'supertest';
import http from 'node:http';
import v8 from 'node:v8';
import vm from 'node:vm';
import { type LimitsOptions, limits } from '../../../middleware/limits/index';
import type { LimitReason, InflightScope } from '../../../lib/limits';
import {
  KINDS,
  type Kind,
  type TestApp,
  abortable,
  inBatches,
  keepAlive,
  post,
  startApp,
  tally,
  until,
} from '../../support/limits-harness';

const OFF = { perUserRpm: 0, perUserConcurrency: 0, globalConcurrency: 0, costBudgetPerHour: 0 };

describe.each(KINDS)('limits, memory store (%s)', (kind: Kind) => {
  let app: TestApp | undefined;
  const open = async (o: LimitsOptions, extra?: { jsonParser?: boolean }) => {
    const mw = limits({ ...OFF, ...o });
    app = await startApp(mw, kind, extra);
    return { mw, app };
  };
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('refuses with 429, a computed Retry-After and a JSON-RPC error echoing the id', async () => {
    const { app } = await open({ perUserRpm: 2 });
    const base = `http://127.0.0.1:${app.port}`;
    const send = (id: unknown) =>
      request(base).post('/mcp').set('x-user', 'alice').send({ jsonrpc: '2.0', id, method: 'tools/list' });
    expect((await send(1)).status).toBe(200);
    expect((await send(2)).status).toBe(200);
    const r = await send('req-7');
    expect(r.status).toBe(429);
    expect(r.headers['content-type']).toMatch(/^application\/json/);
    const secs = Number(r.headers['retry-after']);
    expect(Number.isInteger(secs)).toBe(true);
    expect(secs).toBeGreaterThanOrEqual(1);
    expect(secs).toBeLessThanOrEqual(60);
    expect(r.body).toEqual({
      jsonrpc: '2.0',
      id: 'req-7',
      error: {
        code: 429,
        message: expect.stringMatching(/per minute/),
        data: { limit: 'rpm', retryAfterSeconds: secs },
      },
    });
    // An unreadable body is still refused, with no id rather than a made-up one.
    const bad = await request(base)
      .post('/mcp')
      .set('x-user', 'alice')
      .set('content-type', 'application/json')
      .send('{nope');
    expect(bad.status).toBe(429);
    expect(bad.body).not.toHaveProperty('id');
    expect(bad.body.error.data.limit).toBe('rpm');
  });

  if (kind === 'express') {
    it('echoes the id when express.json() already read the body', async () => {
      const { app } = await open({ perUserRpm: 1 }, { jsonParser: true });
      expect((await post(app.port, { user: 'a', id: 1 })).status).toBe(200);
      const r = await post(app.port, { user: 'a', id: 42 });
      expect(r.status).toBe(429);
      expect(r.json().id).toBe(42);
    });
  }

  it("counts POST, GET (a session's stream) and DELETE; another method gets methodGuard()'s 405 and takes nothing", async () => {
    const { app } = await open({ perUserRpm: 3, perUserConcurrency: 1 });
    for (let i = 0; i < 5; i++) expect((await post(app.port, { user: 'a', method: 'PUT' })).status).toBe(405);
    expect((await post(app.port, { user: 'a', method: 'GET' })).status).toBe(200);
    expect((await post(app.port, { user: 'a', method: 'DELETE' })).status).toBe(200);
    expect((await post(app.port, { user: 'a' })).status).toBe(200);
    expect((await post(app.port, { user: 'a' })).status).toBe(429);
    expect((await post(app.port, { user: 'a', method: 'GET' })).status).toBe(429);
    expect((await post(app.port, { user: 'a', method: 'PUT' })).status).toBe(405);
  });

  it('keys on the principal; requests without one share the anonymous bucket', async () => {
    const { app } = await open({ perUserRpm: 2 });
    expect(tally(await inBatches(3, 3, () => post(app.port)))).toEqual({ 200: 2, 429: 1 });
    expect((await post(app.port, { user: 'bob' })).status).toBe(200);
    // A user literally named "anonymous" is not the anonymous bucket.
    expect((await post(app.port, { user: 'anonymous' })).status).toBe(200);
    expect((await post(app.port, { user: '' })).status).toBe(429); // an empty userId is anonymous
  });

  it('exact counts under concurrency: N allowed, M > N parallel → exactly N pass (rpm)', async () => {
    const { app } = await open({ perUserRpm: 7 });
    const agent = keepAlive();
    const rs = await Promise.all(Array.from({ length: 40 }, () => post(app.port, { user: 'a', agent })));
    agent.destroy();
    expect(tally(rs)).toEqual({ 200: 7, 429: 33 });
  });

  it('exact counts under concurrency: per-user slots', async () => {
    const { mw, app } = await open({ perUserConcurrency: 5 });
    const pending = Array.from({ length: 30 }, () => post(app.port, { user: 'a', hold: 'gate' }));
    // Wait until every request was decided: admitted and held, or refused.
    const refused: number[] = [];
    pending.forEach((p) => p.then((r) => r.status === 429 && refused.push(1)));
    await until(() => app.admitted + refused.length === 30, 'all 30 decided');
    expect(app.admitted).toBe(5);
    expect(mw.stats().inflight).toEqual({ user: 5, global: 0 });
    app.release();
    expect(tally(await Promise.all(pending))).toEqual({ 200: 5, 429: 25 });
    await until(() => mw.stats().inflight.user === 0, 'slots released');
    expect(mw.stats().memorySlotKeys).toBe(0);
  });

  it('exact counts under concurrency: global slots across users, and the user slot is given back', async () => {
    const { mw, app } = await open({ perUserConcurrency: 2, globalConcurrency: 3 });
    const pending = Array.from({ length: 12 }, (_, i) => post(app.port, { user: `u${i % 4}`, hold: 'gate' }));
    const refused: string[] = [];
    pending.forEach((p) =>
      p.then((r) => r.status === 429 && refused.push((r.json().error?.data as { limit: string }).limit)),
    );
    await until(() => app.admitted + refused.length === 12, 'all 12 decided');
    expect(app.admitted).toBe(3);
    expect(mw.stats().inflight).toEqual({ user: 3, global: 3 }); // refused requests hold no user slot
    app.release();
    await Promise.all(pending);
    expect(refused.every((l) => l === 'global_concurrent' || l === 'user_concurrent')).toBe(true);
    expect(refused).toContain('global_concurrent');
    await until(() => mw.stats().inflight.global === 0 && mw.stats().inflight.user === 0, 'released');
  });

  it('checks in order budget → user slots → global slots → rpm; an earlier refusal costs no later token', async () => {
    const { app } = await open({ perUserConcurrency: 1, perUserRpm: 2 });
    const held = post(app.port, { user: 'a', hold: 'gate' });
    await until(() => app.admitted === 1, 'first admitted');
    for (let i = 0; i < 5; i++) {
      const r = await post(app.port, { user: 'a' });
      expect(r.status).toBe(429);
      expect(r.json().error?.data).toEqual({ limit: 'user_concurrent', retryAfterSeconds: 1 });
      expect(r.headers['retry-after']).toBe('1');
    }
    app.release();
    expect((await held).status).toBe(200);
    // Five refusals by the semaphore took no rpm token: the second request of the minute passes.
    await until(async () => (await post(app.port, { user: 'a' })).status === 200, 'second admitted');
    const r = await post(app.port, { user: 'a' });
    expect(r.json().error?.data).toMatchObject({ limit: 'rpm' });
  });

  it('cost budget: admitted while used < budget (may overshoot), then refused with the window as Retry-After', async () => {
    const charges: [number, string][] = [];
    const { app } = await open({
      costBudgetPerHour: 100,
      hooks: { onCharge: (ms, source) => charges.push([ms, source]) },
    });
    expect((await post(app.port, { user: 'a', charge: '60' })).status).toBe(200);
    await until(() => charges.length === 1, 'first charge');
    expect((await post(app.port, { user: 'a', charge: '30,20' })).status).toBe(200); // used 60 < 100: admitted
    await until(() => charges.length === 2, 'second charge');
    expect(charges).toEqual([
      [60, 'charged'],
      [50, 'charged'],
    ]);
    const r = await post(app.port, { user: 'a', id: 9 });
    expect(r.status).toBe(429);
    const secs = Number(r.headers['retry-after']);
    expect(secs).toBeGreaterThan(3500);
    expect(secs).toBeLessThanOrEqual(3600);
    expect(r.json()).toMatchObject({
      id: 9,
      error: { code: 429, data: { limit: 'cost_budget', retryAfterSeconds: secs } },
    });
    expect((await post(app.port, { user: 'b' })).status).toBe(200); // per user
  });

  it('prices a request that charged nothing by its wall-clock time; charge(req, 0) is a charge', async () => {
    const charges: [number, string][] = [];
    const { app } = await open({
      costBudgetPerHour: 5,
      hooks: { onCharge: (ms, source) => charges.push([ms, source]) },
    });
    expect((await post(app.port, { user: 'z', charge: '0', hold: 30 })).status).toBe(200);
    await until(() => charges.length === 1, 'charge');
    expect(charges[0]).toEqual([0, 'charged']);
    expect((await post(app.port, { user: 'z', hold: 30 })).status).toBe(200);
    await until(() => charges.length === 2, 'charge');
    expect(charges[1]![1]).toBe('wall_clock');
    expect(charges[1]![0]).toBeGreaterThanOrEqual(5); // held at least 30 ms
    expect((await post(app.port, { user: 'z' })).json().error?.data).toMatchObject({ limit: 'cost_budget' });
  });

  it('when several limits are exceeded the budget is the reason reported', async () => {
    let charged = 0;
    const { app } = await open({ costBudgetPerHour: 1, perUserRpm: 1, hooks: { onCharge: () => charged++ } });
    expect((await post(app.port, { user: 'a', charge: '5' })).status).toBe(200);
    await until(() => charged === 1, 'charged');
    expect((await post(app.port, { user: 'a' })).json().error?.data).toMatchObject({ limit: 'cost_budget' });
  });

  it('a client that aborts a slow call frees its slot at once (the handler is still running)', async () => {
    const { mw, app } = await open({ perUserConcurrency: 1, globalConcurrency: 1 });
    const slow = abortable(app.port, { user: 'a' });
    await until(() => app.admitted === 1, 'slow call admitted');
    expect(mw.stats().inflight).toEqual({ user: 1, global: 1 });
    expect((await post(app.port, { user: 'a' })).status).toBe(429);
    slow.abort();
    await slow.done;
    await until(() => mw.stats().inflight.user === 0 && mw.stats().inflight.global === 0, 'slot freed');
    expect(app.holding).toBe(1); // the aborted call's handler has not finished: the abort freed the slot
    const next = post(app.port, { user: 'a', hold: 'gate' });
    await until(() => app.admitted === 2, 'next admitted');
    app.release();
    expect((await next).status).toBe(200);
    await until(() => mw.stats().inflight.user === 0, 'released');
    expect(mw.stats().memorySlotKeys).toBe(0);
  });

  it('releases exactly once: finished and aborted requests never drive a count negative', async () => {
    const seen: [InflightScope, number][] = [];
    const { mw, app } = await open({
      perUserConcurrency: 3,
      globalConcurrency: 3,
      hooks: { onInflight: (s, v) => seen.push([s, v]) },
    });
    const calls = Array.from({ length: 20 }, (_, i) => {
      if (i % 2) return abortable(app.port, { user: 'a', hold: 5 });
      return { abort() {}, done: post(app.port, { user: 'a', hold: 2 }).then(() => undefined) };
    });
    setTimeout(() => calls.forEach((c) => c.abort()), 3);
    await Promise.all(calls.map((c) => c.done));
    await until(() => mw.stats().inflight.user === 0 && mw.stats().inflight.global === 0, 'all released');
    expect(seen.every(([, v]) => v >= 0 && v <= 3)).toBe(true);
    expect(seen.filter(([s]) => s === 'user').length % 2).toBe(0); // every +1 has its -1
    expect(mw.stats().memorySlotKeys).toBe(0);
  });

  it('metrics hooks: denials by reason, in-flight per scope; a throwing hook is logged, never fatal', async () => {
    const denied: LimitReason[] = [];
    const inflight: Record<InflightScope, number[]> = { user: [], global: [] };
    const logged: string[] = [];
    const { app } = await open({
      perUserRpm: 1,
      perUserConcurrency: 1,
      globalConcurrency: 1,
      logger: { error: (m) => logged.push(m) },
      hooks: {
        onDenied: (r) => {
          denied.push(r);
          throw new Error('hook broke');
        },
        onInflight: (s, v) => inflight[s].push(v),
      },
    });
    const held = post(app.port, { user: 'a', hold: 'gate' });
    await until(() => app.admitted === 1, 'admitted');
    expect((await post(app.port, { user: 'a' })).status).toBe(429); // user_concurrent
    expect((await post(app.port, { user: 'b' })).status).toBe(429); // global_concurrent
    app.release();
    await held;
    await until(() => inflight.global.at(-1) === 0, 'released');
    expect((await post(app.port, { user: 'a' })).status).toBe(429); // rpm
    expect(denied).toEqual(['user_concurrent', 'global_concurrent', 'rpm']);
    expect(logged.filter((m) => /hook threw/.test(m))).toHaveLength(3);
    // Only admitted requests hold slots: a, while held. b and a's last call are refused by a later check, which
    // gives back in the store what the earlier checks took.
    expect(inflight.user).toEqual([1, 0]);
    expect(inflight.global).toEqual([1, 0]);
  });

  it('records the refusal on req.locals for audit and metrics', async () => {
    const mw = limits({ ...OFF, perUserRpm: 1 });
    const seen: unknown[] = [];
    const server = http.createServer((req, res) => {
      res.on('finish', () => seen.push(req.locals?.refusal));
      mw(req, res, () => res.end('ok'));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    await post(port);
    await post(port);
    await until(() => seen.length === 2, 'two finished');
    expect(seen).toEqual([
      undefined,
      { reason: 'rate_limited', code: 429, status: 429, by: 'limits', detail: 'rpm' },
    ]);
    await new Promise((r) => server.close(r));
  });

  it('10,000 requests leave no slot and no memory behind', async () => {
    const { mw, app } = await open({
      perUserRpm: 1_000_000,
      perUserConcurrency: 64,
      globalConcurrency: 256,
      costBudgetPerHour: 10_000_000,
    });
    const agent = keepAlive();
    const heap = () => process.memoryUsage().heapUsed;
    // A real collection before each reading (jest runs without --expose-gc).
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as () => void;
    const run = (n: number, from: number) =>
      inBatches(n, 50, async (i) => {
        const r = await post(app.port, { user: `u${(from + i) % 100}`, agent });
        return r.status;
      });
    await run(2000, 0);
    gc();
    const before = heap();
    const statuses = await run(8000, 2000);
    agent.destroy();
    expect(statuses.every((s) => s === 200)).toBe(true);
    await until(() => mw.stats().inflight.user === 0 && mw.stats().inflight.global === 0, 'all released');
    expect(mw.stats()).toEqual({
      inflight: { user: 0, global: 0 },
      memorySlotKeys: 0,
      redisSlots: 0,
      storeDown: false,
    });
    gc();
    // Structural checks above are the proof; this catches a per-request leak of more than ~4 KB.
    expect(heap() - before).toBeLessThan(32 * 1024 * 1024);
  }, 60_000);
});
