/**
 * The sdk() tests' stack: the real middlewares in the recommended order (audit with a collecting logger, metrics
 * with a registry of its own, API keys, the limiter's gate, rejectBatch, parse, limits, classifyRevision,
 * checkHeaders, toolFilter, redact) in front of `sdk({ handler })`, on a real node:http server on loopback; and
 * the tools every SDK flavour serves, written once against a small surface, with what they saw.
 */
import http from 'node:http';
import { Registry } from 'prom-client';
import { apiKeyAuth, hashKey } from '../../../middleware/api-key-auth/index';
import { audit } from '../../../middleware/audit/index';
import { checkHeaders } from '../../../middleware/check-headers/index';
import { classifyRevision } from '../../../middleware/classify-revision/index';
import { compose } from '../../../middleware/compose/index';
import { limits, type LimitsOptions } from '../../../middleware/limits/index';
import { metrics } from '../../../middleware/metrics/index';
import { parse } from '../../../middleware/parse/index';
import { redact } from '../../../middleware/redact/index';
import { rejectBatch } from '../../../middleware/reject-batch/index';
import { toolFilter } from '../../../middleware/tool-filter/index';
import { type SdkHandler, type SdkMiddleware, sdk } from '../../../middleware/sdk/index';
import { listenLoopback, sampleKey, samples } from '../../support/observe-harness';
import { rawModernToolCall } from '../../support/raw-call';

export const KEY = 'sdk-test-key-0123456789abcdef';
export const CARD = '4111 1111 1111 1111';
export const MASKED = '[masked:card]';

/** What the tools saw: calls per tool, aborts, the last caller's AuthInfo. */
export class Seen {
  readonly calls = new Map<string, number>();
  aborted = 0;
  authInfo: unknown;
  /** Resolves when a `wait` call has started (its signal is then being watched). */
  waiting: Promise<void>;
  private started!: () => void;
  /** Resolves when a `wait` call saw its signal abort. */
  abortSeen: Promise<void>;
  private abortedNow!: () => void;
  constructor() {
    this.waiting = new Promise((r) => (this.started = r));
    this.abortSeen = new Promise((r) => (this.abortedNow = r));
  }
  count(name: string): number {
    return this.calls.get(name) ?? 0;
  }
  called(name: string, authInfo: unknown): void {
    this.calls.set(name, this.count(name) + 1);
    this.authInfo = authInfo;
  }
  /** The body of the `wait` tool: resolves when the signal aborts. */
  async wait(signal: AbortSignal): Promise<void> {
    this.started();
    await new Promise<void>((resolve) => {
      if (signal.aborted) resolve();
      signal.addEventListener('abort', () => resolve(), { once: true });
    });
    this.aborted++;
    this.abortedNow();
  }
}

/** A text result. */
export function text(t: string, isError = false) {
  return { content: [{ type: 'text' as const, text: t }], ...(isError ? { isError: true } : {}) };
}

/** What one tool call's body gets, whichever SDK runs it. */
export interface ToolContext {
  signal: AbortSignal;
  authInfo: unknown;
  /** Sends `notifications/message` related to the call (the SDK then answers over SSE). */
  log(data: string): Promise<void>;
}

export type ToolBody = (ctx: ToolContext) => Promise<ReturnType<typeof text>>;

/** The tools every flavour serves (`internal_report` is renamed `report` by the stack's toolFilter). */
export function tools(seen: Seen): Record<string, ToolBody> {
  const tool =
    (name: string, body: ToolBody): ToolBody =>
    async (ctx) => {
      seen.called(name, ctx.authInfo);
      return body(ctx);
    };
  return {
    customer: tool('customer', async () => text(`card ${CARD}`)),
    customer_stream: tool('customer_stream', async (ctx) => {
      await ctx.log(`about to answer with card ${CARD}`);
      return text(`card ${CARD}`);
    }),
    broken: tool('broken', async () => text('the warehouse is closed', true)),
    internal_report: tool('internal_report', async () => text('report ready')),
    count: tool('count', async () => text('counted')),
    slow: tool('slow', async () => {
      await new Promise((r) => setTimeout(r, 150));
      return text('slow done');
    }),
    wait: tool('wait', async (ctx) => {
      await seen.wait(ctx.signal);
      return text('aborted');
    }),
  };
}

export interface AuditRecord {
  [key: string]: unknown;
}

export interface Stack {
  url: string;
  audit: AuditRecord[];
  registry: Registry;
  charges: Array<{ ms: number; source: string }>;
  sdk: SdkMiddleware;
  /** The value of one sample of the metrics. */
  metric(name: string, labels?: Record<string, string>): Promise<number | undefined>;
  close(): Promise<void>;
}

/** The stack in front of `handler`, listening on loopback. */
export async function startStack(
  handler: SdkHandler,
  opts: { limits?: LimitsOptions; timeoutMs?: number } = {},
): Promise<Stack> {
  const records: AuditRecord[] = [];
  const registry = new Registry();
  const charges: Array<{ ms: number; source: string }> = [];
  const m = metrics({ registry });
  const quiet = { error() {}, warn() {} };
  const lim = limits({
    perUserRpm: 0,
    ...opts.limits,
    hooks: {
      ...m.limiterHooks(),
      onCharge: (ms: number, source: 'charged' | 'wall_clock') => charges.push({ ms, source }),
    },
    logger: quiet,
  });
  const guarded = sdk({ handler, ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}) });
  const auditor = audit({
    logger: { log: (_level: string, _message: string, meta: AuditRecord) => records.push(meta) },
  });
  const auth = apiKeyAuth({
    keys: [{ userId: 'alice', hash: hashKey(KEY), groups: ['staff'] }],
    logger: quiet,
  });
  // GET (a v1 session's stream) and DELETE (its end) skip the POST-only middlewares, as the docs mount them.
  const others = compose([auditor, m, auth, guarded], { logger: quiet });
  const chain = compose(
    [
      auditor,
      m,
      auth,
      lim.gate,
      rejectBatch(),
      parse(),
      lim,
      classifyRevision(),
      checkHeaders(),
      toolFilter({
        allow: ['customer', 'customer_stream', 'broken', 'report', 'count', 'slow', 'wait'],
        override: { internal_report: { name: 'report' } },
      }),
      redact(),
      guarded,
    ],
    { logger: quiet },
  );
  const server = http.createServer((req, res) => (req.method === 'POST' ? chain : others)(req, res));
  const port = await listenLoopback(server);
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    audit: records,
    registry,
    charges,
    sdk: guarded,
    async metric(name, labels) {
      return samples(await registry.metrics()).get(sampleKey(`mcp_${name}`, labels));
    },
    async close() {
      await guarded.close();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

/** Polls (on the event loop, not a clock) until `check()` holds; for records written after the answer's end. */
export async function until(check: () => boolean, tries = 200): Promise<void> {
  for (let i = 0; i < tries && !check(); i++) await new Promise((r) => setImmediate(r));
  if (!check()) throw new Error('the condition never held');
}

export const AUTH = { Authorization: `Bearer ${KEY}` };
export const PV = 'io.modelcontextprotocol/protocolVersion';

/** A modern tools/call over plain fetch (for the raw SSE stream and the statuses). */
export function rawModernCall(
  url: string,
  name: string,
  headers: Record<string, string> = AUTH,
  signal?: AbortSignal,
): Promise<Response> {
  return rawModernToolCall(url, name, headers, signal ? { signal } : {});
}
