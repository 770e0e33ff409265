/**
 * A caller whose hourly budget is spent still reaches its tasks: through mcpEndpoint() (the gate, parse, limits,
 * checkHeaders, dispatch({ tasks })) over HTTP, with the memory store and with Redis, `tools/call` gets 429
 * `cost_budget` (the first read by the limiter, the next ones by the gate, unread) while `tasks/get`,
 * `tasks/update` and `tasks/cancel` of its tasks are answered. They still count in the minute. An `Mcp-Method`
 * header naming a task method on another method's body is never served, and each such body counts in the minute.
 */
import type Redis from 'ioredis';
import type { TaskWork } from '../../../core/contract';
import type { JsonObject } from '../../../lib/jsonrpc';
import { hashKey } from '../../../middleware/api-key-auth/index';
import { type McpEndpoint, mcpEndpoint } from '../../../middleware/endpoint/index';
import type { LimitsOptions } from '../../../middleware/limits/index';
import { type RedisServer, connectRedis, redisDescribe, startRedis } from '../../support/redis';
import { eventually } from '../../support/task-stack';
import { EXT, KEYS, type Works, gate, taskTools } from '../../support/tasks-harness';
import { type Served, serveWatchingBody } from '../../support/unread-body';

const quiet = { error() {}, warn() {} };
const text = (t: string) => ({ content: [{ type: 'text', text: t }] });

interface Reply {
  status: number;
  /** The id echoed, if any: the body was read. */
  body: { id?: unknown; result?: Record<string, any>; error?: { code: number; data?: any } };
  /** Whether anything read the request's body before the answer. */
  read: boolean;
}

interface Stack {
  s: Served;
  e: McpEndpoint;
  /** Calls of each tool's work (a task's work, or a forged call that would have run). */
  runs: Map<string, number>;
  /** The `held` task's work waits for this. */
  release: () => void;
  /** The limiter's charges. */
  charges: number[];
  /** Every answer alice got, in order. */
  replies: Reply[];
}

let nextId = 100;

/**
 * A modern request of alice, as the tasks harness sends it; `headerMethod` puts another method in `Mcp-Method`
 * than the body's.
 */
async function rpc(
  st: Stack,
  method: string,
  params: JsonObject,
  headerMethod: string = method,
): Promise<Reply> {
  const id = nextId++;
  const body = {
    jsonrpc: '2.0',
    id,
    method,
    params: {
      ...params,
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientInfo': { name: 'tasks-budget', version: '1' },
        'io.modelcontextprotocol/clientCapabilities': { extensions: { [EXT]: {} } },
      },
    },
  };
  const name = typeof params.taskId === 'string' ? params.taskId : (params.name as string | undefined);
  const at = st.s.bodyRead.length;
  const res = await fetch(st.s.url, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': '2026-07-28',
      'Mcp-Method': headerMethod,
      ...(name === undefined ? {} : { 'Mcp-Name': name }),
      Authorization: `Bearer ${KEYS.alice}`,
    },
    body: JSON.stringify(body),
  });
  const reply: Reply = {
    status: res.status,
    body: (await res.json()) as Reply['body'],
    read: st.s.bodyRead[at]!(),
  };
  st.replies.push(reply);
  return reply;
}

/** A POST of alice with a malformed body and `Mcp-Method: tasks/get`. */
async function malformed(st: Stack): Promise<Reply> {
  const at = st.s.bodyRead.length;
  const res = await fetch(st.s.url, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': '2026-07-28',
      'Mcp-Method': 'tasks/get',
      Authorization: `Bearer ${KEYS.alice}`,
    },
    body: '{"jsonrpc":',
  });
  const reply: Reply = {
    status: res.status,
    body: (await res.json()) as Reply['body'],
    read: st.s.bodyRead[at]!(),
  };
  st.replies.push(reply);
  return reply;
}

const admitted = (st: Stack): number => st.replies.filter((r) => r.status === 200).length;

