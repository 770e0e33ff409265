/**
 * The demo process on SIGTERM drains before it exits: /readyz answers 503 at once (the balancer stops sending),
 * new requests get 503 with Retry-After, an open listen stream gets its completion result, the call in flight
 * answers, and the process exits 0. Past MCP_SHUTDOWN_GRACE_MS the call still running is answered 503.
 */
import { McpTestClient } from '../../testing/index';
import { type DemoProcess, runDemoToExit, spawnDemo } from '../support/demo-process';
import { envelope, modernHeaders, openStream, post } from '../support/streaming';

const AUTH = { Authorization: 'Bearer demo-token' };
const SUB = 'io.modelcontextprotocol/subscriptionId';

const slowCall = (id: number, ms: number) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name: 'slow', arguments: { ms }, _meta: envelope() },
});

async function readyz(d: DemoProcess): Promise<number> {
  return (await fetch(`${d.base}/readyz`)).status;
}

/** Requests holding one of the demo limiter's global slots (past admission, in their handler). */
async function inFlight(d: DemoProcess): Promise<number> {
  const text = await (await fetch(`${d.base}/metrics`)).text();
  const m = /mcp_ratelimit_inflight\{scope="global"\} (\d+)/.exec(text);
  return m ? Number(m[1]) : 0;
}

async function untilInFlight(d: DemoProcess, n: number): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if ((await inFlight(d)) === n) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`never ${n} in flight`);
}

/** Poll /readyz until it answers `status`; every answer before it must be 200. */
async function untilReadyz(d: DemoProcess, status: number): Promise<void> {
  for (let i = 0; i < 500; i++) {
    const s = await readyz(d);
    if (s === status) return;
    expect(s).toBe(200);
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`/readyz never answered ${status}`);
}

describe('the demo on SIGTERM', () => {
  let d: DemoProcess;
  afterEach(() => d?.kill());

  test('drains: readiness 503, new requests 503, listen completed, the slow call answers, exit 0', async () => {
    d = await spawnDemo({});
    expect(await readyz(d)).toBe(200);
    const sub = await openStream(
      d.url,
      {
        jsonrpc: '2.0',
        id: 'sub',
        method: 'subscriptions/listen',
        params: { notifications: { toolsListChanged: true }, _meta: envelope() },
      },
      { ...modernHeaders('subscriptions/listen'), ...AUTH },
    );
    expect(await sub.next()).toMatchObject({ method: 'notifications/subscriptions/acknowledged' });
    const before = await inFlight(d);
    const slow = openStream(d.url, slowCall(7, 3000), { ...modernHeaders('tools/call', 'slow'), ...AUTH });
    await untilInFlight(d, before + 1);

    d.proc.kill('SIGTERM');
    await untilReadyz(d, 503);
    let slowAnswered = false;
    void slow.then((st) => st.ended).then(() => (slowAnswered = true));
    expect(await sub.next()).toMatchObject({ id: 'sub', result: { _meta: { [SUB]: 'sub' } } });
    await sub.ended;
    const refused = await post(
      d.url,
      { jsonrpc: '2.0', id: 8, method: 'tools/list', params: { _meta: envelope() } },
      { ...modernHeaders('tools/list'), ...AUTH },
    );
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.messages[0]).toMatchObject({ id: 8, error: { code: 503 } });
    // All of that happened while the slow call was still running.
    expect(slowAnswered).toBe(false);

    const st = await slow;
    expect(st.status).toBe(200);
    expect(await st.next()).toMatchObject({ id: 7, result: { structuredContent: { slept: 3000 } } });
    expect(await d.exited).toEqual({ code: 0, signal: null });
  }, 60_000);

  test('past MCP_SHUTDOWN_GRACE_MS the call still running is answered 503, and the process exits 0', async () => {
    d = await spawnDemo({ MCP_SHUTDOWN_GRACE_MS: '200' });
    const slow = openStream(d.url, slowCall(9, 10000), { ...modernHeaders('tools/call', 'slow'), ...AUTH });
    await untilInFlight(d, 1);
    d.proc.kill('SIGTERM');
    const st = await slow;
    expect(st.status).toBe(503);
    expect(st.headers['retry-after']).toBe('1');
    expect(await st.next()).toMatchObject({ id: 9, error: { code: 503 } });
    expect(await d.exited).toEqual({ code: 0, signal: null });
    // Nothing listens any more.
    await expect(new McpTestClient(d.url, { headers: AUTH }).listTools()).rejects.toThrow(/ECONNREFUSED/);
  }, 60_000);

  test('MCP_SHUTDOWN_GRACE_MS out of range: the process does not start', async () => {
    const r = await runDemoToExit({ MCP_SHUTDOWN_GRACE_MS: '999999999' });
    expect(r.code).toBe(1);
    expect(r.listened).toBe(false);
    expect(r.output).toMatch(/MCP_SHUTDOWN_GRACE_MS must be at most 86400000/);
  }, 40_000);
});
