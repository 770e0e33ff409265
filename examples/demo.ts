/**
 * The mcpware demo server, as a function: the recommended stack (`mcpEndpoint()`), configured from the
 * environment (see the README's "Demo server" section for the contract). `examples/server.ts` starts it;
 * the tests build it in-process with their own environment.
 */
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import path from 'node:path';
import express from 'express';
import { Cluster, Redis } from 'ioredis';
import { Registry } from 'prom-client';
import winston from 'winston';
import {
  auditJsonFormat,
  charge,
  completion,
  limitsOptionsFromEnv,
  loadCatalogue,
  McpError,
  mcpEndpoint,
  ok,
  parseApiKeysEnv,
  prompts,
  redisClientOptions,
  resources,
  ToolRegistry,
  toolError,
  type CallContext,
  type JsonObject,
  type Logger,
  type McpEndpointOptions,
  type Middleware,
  type OidcAuthOptions,
} from '../index.js';
import { DEMO_TOOL_FILTER, type DemoMode, demoBackend, demoModeFromEnv } from './demo-modes.js';
import { demoNotes } from './demo-notes.js';
import { storeHealth } from './demo-health.js';
import { elicitationRequest } from '../lib/index.js';
import {
  ADMIN_GROUP,
  ADMIN_REPORT,
  CRASH,
  CRASH_MESSAGE,
  CUSTOMER,
  DEMO_SERVER_INFO,
  HELLO,
  REGION_STATUS,
  REPORT,
  SLOW,
  customerRecord,
  regionStatus,
  reportResult,
} from './demo-contract.js';
import { redisTaskStore } from '../middleware/dispatch/index.js';
import { otel } from '../middleware/otel/index.js';
import { otelSettingsFromEnv, registerOtel } from './otel-setup.js';

export type Env = Readonly<Record<string, string | undefined>>;

export interface Demo {
  app: express.Express;
  host: string;
  port: number;
  /** `http://HOST:PORT/mcp` */
  url: string;
  /** Resolves when start-up work (OIDC discovery) is done; rejects loudly when it fails. */
  ready: Promise<void>;
  /** MCP_SHUTDOWN_GRACE_MS: how long {@link drain} lets the calls in flight run on. */
  shutdownGraceMs: number;
  /**
   * Drain the dispatcher (while the server still listens): /readyz answers 503, new requests 503, listen streams
   * complete, and the calls in flight answer, for at most `shutdownGraceMs`.
   */
  drain(): Promise<void>;
  close(): Promise<void>;
}

const DEMO_KEY_HASH = createHash('sha256').update('demo-token').digest('hex');

function int(env: Env, name: string, dflt: number): number {
  const v = env[name];
  if (v === undefined || v === '') return dflt;
  if (!/^\d{1,9}$/.test(v))
    throw new TypeError(`${name} must be a non-negative integer, got ${JSON.stringify(v)}`);
  return Number(v);
}