async function stack(limits: LimitsOptions): Promise<Stack> {
  const runs = new Map<string, number>();
  const ran = (name: string) => runs.set(name, (runs.get(name) ?? 0) + 1);
  const held = gate();
  const works: Works = new Map<string, TaskWork>([
    [
      'costly',
      (ctx) => {
        ran('costly');
        ctx.charge(150);
        return text('spent');
      },
    ],
    [
      'held',
      async () => {
        ran('held');
        await held.promise;
        return text('done');
      },
    ],
  ]);
  const charges: number[] = [];
  const e = mcpEndpoint({
    auth: { apiKeys: [{ userId: 'alice', hash: hashKey(KEYS.alice), groups: ['g'] }] },
    handlers: { tools: taskTools(works) as never },
    dispatch: { serverInfo: { name: 'tasks-budget', version: '1' }, tasks: {} },
    limits: {
      perUserRpm: 0,
      perUserConcurrency: 0,
      globalConcurrency: 0,
      ...limits,
      hooks: { onCharge: (ms) => void charges.push(ms) },
    },
    logger: quiet,
  });
  const s = await serveWatchingBody(e);
  return { s, e, runs, release: () => held.open(), charges, replies: [] };
}

async function close(st: Stack | undefined): Promise<void> {
  if (st === undefined) return;
  st.release();
  await st.e.close({ deadlineMs: 100 });
  await st.s.close();
}

async function createTask(st: Stack, tool: string): Promise<string> {
  const r = await rpc(st, 'tools/call', { name: tool, arguments: {} });
  if (r.body.result?.resultType !== 'task') throw new Error(`no task: ${JSON.stringify(r.body)}`);
  return String(r.body.result.taskId);
}

/**
 * The `costly` task's 150 ms are charged (a budget of 100 is spent): wait for the charge, then for a request that
 * checks the budget (tools/list) to be refused for it (with Redis the release that charges is applied a little
 * after the charge is measured). That refusal tells the gate.
 */
async function spendBudget(st: Stack): Promise<void> {
  await createTask(st, 'costly');
  await eventually(() => st.charges.includes(150), 'the task charged');
  await eventually(async () => (await rpc(st, 'tools/list', {})).status === 429, 'the budget refused');
  const last = st.replies[st.replies.length - 1]!;
  expect(last.body.error).toMatchObject({ code: 429, data: { limit: 'cost_budget' } });
}

function expectBudgetRefusal(r: Reply, read: boolean): void {
  expect(r.status).toBe(429);
  expect(r.body.error).toMatchObject({ code: 429, data: { limit: 'cost_budget' } });
  expect(r.read).toBe(read);
  expect('id' in r.body).toBe(read);
}

type StoreOf = () => LimitsOptions['store'];

