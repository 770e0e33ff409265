/**
 * The mcpware stacks under test, built from the library's real middlewares (compiled from this checkout's
 * source, see bench/build.ts).
 *
 * Full stack, in mounting order: audit (winston, to a file), metrics (its own prom-client Registry),
 * guardOrigin, methodGuard, parse, rejectBatch, classifyRevision, checkHeaders (with the registry's
 * x-mcp-header lookup), apiKeyAuth (requests carry `Authorization: Bearer <key>`), limits (in memory, or in
 * Redis for `mcpware-node-redis`; every limit on but far too high to refuse; its hooks feed the metrics), redact (mask), dispatch (a ToolRegistry
 * holding the echo tool).
 *
 * Minimal stack: parse, classifyRevision, dispatch.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { Registry } from 'prom-client';
import winston from 'winston';
// One module per middleware, as an application importing `mcpware/audit`, `mcpware/limits`, … loads them: the
// package root would also load what the stack does not use (jose for OIDC, the catalogue's YAML parser).
import { apiKeyAuth, hashKey } from '../../middleware/api-key-auth/index.js';
import { audit, auditJsonFormat } from '../../middleware/audit/index.js';
import { checkHeaders } from '../../middleware/check-headers/index.js';
import { classifyRevision } from '../../middleware/classify-revision/index.js';
import { dispatch } from '../../middleware/dispatch/index.js';
import { guardOrigin } from '../../middleware/guard-origin/index.js';
import { type RedisClientLike, limits } from '../../middleware/limits/index.js';
import { methodGuard } from '../../middleware/method-guard/index.js';
import { metrics } from '../../middleware/metrics/index.js';
import { parse } from '../../middleware/parse/index.js';
import { redact } from '../../middleware/redact/index.js';
import { rejectBatch } from '../../middleware/reject-batch/index.js';
import { ToolRegistry } from '../../handlers/tools/index.js';
import type { Middleware } from '../../index.js';
import { BENCH_KEY, ECHO_INPUT_SCHEMA, SERVER_INFO, TOOL_DESCRIPTION, TOOL_NAME } from '../workloads.js';
import type { StatsProvider } from './common.js';

/** High enough never to refuse during a benchmark (and below the limiter's 2^48 ceiling). */
const NEVER = 2 ** 40;

const quietLogger = {
  error(message: string, meta?: Record<string, unknown>): void {
    process.stderr.write(`[bench server] ${message} ${meta ? JSON.stringify(meta) : ''}\n`);
  },
};

function registry(): ToolRegistry {
  return new ToolRegistry({
    logger: quietLogger,
    tools: [
      {
        name: TOOL_NAME,
        description: TOOL_DESCRIPTION,
        inputSchema: structuredClone(ECHO_INPUT_SCHEMA) as unknown as Record<string, unknown>,
        call: (args) => ({ content: [{ type: 'text', text: args.text as string }] }),
      },
    ],
  });
}

/** `anonymous` for a stack without authentication (dispatch() refuses requests no auth decided otherwise). */
function dispatcher(tools: ToolRegistry, anonymous: boolean): Middleware {
  return dispatch({ handlers: { tools }, serverInfo: SERVER_INFO, logger: quietLogger, anonymous });
}

/**
 * Options of the audit file's fs.WriteStream: a 1 MiB highWaterMark (`BENCH_AUDIT_HWM=<bytes>` to change it;
 * 16384 is winston's default). With winston's default the file cannot keep up with a saturated event loop: a
 * round trip to the file takes one highWaterMark of lines, fewer than a loop turn's answers, so the audit
 * logger's stream buffers grow without bound (bench/README.md).
 */
function fileStreamOptions(): { options: { flags: string; highWaterMark: number } } {
  const hwm = Number(process.env.BENCH_AUDIT_HWM ?? 1024 * 1024);
  if (!Number.isSafeInteger(hwm) || hwm <= 0) throw new Error('BENCH_AUDIT_HWM must be a positive integer');
  return { options: { flags: 'a', highWaterMark: hwm } };
}

/**
 * The audit log's winston transport. Default (`BENCH_AUDIT_TRANSPORT=file`): winston's File transport, rotated
 * at 64 MiB so that a 30-minute benchmark cannot fill the disk. `stream`: a Stream transport over a plain
 * fs.WriteStream (no rotation), to compare what the File transport itself costs. `discard`: a Stream transport
 * whose lines go nowhere (bench/inproc.ts).
 */