function list(v: string | undefined): string[] {
  return (v ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

/** MCP_LOG_LEVEL: the operational log's threshold; `off` silences it (audit records are not affected). */
const LOG_LEVELS: readonly string[] = ['error', 'warn', 'info', 'off'];

/** Longest shutdown grace accepted, in ms (dispatch's `close({ deadlineMs })` takes no more). */
const MAX_SHUTDOWN_GRACE_MS = 86_400_000;

/** Shortest `requestState` key accepted, in bytes (dispatch() refuses shorter ones too). */
const MIN_STATE_KEY_BYTES = 32;

/**
 * MCP_REQUEST_STATE_KEYS: comma-separated hex keys of at least 32 bytes each; the first signs every
 * `requestState`, all of them verify (rotation). Unset: `undefined`, and dispatch() makes a random key of its own.
 * An unusable list throws a TypeError that describes the entry without echoing it.
 */
export function requestStateKeysFromEnv(env: Env): Buffer[] | undefined {
  const v = env.MCP_REQUEST_STATE_KEYS;
  if (v === undefined || v === '') return undefined;
  const entries = list(v);
  if (entries.length === 0) throw new TypeError('MCP_REQUEST_STATE_KEYS: no key in the list');
  return entries.map((entry, i) => {
    if (!/^(?:[0-9a-fA-F]{2})+$/.test(entry)) {
      throw new TypeError(
        `MCP_REQUEST_STATE_KEYS: key ${i + 1} is not hex (an even number of 0-9a-f digits, as openssl rand -hex 32 prints)`,
      );
    }
    const key = Buffer.from(entry, 'hex');
    if (key.length < MIN_STATE_KEY_BYTES) {
      throw new TypeError(
        `MCP_REQUEST_STATE_KEYS: key ${i + 1} is ${key.length} bytes; each key needs at least ${MIN_STATE_KEY_BYTES} (${2 * MIN_STATE_KEY_BYTES} hex digits)`,
      );
    }
    return key;
  });
}

/** The demo's Redis client: one node, or a Redis Cluster. */
export type DemoRedis = Redis | Cluster;

/** How long start-up waits for Redis to answer before going on without it (the limits' outage policy applies). */
const REDIS_START_MS = 5000;

/** True when the node at the other end of `probe` runs in cluster mode (`INFO cluster`: `cluster_enabled:1`). */
async function isClusterNode(probe: Redis): Promise<boolean> {
  return /^cluster_enabled:1\s*$/m.test(await probe.info('cluster'));
}

/**
 * The Redis client for REDIS_URL. A node of a Redis Cluster gets an ioredis `Cluster` client seeded with it:
 * a one-node client there has every admission refused (CROSSSLOT: the limits' user and global keys live in
 * different hash slots) and the notes' key answered with MOVED when another node serves its slot. Redis not
 * reachable at start-up: a one-node client and a warning; should the node turn out to be a cluster's once it
 * answers, an error says to restart (the store's failures meanwhile show in /readyz and the metrics).
 */
export async function demoRedis(
  url: string,
  logger: {
    warn(m: string, meta?: Record<string, unknown>): void;
    error(m: string, meta?: Record<string, unknown>): void;
  },
): Promise<DemoRedis> {
  const probe = new Redis(url, { ...redisClientOptions, lazyConnect: true, retryStrategy: () => null });
  probe.on('error', () => {});
  let cluster: boolean | undefined;
  try {
    await probe.connect();
    cluster = await isClusterNode(probe);
  } catch {
    cluster = undefined;
  } finally {
    probe.disconnect();
  }
  let redis: DemoRedis;
  if (cluster === true) {
    const { host, port, username, password, tls, db } = probe.options;
    if (db) throw new TypeError(`REDIS_URL names database ${db}; a Redis Cluster has database 0 only`);
    redis = new Cluster([{ host: host ?? '127.0.0.1', port: port ?? 6379 }], {
      redisOptions: { ...redisClientOptions, username, password, tls },
      enableOfflineQueue: false,
      enableReadyCheck: true,
    });
  } else {
    redis = new Redis(url, { ...redisClientOptions, lazyConnect: false });
  }
  redis.on('error', () => {}); // outages are handled (and logged) by the limiter and the feed
  if (cluster !== undefined) {
    await readyWithin(redis, REDIS_START_MS);
    return redis;
  }
  logger.warn('REDIS_URL does not answer at start-up: the limits use memory until it does', {
    redis: { host: probe.options.host, port: probe.options.port },
  });
  const single = redis as Redis;
  single.once('ready', () => {
    isClusterNode(single).then(
      (yes) => {
        if (yes)
          logger.error(
            'REDIS_URL is a node of a Redis Cluster, found after start-up: restart the server to use a cluster client',
          );
      },
      () => {},
    );
  });
  return redis;
}

/** Wait until `redis` is ready, for at most `ms` (then go on: the limits' outage policy covers the rest). */
async function readyWithin(redis: DemoRedis, ms: number): Promise<void> {
  if (redis.status === 'ready') return;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    timer.unref();
    function done(): void {
      clearTimeout(timer);
      redis.off('ready', done);
      resolve();
    }
    redis.once('ready', done);
  });
}

