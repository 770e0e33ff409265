/**
 * The observing stack around dispatch()'s tasks, over node:http: audit() (into an array), metrics(), a real
 * apiKeyAuth (tasks-harness keys), parse(), limits() (memory), then dispatch({ tasks }) with the tasks-harness
 * tools handler, whose `call` starts a task (`ctx.tasks.start`) for a declaring client.
 */
import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import { apiKeyAuth, hashKey } from '../../middleware/api-key-auth/index';
import { audit } from '../../middleware/audit/index';
import { type DispatchMiddleware, dispatch } from '../../middleware/dispatch/index';
import { type LimitsMiddleware, type LimitsOptions, limits } from '../../middleware/limits/index';
import { metrics } from '../../middleware/metrics/index';
import { parse } from '../../middleware/parse/index';
import { chain } from './dispatch-harness';
import { KEYS, type Works, taskTools } from './tasks-harness';

export interface TaskStack {
  base: string;
  mcp: DispatchMiddleware;
  limiter: LimitsMiddleware;
  registry: Registry;
  /** The audit records, in the order written. */
  records: Record<string, unknown>[];
  /** The limiter's charges (`onCharge`), in order. */
  charges: [number, string][];
  close(): Promise<void>;
}

export async function taskStack(works: Works, limitOptions: LimitsOptions = {}): Promise<TaskStack> {
  const quiet = { error() {}, warn() {} };
  const records: Record<string, unknown>[] = [];
  const charges: [number, string][] = [];
  const registry = new Registry();
  const m = metrics({ registry });
  const limiter = limits({
    perUserRpm: 0,
    perUserConcurrency: 0,
    globalConcurrency: 0,
    costBudgetPerHour: 0,
    logger: quiet,
    ...limitOptions,
    hooks: { ...m.limiterHooks(), onCharge: (ms, source) => charges.push([ms, source]) },
  });
  const auth = apiKeyAuth({
    keys: [
      { userId: 'alice', hash: hashKey(KEYS.alice), groups: ['staff'] },
      { userId: 'bob', hash: hashKey(KEYS.bob), groups: ['staff'] },
    ],
    logger: quiet,
  });
  const mcp = dispatch({
    handlers: { tools: taskTools(works) as never },
    serverInfo: { name: 'tasks-observe', version: '1.0.0' },
    logger: quiet,
    tasks: {},
  });
  const auditMw = audit({ logger: { log: (_l, _m, meta) => void records.push({ ...meta }) } });
  const server: Server = http.createServer(chain([auditMw, m, auth, parse(), limiter, mcp]));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    mcp,
    limiter,
    registry,
    records,
    charges,
    async close() {
      await mcp.close({ deadlineMs: 100 });
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

/** Until `cond` holds (polled a bounded number of times; no timing assertion). */
export async function eventually(cond: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`never happened: ${what}`);
}