function auditTransport(filename: string): winston.transport {
  if (process.env.BENCH_AUDIT_TRANSPORT === 'discard') {
    // The in-process harness (bench/inproc.ts): winston's whole pipeline, the written lines thrown away, no I/O.
    return new winston.transports.Stream({ stream: new Writable({ write: (_c, _e, cb) => cb() }) });
  }
  const stream = fileStreamOptions();
  if (process.env.BENCH_AUDIT_TRANSPORT === 'stream') {
    return new winston.transports.Stream({ stream: fs.createWriteStream(filename, stream.options) });
  }
  return new winston.transports.File({ filename, maxsize: 64 * 1024 * 1024, maxFiles: 2, ...stream });
}

export interface Stack {
  middlewares: Middleware[];
  stats: StatsProvider;
}

/**
 * The full stack. `name` names the audit log file under `outDir`. With `redis` the limits live in that Redis
 * (fail-open), as replicas share them.
 */
export function fullStack(name: string, outDir: string, redis?: RedisClientLike): Stack {
  const tools = registry();
  const auditFile = path.join(outDir, `audit-${name}.log`);
  const auditLogger = winston.createLogger({
    level: 'info',
    format: auditJsonFormat(),
    transports: [auditTransport(auditFile)],
  });
  // BENCH_AUDIT_TRANSPORT=raw: no winston at all, one JSON line per record on a WriteStream, to see what winston's
  // pipeline costs (the ablation's `audit-to-raw` variant). Not a configuration the benchmark's results use.
  const rawStream =
    process.env.BENCH_AUDIT_TRANSPORT === 'raw'
      ? fs.createWriteStream(auditFile, fileStreamOptions().options)
      : undefined;
  const auditSink =
    process.env.BENCH_AUDIT_TRANSPORT === 'none'
      ? { log(): void {} }
      : rawStream
        ? {
            log(level: string, message: string, meta: Record<string, unknown>): void {
              rawStream.write(JSON.stringify({ level, message, ...meta }) + '\n');
            },
          }
        : auditLogger;
  const m = metrics({ registry: new Registry(), tools: [TOOL_NAME] });
  const lim = limits({
    perUserRpm: NEVER,
    perUserConcurrency: NEVER,
    globalConcurrency: NEVER,
    costBudgetPerHour: NEVER,
    store: redis ? { redis, onOutage: 'fail-open' } : 'memory',
    hooks: m.limiterHooks(),
    logger: quietLogger,
  });
  const named: [string, Middleware][] = [
    ['audit', audit({ logger: auditSink })],
    ['metrics', m],
    ['guardOrigin', guardOrigin()],
    ['methodGuard', methodGuard()],
    ['parse', parse({ logger: quietLogger })],
    ['rejectBatch', rejectBatch({ logger: quietLogger })],
    ['classifyRevision', classifyRevision({ logger: quietLogger })],
    ['checkHeaders', checkHeaders({ paramHeaders: tools.paramHeaders, logger: quietLogger })],
    [
      'apiKeyAuth',
      apiKeyAuth({
        keys: [{ userId: 'bench', hash: hashKey(BENCH_KEY), groups: ['bench'] }],
        logger: quietLogger,
      }),
    ],
    // The limiter's gate sits after authentication, as mcpEndpoint() mounts it.
    ['limitsGate', lim.gate],
    ['limits', lim],
    ['redact', redact({ mode: 'mask' })],
    ['dispatch', dispatcher(tools, (process.env.BENCH_WITHOUT ?? '').split(',').includes('apiKeyAuth'))],
  ];
  // Ablation (`npm run bench -- --ablate`): BENCH_WITHOUT names middlewares to leave out, to see what each costs.
  const without = new Set((process.env.BENCH_WITHOUT ?? '').split(',').filter(Boolean));
  const middlewares = named.filter(([n]) => !without.has(n)).map(([, mw]) => mw);
  const stats: StatsProvider = async () => {
    const series = (await m.registry.getMetricsAsJSON()).reduce(
      (n, metric) => n + ((metric as { values?: unknown[] }).values?.length ?? 0),
      0,
    );
    // The audit backlog: records queued in winston's logger (an object-mode stream, so its writableLength counts
    // records) and bytes waiting in the transport's streams. Both stay near 0 when the file keeps up.
    const auditQueued = auditLogger.writableLength;
    let auditBytes = rawStream?.writableLength ?? 0;
    for (const t of auditLogger.transports) {
      const inner = t as unknown as { writableLength?: number; _stream?: { writableLength?: number } };
      auditBytes += (inner.writableLength ?? 0) + (inner._stream?.writableLength ?? 0);
    }
    return { limits: lim.stats(), metricSeries: series, auditQueued, auditBytes };
  };
  return { middlewares, stats };
}

/** The minimal stack: parse, classifyRevision, dispatch. */
export function minimalStack(): Stack {
  const tools = registry();
  return {
    middlewares: [
      parse({ logger: quietLogger }),
      classifyRevision({ logger: quietLogger }),
      dispatcher(tools, true),
    ],
    stats: () => ({}),
  };
}