const NAME_QUESTION: JsonObject = {
  type: 'object',
  properties: { name: { type: 'string', maxLength: 100 } },
  required: ['name'],
};

/** The name in an accepted elicitation answer, else undefined. */
function answeredName(answer: JsonObject | undefined): string | undefined {
  const content = answer?.action === 'accept' ? answer.content : undefined;
  if (content === null || typeof content !== 'object' || Array.isArray(content)) return undefined;
  const name = (content as JsonObject).name;
  return typeof name === 'string' && name !== '' ? name.slice(0, 100) : undefined;
}

/** The demo's tools: see the README for what each shows. */
export function demoTools(pageSize = 0): ToolRegistry {
  const registry = new ToolRegistry(pageSize > 0 ? { pageSize } : {});
  registry.register(
    { ...HELLO, call: ({ who }) => ok({ greeting: `Hello, ${String(who)}!` }) },
    { ...CUSTOMER, call: ({ id }) => ok(customerRecord(String(id))) },
    {
      ...SLOW,
      call: async ({ ms }, ctx: CallContext) => {
        const wanted = Number(ms);
        const started = Date.now();
        try {
          await sleep(wanted, undefined, { signal: ctx.signal });
        } catch {
          // The client went away: stop early; nothing more is sent for this request.
        }
        const slept = Date.now() - started;
        ctx.charge(slept);
        return ok({ slept: ctx.signal.aborted ? slept : wanted });
      },
    },
    {
      ...ADMIN_REPORT,
      // Visible (and callable) only for the admin group; for everyone else it does not exist.
      describe: (ctx) => (ctx.principal?.groups.includes(ADMIN_GROUP) ? {} : undefined),
      call: (_args, ctx) => ok({ report: 'all systems nominal', requestedBy: ctx.principal?.userId ?? null }),
    },
    { ...REGION_STATUS, call: ({ region, verbose }) => ok(regionStatus(region, verbose)) },
    {
      ...CRASH,
      call: () => {
        throw new Error(CRASH_MESSAGE);
      },
    },
    {
      ...REPORT,
      // Optional task support: a client that declares the tasks extension gets a task; others wait for the answer.
      taskSupport: 'optional',
      call: async ({ seconds }, ctx: CallContext) => {
        const total = Number(seconds);
        const started = Date.now();
        for (let done = 0; done < total && !ctx.signal.aborted; done++) {
          // One second at a time, reporting progress (a task's status message shows it).
          ctx.progress?.(done, total, `${done} of ${total} s`);
          try {
            await sleep(1000, undefined, { signal: ctx.signal });
          } catch {
            // Cancelled (tasks/cancel), or the client went away: stop early.
          }
        }
        ctx.charge(Date.now() - started);
        if (ctx.signal.aborted) return toolError('The report was cancelled');
        return ok(reportResult(total));
      },
    },
    {
      name: 'introduce',
      description:
        'Asks for your name (an input-required round with an elicitation), then greets you. The round carries a ' +
        'signed requestState: any replica sharing MCP_REQUEST_STATE_KEYS accepts the answer.',
      inputSchema: {
        type: 'object',
        properties: { greeting: { type: 'string', maxLength: 40 } },
        additionalProperties: false,
      },
      call: ({ greeting }, ctx: CallContext) => {
        const name = answeredName(ctx.inputResponses?.name);
        // The signed state shows this server asked the question; an answer without it is asked again.
        const asked = ctx.requestState as { asked?: unknown } | undefined;
        if (name === undefined || asked?.asked !== 'name') {
          return ctx.inputRequired!({
            inputRequests: { name: elicitationRequest('What is your name?', NAME_QUESTION) },
            state: { asked: 'name' },
          });
        }
        return ok({ greeting: `${typeof greeting === 'string' ? greeting : 'Hello'}, ${name}!` });
      },
    },
  );
  return registry;
}

