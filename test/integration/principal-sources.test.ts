/**
 * Principals from different sources are different callers: the API key of user `alice` and an OIDC token with
 * `sub: "alice"` share no concurrency slot, no minute window, no budget and no listen-stream slot, with the
 * memory store and with Redis. Audit records and metrics name where the principal came from. Real jose issuer
 * on loopback, real winston, real prom-client, real Redis (see test/support/redis.ts); bare node:http and Express 5.
 */
import type Redis from 'ioredis';
import { Registry } from 'prom-client';
import winston from 'winston';
import type TransportStream from 'winston-transport';
import { apiKeyAuth, hashKey } from '../../middleware/api-key-auth/index';
import { audit } from '../../middleware/audit/index';
import { authenticate } from '../../middleware/auth/index';
import { type DispatchOptions, dispatch } from '../../middleware/dispatch/index';
import { type LimitsOptions, limits } from '../../middleware/limits/index';
import { metrics } from '../../middleware/metrics/index';
import { oidcAuth } from '../../middleware/oidc-auth/index';
import { parse } from '../../middleware/parse/index';
import type { Middleware } from '../../core/types';
import { ToolRegistry, textResult } from '../../handlers/tools/index';
import { TestIssuer } from '../../testing/index';
import { PLATFORMS, type Platform, close, listen, serve } from '../support/dispatch-harness';
import { type RedisServer, connectRedis, redisDescribe, startRedis } from '../support/redis';
import {
  type Stream,
  deferred,
  envelope,
  modernHeaders,
  openStream,
  post,
  until,
} from '../support/streaming';

const AUD = 'https://mcp.test/mcp';
const KEY = 'alice-api-key-0123456789';
const OFF = { perUserRpm: 0, perUserConcurrency: 0, globalConcurrency: 0, costBudgetPerHour: 0 };
const quiet = { error: () => {}, warn: () => {} };
const MESSAGE = Symbol.for('message');
const Transport = (winston as unknown as { Transport: typeof TransportStream }).Transport;

let idp: TestIssuer;
let oidcToken: string;
let redisServer: RedisServer | undefined;
const redisClients: Redis[] = [];

beforeAll(async () => {
  idp = await TestIssuer.start();
  oidcToken = await idp.sign({ sub: 'alice', aud: AUD, groups: ['users'] });
});
afterAll(async () => {
  for (const c of redisClients) if (c.status !== 'end') c.disconnect();
  await redisServer?.stop();
  await idp.stop();
});

/** The Redis, started by the first test that needs it (the memory-store tests run without one). */
async function redis(): Promise<RedisServer> {
  redisServer ??= await startRedis();
  return redisServer;
}

async function redisClient(): Promise<Redis> {
  const c = await connectRedis((await redis()).url);
  redisClients.push(c);
  return c;
}

/** Both credentials of alice, as Authorization headers. */
const AS = {
  apiKey: () => `Bearer ${KEY}`,
  oidc: () => `Bearer ${oidcToken}`,
} as const;
type Via = keyof typeof AS;

interface App {
  url: string;
  /** Answer every held `hold` call. */
  release(): void;
  readonly holding: number;
  close(): Promise<void>;
}

/** The chain: authentication (API key, then OIDC), parse, what the test adds, limits, dispatch. */
async function start(
  platform: Platform,
  o: { limits?: LimitsOptions; before?: Middleware[]; dispatch?: Pick<DispatchOptions, 'streams'> },
): Promise<App> {
  let gate = deferred();
  let holding = 0;
  const tools = new ToolRegistry({
    tools: [
      {
        name: 'hold',
        description: 'waits for the test',
        call: async () => {
          holding++;
          await gate.promise;
          holding--;
          return textResult('held');
        },
      },
      {
        name: 'work',
        description: 'charges 500 ms of work',
        call: (_args, ctx) => {
          ctx.charge(500);
          return textResult('worked');
        },
      },
    ],
  });
  const auth = authenticate([
    apiKeyAuth({ keys: [{ userId: 'alice', hash: hashKey(KEY), groups: ['users'] }], logger: quiet }),
    oidcAuth({ issuer: idp.url, audience: AUD, logger: quiet }),
  ]);
  await auth.ready;
  const mws: Middleware[] = [
    ...(o.before ?? []),
    auth,
    parse(),
    limits({ ...OFF, logger: quiet, ...o.limits }),
    dispatch({
      anonymous: true,
      handlers: { tools },
      serverInfo: { name: 'sources', version: '1' },
      ...o.dispatch,
    }),
  ];
  const server = serve(platform, mws);
  const base = await listen(server);
  return {
    url: `${base}/mcp`,
    release() {
      gate.resolve();
      gate = deferred();
    },
    get holding() {
      return holding;
    },
    async close() {
      gate.resolve();
      await close(server);
    },
  };
}

let nextId = 1;
function call(app: App, via: Via, tool: string) {
  const body = {
    jsonrpc: '2.0',
    id: nextId++,
    method: 'tools/call',
    params: { name: tool, arguments: {}, _meta: envelope() },
  };
  return post(app.url, body, { ...modernHeaders('tools/call', tool), Authorization: AS[via]() });
}

function openListen(app: App, via: Via): Promise<Stream> {
  const body = {
    jsonrpc: '2.0',
    id: nextId++,
    method: 'subscriptions/listen',
    params: { notifications: { toolsListChanged: true }, _meta: envelope() },
  };
  return openStream(app.url, body, {
    ...modernHeaders('subscriptions/listen'),
    Authorization: AS[via](),
  });
}

