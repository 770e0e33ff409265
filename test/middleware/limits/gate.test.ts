/**
 * The limiter's gate: once a caller has used its minute (or been refused for its budget), its next POSTs are
 * refused with 429 before their body is read, until the window ends: a 3 MiB malformed body (answered while the
 * client is still sending it), a batch, invalid UTF-8 and a too deep body. Through mcpEndpoint(), and through the
 * README's order built by hand on bare node:http. Other callers are not affected.
 */
import { Registry } from 'prom-client';
import { hashKey } from '../../../middleware/api-key-auth/index';
import { apiKeyAuth } from '../../../middleware/api-key-auth/index';
import { checkHeaders } from '../../../middleware/check-headers/index';
import { classifyRevision } from '../../../middleware/classify-revision/index';
import { compose } from '../../../middleware/compose/index';
import { dispatch } from '../../../middleware/dispatch/index';
import { mcpEndpoint } from '../../../middleware/endpoint/index';
import { guardOrigin } from '../../../middleware/guard-origin/index';
import { type LimitsOptions, limits } from '../../../middleware/limits/index';
import { methodGuard } from '../../../middleware/method-guard/index';
import { parse } from '../../../middleware/parse/index';
import { rejectBatch } from '../../../middleware/reject-batch/index';
import { ToolRegistry, ok } from '../../../handlers/tools/index';
import { type Answer, type Served, sendPartial, serveWatchingBody } from '../../support/unread-body';
import { until } from '../../support/streaming';

const ALICE = 'gate-alice-key-0123456789';
const BOB = 'gate-bob-key-0123456789ab';
const keys = [
  { userId: 'alice', hash: hashKey(ALICE), groups: ['g'] },
  { userId: 'bob', hash: hashKey(BOB), groups: ['g'] },
];
const quiet = { error() {}, warn() {} };
const serverInfo = { name: 'gate', version: '1' };

const tools = () =>
  new ToolRegistry({
    logger: quiet,
    tools: [
      { name: 'hello', inputSchema: { type: 'object' }, call: () => ok({ hi: true }) },
      {
        name: 'costly',
        inputSchema: { type: 'object' },
        call: (_a, ctx) => {
          ctx.charge(1000);
          return ok({ spent: true });
        },
      },
    ],
  });

const headers = (key: string): Record<string, string> => ({
  Authorization: `Bearer ${key}`,
  'Content-Type': 'application/json',
  Accept: 'application/json, text/event-stream',
  'MCP-Protocol-Version': '2025-11-25',
});
const LIST = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
const call = (name: string) =>
  JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name, arguments: {} } });

const serve = serveWatchingBody;
const send = (url: string, key: string, body: Buffer | string, sent?: number) =>
  sendPartial(url, headers(key), body, sent);

const MIB3 = Buffer.alloc(3 * 1024 * 1024, '{');
const BATCH = JSON.stringify([{ jsonrpc: '2.0', id: 1, method: 'tools/list' }]);
const NOT_UTF8 = Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]);
const DEEP = '{"a":'.repeat(200) + '1' + '}'.repeat(200);

function expectStanding(a: Answer, limit: 'rpm' | 'cost_budget', maxSecs: number): void {
  expect(a.status).toBe(429);
  const secs = Number(a.headers['retry-after']);
  expect(Number.isInteger(secs) && secs >= 1 && secs <= maxSecs).toBe(true);
  // The body was not read: no id to echo.
  expect(a.body).toEqual({
    jsonrpc: '2.0',
    error: { code: 429, message: expect.any(String), data: { limit, retryAfterSeconds: secs } },
  });
}