/** What answers the demo's requests, as `mcpEndpoint()` options, with what it holds. */
interface Terminal {
  options: Pick<McpEndpointOptions, 'handlers' | 'dispatch' | 'backend' | 'toolFilter'>;
  /** Whether the notes' shared feed works (undefined: nothing shared). */
  feedConnected(): boolean | undefined;
  close(): Promise<void>;
}

/** The default mode: mcpware's dispatcher over the demo's tools, the catalogue, the notes and the prompts. */
async function dispatchTerminal(o: {
  redis: DemoRedis | undefined;
  logger: Logger;
  pageSize: number;
  requestStateKey: Buffer[] | undefined;
  taskLeaseMs: number | undefined;
}): Promise<Terminal> {
  const { pageSize, requestStateKey, taskLeaseMs } = o;
  const tools = demoTools(pageSize);
  // notes://today and the note tool: in the limits' Redis when REDIS_URL is set, shared by every instance.
  const notes = demoNotes(o.redis, o.logger);
  tools.register(notes.tool);
  const catalogue = await loadCatalogue(path.join(__dirname, 'catalogue'), { scheme: 'docs' });
  const res = resources({
    sources: [catalogue.resources, notes.source],
    changes: notes.feed,
    ...(pageSize > 0 ? { pageSize } : {}),
  });
  const pr = prompts({ sources: [catalogue.prompts], ...(pageSize > 0 ? { pageSize } : {}) });
  return {
    options: {
      handlers: {
        tools,
        resources: res,
        prompts: pr,
        completion: completion({ prompts: pr, resources: res }),
      },
      dispatch: {
        serverInfo: { ...DEMO_SERVER_INFO },
        instructions:
          'A demo of mcpware: tools hello, customer, slow, region_status, introduce, note, report (a task when the ' +
          'client declares the tasks extension); docs:// resources and notes://today; prompts.',
        ...(requestStateKey ? { inputRequests: { requestStateKey } } : {}),
        // Tasks (the report tool): in the limits' Redis when REDIS_URL is set, so any instance answers for them.
        tasks: {
          ...(o.redis ? { store: redisTaskStore({ client: o.redis }) } : {}),
          ...(taskLeaseMs !== undefined ? { leaseMs: taskLeaseMs } : {}),
        },
        // A legacy cancellation that lands on another instance reaches the call through the notes' Redis feed.
        ...(notes.relay ? { cancellation: { relay: notes.relay } } : {}),
      },
    },
    feedConnected: notes.connected,
    close: () => notes.close(),
  };
}

/** MCP_BACKEND=sdk or MCP_UPSTREAM_URL: a backend, with the visibility rule as the tool filter's groups. */
async function backendTerminal(
  mode: Exclude<DemoMode, 'dispatch'>,
  o: { upstreamUrl?: string; pageSize: number; logger: Logger },
): Promise<Terminal> {
  const { backend, close } = await demoBackend(mode, o);
  return { options: { backend, toolFilter: DEMO_TOOL_FILTER }, feedConnected: () => undefined, close };
}