const errorOf = (r: Awaited<ReturnType<typeof post>>) =>
  r.messages[0]?.error as { code: number; data?: { limit?: string } } | undefined;

type StoreKind = 'memory' | 'redis';
const STORES: StoreKind[] = ['memory', 'redis'];
const describeStore = (kind: StoreKind): jest.Describe => (kind === 'redis' ? redisDescribe() : describe);

async function storeOf(kind: StoreKind): Promise<Pick<LimitsOptions, 'store'>> {
  if (kind === 'memory') return {};
  return {
    store: {
      redis: await redisClient(),
      onOutage: 'fail-closed',
      keyPrefix: (await redis()).prefix('sources'),
    },
  };
}

describe.each(PLATFORMS)('on %s', (platform) => {
  const apps: App[] = [];
  afterEach(async () => {
    for (const a of apps.splice(0)) await a.close();
  });
  const run = async (o: Parameters<typeof start>[1]) => {
    const a = await start(platform, o);
    apps.push(a);
    return a;
  };

  for (const storeKind of STORES)
    describeStore(storeKind)(`limits with the ${storeKind} store`, () => {
      test('the API key of alice and an OIDC token for alice hold separate concurrency slots', async () => {
        const app = await run({ limits: { perUserConcurrency: 1, ...(await storeOf(storeKind)) } });
        const held = call(app, 'apiKey', 'hold');
        await until(() => app.holding === 1, 'the API-key call to be held');
        const viaOidc = call(app, 'oidc', 'work');
        const r = await viaOidc;
        expect(errorOf(r)).toBeUndefined();
        expect(r.status).toBe(200);
        // The same source is still limited: a second API-key call while the first holds the slot.
        const again = await call(app, 'apiKey', 'work');
        expect(again.status).toBe(429);
        expect(errorOf(again)?.data?.limit).toBe('user_concurrent');
        app.release();
        expect((await held).status).toBe(200);
      });

      test('the API key of alice and an OIDC token for alice have separate minute windows', async () => {
        const app = await run({ limits: { perUserRpm: 2, ...(await storeOf(storeKind)) } });
        expect((await call(app, 'apiKey', 'work')).status).toBe(200);
        expect((await call(app, 'apiKey', 'work')).status).toBe(200);
        const spent = await call(app, 'apiKey', 'work');
        expect(spent.status).toBe(429);
        expect(errorOf(spent)?.data?.limit).toBe('rpm');
        const viaOidc = await call(app, 'oidc', 'work');
        expect(errorOf(viaOidc)).toBeUndefined();
        expect(viaOidc.status).toBe(200);
      });

      test('the API key of alice and an OIDC token for alice have separate budgets', async () => {
        const app = await run({ limits: { costBudgetPerHour: 400, ...(await storeOf(storeKind)) } });
        expect((await call(app, 'apiKey', 'work')).status).toBe(200);
        // The charge is added when the response closes: wait until the API-key budget refuses.
        let spent: Awaited<ReturnType<typeof post>> | undefined;
        for (let i = 0; i < 100; i++) {
          spent = await call(app, 'apiKey', 'work');
          if (spent.status === 429) break;
        }
        expect(errorOf(spent!)?.data?.limit).toBe('cost_budget');
        const viaOidc = await call(app, 'oidc', 'work');
        expect(errorOf(viaOidc)).toBeUndefined();
        expect(viaOidc.status).toBe(200);
      });
    });

  test('the API key of alice and an OIDC token for alice hold separate listen-stream slots', async () => {
    const app = await run({ dispatch: { streams: { maxListenStreamsPerPrincipal: 1 } } });
    const viaKey = await openListen(app, 'apiKey');
    expect(viaKey.status).toBe(200);
    const viaOidc = await openListen(app, 'oidc');
    try {
      expect(viaOidc.status).toBe(200);
      const second = await openListen(app, 'apiKey');
      expect(second.status).toBe(429);
      second.close();
    } finally {
      viaKey.close();
      viaOidc.close();
    }
  });

  test('audit records name where the principal came from', async () => {
    const records: Record<string, unknown>[] = [];
    class Keep extends Transport {
      override log(info: Record<string | symbol, unknown>, done: () => void): void {
        records.push(JSON.parse(info[MESSAGE] as string) as Record<string, unknown>);
        done();
      }
    }
    const logger = winston.createLogger({ level: 'info', transports: [new Keep()] });
    const app = await run({ before: [audit({ logger })] });
    await call(app, 'apiKey', 'work');
    await call(app, 'oidc', 'work');
    await until(() => records.length === 2, 'two audit records');
    expect(records.map((r) => [r.principal, r.auth_method, r.principal_source])).toEqual([
      ['alice', 'api-key', 'api-key'],
      ['alice', 'oidc', idp.url],
    ]);
  });

  test('metrics count authenticated requests by where the principal came from', async () => {
    const registry = new Registry();
    const app = await run({ before: [metrics({ registry })] });
    await call(app, 'apiKey', 'work');
    await call(app, 'oidc', 'work');
    await call(app, 'oidc', 'work');
    const m = await registry.getSingleMetricAsString('mcp_authenticated_total');
    expect(m).toContain('mcp_authenticated_total{auth_method="api-key"} 1');
    expect(m).toContain('mcp_authenticated_total{auth_method="oidc"} 2');
  });
});