/** Use alice's minute of 2, which tells the gate; then every body, hostile or not, gets 429 unread. */
async function minuteUsedThenGated(s: Served): Promise<void> {
  expect((await send(s.url, ALICE, LIST).done).status).toBe(200);
  expect((await send(s.url, ALICE, LIST).done).status).toBe(200);
  const third = s.bodyRead.length;
  expectStanding(await send(s.url, ALICE, LIST).done, 'rpm', 60);
  expect(s.bodyRead[third]!()).toBe(false);

  // 3 MiB of malformed JSON, of which 64 KiB are sent: the answer comes while the rest is still owed.
  const big = send(s.url, ALICE, MIB3, 64 * 1024);
  const index = s.bodyRead.length;
  try {
    await until(() => big.answered() || (s.bodyRead[index]?.() ?? false), 'an answer or a body read');
    expect(big.answered()).toBe(true);
    expectStanding(await big.done, 'rpm', 60);
    expect(s.bodyRead[index]!()).toBe(false);
  } finally {
    big.abort();
  }

  for (const body of [BATCH, NOT_UTF8, DEEP, LIST]) {
    const at = s.bodyRead.length;
    expectStanding(await send(s.url, ALICE, body).done, 'rpm', 60);
    expect(s.bodyRead[at]!()).toBe(false);
  }

  // Bob's minute is his own: his requests are read and answered as usual.
  expect((await send(s.url, BOB, LIST).done).status).toBe(200);
  expect((await send(s.url, BOB, BATCH).done).status).toBe(400);
}

describe('the limits gate: a caller over its minute is refused before its body is read', () => {
  let s: Served | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  test('through mcpEndpoint()', async () => {
    const e = mcpEndpoint({
      auth: { apiKeys: keys },
      handlers: { tools: tools() },
      dispatch: { serverInfo },
      limits: { perUserRpm: 2 },
      logger: quiet,
    });
    s = await serve(e);
    await minuteUsedThenGated(s);
  });

  test("through the README's order, built by hand on bare node:http", async () => {
    const lim = limits({ perUserRpm: 2, logger: quiet });
    s = await serve(
      compose(
        [
          guardOrigin({ logger: quiet }),
          methodGuard(),
          apiKeyAuth({ keys, logger: quiet }),
          lim.gate,
          rejectBatch({ logger: quiet }),
          parse({ logger: quiet }),
          lim,
          classifyRevision({ logger: quiet }),
          checkHeaders({ logger: quiet }),
          dispatch({ anonymous: true, handlers: { tools: tools() }, serverInfo, logger: quiet }),
        ],
        { logger: quiet },
      ),
    );
    await minuteUsedThenGated(s);
  });

  test("the gate's refusals reach the metrics' hooks and the application's own (mcpEndpoint's limitsOptions)", async () => {
    const denied: string[] = [];
    const registry = new Registry();
    const e = mcpEndpoint({
      auth: { apiKeys: keys },
      handlers: { tools: tools() },
      dispatch: { serverInfo },
      limits: { perUserRpm: 1, hooks: { onDenied: (r) => void denied.push(r) } },
      registry,
      logger: quiet,
    });
    s = await serve(e);
    expect((await send(s.url, ALICE, LIST).done).status).toBe(200);
    expectStanding(await send(s.url, ALICE, LIST).done, 'rpm', 60); // the gate: the minute's request is used
    expectStanding(await send(s.url, ALICE, BATCH).done, 'rpm', 60);
    expect(denied).toEqual(['rpm', 'rpm']);
    expect(await registry.metrics()).toMatch(/^mcp_ratelimit_denied_total\{reason="rpm"\} 2$/m);
  });

  test('limits: false mounts no gate either', async () => {
    const e = mcpEndpoint({
      auth: { apiKeys: keys },
      handlers: { tools: tools() },
      dispatch: { serverInfo },
      limits: false,
      logger: quiet,
    });
    expect(e.parts.limits).toBeUndefined();
    s = await serve(e);
    for (let i = 0; i < 3; i++) expect((await send(s.url, ALICE, LIST).done).status).toBe(200);
    expect((await send(s.url, ALICE, BATCH).done).status).toBe(400);
  });

  test('a spent budget: refused before the body is read, until the hour ends', async () => {
    const options: LimitsOptions = { perUserRpm: 0, costBudgetPerHour: 500 };
    const e = mcpEndpoint({
      auth: { apiKeys: keys },
      handlers: { tools: tools() },
      dispatch: { serverInfo },
      limits: options,
      logger: quiet,
    });
    s = await serve(e);
    expect((await send(s.url, ALICE, call('costly')).done).status).toBe(200);
    const refused = await send(s.url, ALICE, LIST).done;
    expect(refused.body).toMatchObject({ id: 1, error: { data: { limit: 'cost_budget' } } });
    const at = s.bodyRead.length;
    expectStanding(await send(s.url, ALICE, DEEP).done, 'cost_budget', 3600);
    expect(s.bodyRead[at]!()).toBe(false);
    expect((await send(s.url, BOB, LIST).done).status).toBe(200);
  });
});