export async function createDemo(env: Env = process.env): Promise<Demo> {
  const host = env.HOST || '127.0.0.1';
  const port = int(env, 'PORT', 8075);
  const baseUrl = (env.MCP_BASE_URL || `http://${host}:${port}`).replace(/\/+$/, '');
  const resourceUrl = `${baseUrl}/mcp`;
  const requestStateKey = requestStateKeysFromEnv(env);
  const shutdownGraceMs = int(env, 'MCP_SHUTDOWN_GRACE_MS', 10_000);
  // MCP_TASK_LEASE_MS: how long a task's worker holds it without renewing (dispatch's tasks.leaseMs).
  const taskLeaseMs = env.MCP_TASK_LEASE_MS ? int(env, 'MCP_TASK_LEASE_MS', 0) : undefined;
  if (shutdownGraceMs > MAX_SHUTDOWN_GRACE_MS)
    throw new TypeError(`MCP_SHUTDOWN_GRACE_MS must be at most ${MAX_SHUTDOWN_GRACE_MS}`);
  // OpenTelemetry (OTEL_EXPORTER_OTLP_ENDPOINT, docs/guides/opentelemetry.md): read and checked now, registered
  // once the stack is built.
  const otelSettings = otelSettingsFromEnv(env);
  const closers: Array<() => Promise<void> | void> = [];

  // Logging: audit records as JSON lines to a file or stdout; operational logs to stderr, at MCP_LOG_LEVEL.
  const logLevel = env.MCP_LOG_LEVEL || 'warn';
  if (!LOG_LEVELS.includes(logLevel))
    throw new TypeError(
      `MCP_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got ${JSON.stringify(logLevel)}`,
    );
  const opsLogger = winston.createLogger({
    level: logLevel === 'off' ? 'error' : logLevel,
    silent: logLevel === 'off',
    format: winston.format.json(),
    transports: [new winston.transports.Console({ stderrLevels: ['error', 'warn', 'info', 'debug'] })],
  });
  const auditTransport = env.MCP_AUDIT_LOG
    ? // A large write buffer: with winston's default 16 KiB an audit file cannot keep up with a saturated
      // server and the backlog grows in memory (see the README's benchmark notes).
      new winston.transports.File({
        filename: env.MCP_AUDIT_LOG,
        options: { flags: 'a', highWaterMark: 1 << 20 },
      })
    : new winston.transports.Console();
  const auditLogger = winston.createLogger({
    level: 'info',
    // One JSON line per record in the record's own key order, without format.json()'s per-record key sorting.
    format: auditJsonFormat(),
    transports: [auditTransport],
  });
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        auditLogger.on('finish', () => resolve());
        auditLogger.end();
        setTimeout(resolve, 500).unref();
      }),
  );
  const logger = {
    error: (m: string, meta?: Record<string, unknown>) => void opsLogger.error(m, meta),
    warn: (m: string, meta?: Record<string, unknown>) => void opsLogger.warn(m, meta),
  };

  // Metrics on a registry of our own (never prom-client's global one).
  const registry = new Registry();

  // Authentication: API keys (always), and OIDC bearer tokens when OIDC_ISSUER is set.
  const keysEnv = env.MCP_API_KEYS ?? `demo:sha256:${DEMO_KEY_HASH}:users`;
  const parsedKeys = parseApiKeysEnv(keysEnv);
  if (!parsedKeys.ok) throw new TypeError(`MCP_API_KEYS: ${parsedKeys.message}`);
  if (parsedKeys.keys.length === 0 && !env.OIDC_ISSUER)
    throw new TypeError(
      'MCP_API_KEYS is empty and OIDC_ISSUER is not set: refusing to run without authentication',
    );
  const roles = list(env.OIDC_REQUIRED_ROLES);
  const oidc: OidcAuthOptions | undefined = env.OIDC_ISSUER
    ? {
        issuer: env.OIDC_ISSUER,
        ...(env.OIDC_AUDIENCE ? { audience: env.OIDC_AUDIENCE } : {}),
        ...(env.OIDC_CLIENT_ID ? { clientId: env.OIDC_CLIENT_ID } : {}),
        ...(roles.length > 0 ? { requiredRoles: roles } : {}),
        ...(!env.OIDC_AUDIENCE && !env.OIDC_CLIENT_ID ? { audience: resourceUrl } : {}),
      }
    : undefined;
  // Start-up: which audience a token must name (docs/middleware/oidc-auth.md); at warn, the ops logger's level.
  if (oidc) {
    const rule =
      oidc.audience !== undefined
        ? `aud must contain ${JSON.stringify(oidc.audience)} as that exact string (one trailing / forgiven)`
        : `aud must contain the client id ${JSON.stringify(oidc.clientId)} exactly (azp is never used)`;
    opsLogger.warn(`oidc: tokens of ${oidc.issuer} are accepted only when ${rule}`);
  }

  // Limits, in memory or in Redis.
  let redis: DemoRedis | undefined;
  if (env.REDIS_URL) {
    redis = await demoRedis(env.REDIS_URL, logger);
    closers.push(() => void redis!.disconnect());
  }

  // What answers: mcpware's dispatcher over the demo's handlers, or a backend (MCP_BACKEND=sdk, MCP_UPSTREAM_URL).
  const pageSize = int(env, 'MCP_PAGE_SIZE', 0);
  const { mode, upstreamUrl } = demoModeFromEnv(env);
  const terminal =
    mode === 'dispatch'
      ? await dispatchTerminal({ redis, logger, pageSize, requestStateKey, taskLeaseMs })
      : await backendTerminal(mode, { upstreamUrl, pageSize, logger });
  closers.push(() => terminal.close());

  const origins = env.MCP_ALLOWED_ORIGINS === '*' ? '*' : list(env.MCP_ALLOWED_ORIGINS);
  const hosts =
    env.MCP_ALLOWED_HOSTS === '*'
      ? '*'
      : list(env.MCP_ALLOWED_HOSTS ?? `127.0.0.1:${port},localhost:${port}`);

  // The recommended stack in its order (docs/middleware/endpoint.md): record first, refuse cheaply before
  // reading the body, authenticate before any parsing, read the body once, limit the authenticated caller
  // (knowing the method), then check, redact and answer.
  const endpoint = mcpEndpoint({
    auth: {
      // The MCP_API_KEYS contract makes groups optional: a key without groups sees the tools that need none.
      ...(parsedKeys.keys.length > 0
        ? { apiKeys: { keys: parsedKeys.keys, allowKeysWithoutGroups: true } }
        : {}),
      ...(oidc ? { oidc } : {}),
      resourceMetadata: {
        resource: resourceUrl,
        authorizationServers: env.OIDC_ISSUER ? [env.OIDC_ISSUER] : [],
        resourceName: 'mcpware demo',
      },
    },
    ...terminal.options,
    origin: { allowedOrigins: origins, allowedHosts: hosts },
    limits: limitsOptionsFromEnv(
      env,
      redis ? { redis, hooks: { onStoreError: () => health.onStoreError() } } : {},
    ),
    redact: { mode: (env.MCP_REDACT || 'mask') as 'off' | 'warn' | 'mask' },
    audit: { logger: auditLogger },
    registry,
    // Traced only when the OTEL variables ask for it (otel() is mounted first, before audit and metrics).
    ...(otelSettings ? { otel: otel({ logger }) } : {}),
    logger,
  });
  // The SDK, once nothing before can fail (otel() looks the providers up per request). It shuts down after
  // everything but the audit log, so the spans and metrics of what close() ends are exported.
  const otelSdk = otelSettings ? registerOtel(otelSettings) : undefined;
  if (otelSdk) closers.splice(1, 0, () => otelSdk.shutdown());
  closers.push(async () => {
    await endpoint.close();
    // The streams close() ended finish on a later turn: their audit records are written before the log ends.
    await new Promise((resolve) => setImmediate(resolve));
  });
  const health = storeHealth({
    redis,
    feedConnected: terminal.feedConnected,
    report: (store, up) => endpoint.parts.metrics?.storeUp(store, up),
  });
  closers.push(() => health.close());
  await health.check();

  const app = express();
  app.disable('x-powered-by');
  app.get('/healthz', (_req, res) => {
    res.statusCode = 200;
    res.setHeader('Content-Type', 'application/json');
    res.end('{"status":"ok"}');
  });
  // Readiness for a load balancer: 503 while a shared store fails (degraded) and once the server drains
  // (SIGTERM), while /healthz stays 200.
  app.get('/readyz', health.readiness(endpoint.readiness));
  app.get('/metrics', endpoint.metricsHandler!);
  app.use(endpoint.resourceMetadata as Middleware);
  app.use('/mcp', endpoint);

  return {
    app,
    host,
    port,
    url: `http://${host}:${port}/mcp`,
    ready: endpoint.ready,
    shutdownGraceMs,
    drain: () => endpoint.close({ deadlineMs: shutdownGraceMs }),
    async close() {
      for (const c of closers.reverse()) await c();
    },
  };
}

// Used by the slow tool's README example; keeps `charge` referenced for readers looking for it.
export { charge, McpError };