function suite(storeOf: StoreOf): void {
  let st: Stack | undefined;
  afterEach(async () => {
    await close(st);
    st = undefined;
  });

  it('with its budget spent, tools/call is refused but tasks/get, tasks/update and tasks/cancel are answered', async () => {
    st = await stack({ costBudgetPerHour: 100, store: storeOf() });
    const heldId = await createTask(st, 'held');
    await spendBudget(st);

    // tools/call: refused before its body is read (the gate knows the budget is spent).
    expectBudgetRefusal(await rpc(st, 'tools/call', { name: 'costly', arguments: {} }), false);

    const got = await rpc(st, 'tasks/get', { taskId: heldId });
    expect(got.status).toBe(200);
    expect(got.body.result).toMatchObject({ taskId: heldId, status: 'working' });
    const updated = await rpc(st, 'tasks/update', { taskId: heldId, inputResponses: {} });
    expect(updated.status).toBe(200);
    expect(updated.body.result).toBeDefined();
    const cancelled = await rpc(st, 'tasks/cancel', { taskId: heldId });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.result).toBeDefined();
    const stack1 = st;
    await eventually(
      async () => (await rpc(stack1, 'tasks/get', { taskId: heldId })).body.result?.status === 'cancelled',
      'the task cancelled',
    );

    // Still refused, unread, after its tasks were reached.
    expectBudgetRefusal(await rpc(st, 'tools/call', { name: 'costly', arguments: {} }), false);
    expect(st.runs.get('costly')).toBe(1);
  });

  it('a tools/call body under a forged Mcp-Method: tasks/get is refused by the limiter, never served', async () => {
    st = await stack({ costBudgetPerHour: 100, store: storeOf() });
    await spendBudget(st);
    const forged = await rpc(st, 'tools/call', { name: 'costly', arguments: {} }, 'tasks/get');
    // Let through by the gate for its header, read, and refused by the limiter for what its body asks.
    expectBudgetRefusal(forged, true);
    expect(st.runs.get('costly')).toBe(1);
    // The same under its own header: the gate.
    expectBudgetRefusal(await rpc(st, 'tools/call', { name: 'costly', arguments: {} }), false);
  });

  it('the minute still applies to the tasks methods of a caller whose budget is spent', async () => {
    st = await stack({ perUserRpm: 5, costBudgetPerHour: 100, store: storeOf() });
    const heldId = await createTask(st, 'held');
    await spendBudget(st);
    let last: Reply | undefined;
    for (let i = 0; i < 10 && (last === undefined || last.status === 200); i++)
      last = await rpc(st, 'tasks/get', { taskId: heldId });
    // The requests admitted (the refusals for the budget took nothing from the minute) used it up.
    expect(admitted(st)).toBe(5);
    expect(last!.status).toBe(429);
    expect(last!.body.error).toMatchObject({ data: { limit: 'rpm' } });
    // Then the gate refuses them, unread, for the minute.
    const gated = await rpc(st, 'tasks/cancel', { taskId: heldId });
    expect(gated.status).toBe(429);
    expect(gated.body.error).toMatchObject({ data: { limit: 'rpm' } });
    expect(gated.read).toBe(false);
  });
}

describe('limits and tasks: a spent budget (memory)', () => {
  suite(() => undefined);

  it('each forged body counts in the minute: once it is used, the gate refuses them unread', async () => {
    const st = await stack({ perUserRpm: 4, costBudgetPerHour: 100 });
    try {
      await spendBudget(st);
      const before = admitted(st);
      const forged: Reply[] = [];
      for (let i = 0; i < 10; i++) {
        const r = await rpc(st, 'tools/call', { name: 'costly', arguments: {} }, 'tasks/get');
        forged.push(r);
        if (!r.read) break;
      }
      // Read and refused for the budget while the minute lasts, each counted; then refused unread.
      const read = forged.filter((r) => r.read);
      expect(read.length).toBe(4 - before);
      for (const r of read) expectBudgetRefusal(r, true);
      const gated = forged[forged.length - 1]!;
      expect(gated.read).toBe(false);
      expect(gated.body.error).toMatchObject({ code: 429, data: { limit: 'rpm' } });
      expect(st.runs.get('costly')).toBe(1);
    } finally {
      await close(st);
    }
  });

  it('so does each malformed body under a task header: once the minute is used, the gate refuses them unread', async () => {
    const st = await stack({ perUserRpm: 3, costBudgetPerHour: 100 });
    try {
      await spendBudget(st);
      const before = admitted(st);
      const sent: Reply[] = [];
      for (let i = 0; i < 10; i++) {
        const r = await malformed(st);
        sent.push(r);
        if (!r.read) break;
      }
      const read = sent.filter((r) => r.read);
      expect(read.length).toBe(3 - before);
      for (const r of read) expect(r.status).toBe(400);
      const gated = sent[sent.length - 1]!;
      expect(gated.read).toBe(false);
      expect(gated.body.error).toMatchObject({ code: 429, data: { limit: 'rpm' } });
    } finally {
      await close(st);
    }
  });
});

const describeWithRedis = redisDescribe();

describeWithRedis('limits and tasks: a spent budget (Redis)', () => {
  let server: RedisServer;
  let client: Redis;
  beforeAll(async () => {
    server = await startRedis();
    client = await connectRedis(server.url);
  });
  afterAll(async () => {
    client?.disconnect();
    await server?.stop();
  });

  suite(() => ({ redis: client, onOutage: 'fail-closed', keyPrefix: server.prefix('tasks-budget') }));
});
