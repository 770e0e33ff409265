/**
 * The proxy tests' stack: the real middlewares in the recommended order (audit with a collecting logger, metrics
 * with a registry of its own, API keys, the limiter's gate, rejectBatch, parse, limits, classifyRevision,
 * checkHeaders, toolFilter, redact) in front of `proxy({ url })`, on a real node:http server on loopback.
 */
import http from 'node:http';
import { Registry } from 'prom-client';
import { apiKeyAuth, hashKey } from '../../../middleware/api-key-auth/index';
import { audit } from '../../../middleware/audit/index';
import { checkHeaders } from '../../../middleware/check-headers/index';
import { classifyRevision } from '../../../middleware/classify-revision/index';
import { compose } from '../../../middleware/compose/index';
import { type LimitsOptions, limits } from '../../../middleware/limits/index';
import { metrics } from '../../../middleware/metrics/index';
import { parse } from '../../../middleware/parse/index';
import { type ProxyMiddleware, type ProxyOptions, proxy } from '../../../middleware/proxy/index';
import { redact } from '../../../middleware/redact/index';
import { rejectBatch } from '../../../middleware/reject-batch/index';
import { toolFilter } from '../../../middleware/tool-filter/index';
import { listenLoopback, sampleKey, samples } from '../../support/observe-harness';
import { rawModernToolCall } from '../../support/raw-call';

export const KEY = 'proxy-test-key-0123456789abcdef';
export const AUTH = { Authorization: `Bearer ${KEY}` };
export const MASKED_CARD = '[masked:card]';
export const PV = 'io.modelcontextprotocol/protocolVersion';

export type AuditRecord = Record<string, unknown>;

export interface Stack {
  url: string;
  audit: AuditRecord[];
  registry: Registry;
  proxy: ProxyMiddleware;
  /** The value of one sample of the metrics. */
  metric(name: string, labels?: Record<string, string>): Promise<number | undefined>;
  close(): Promise<void>;
}

/**
 * The stack in front of the upstream at `url`. The tool filter lets the fixture's tools through, `echo_headers`
 * renamed `headers`.
 */
export async function startStack(
  url: string,
  opts: { limits?: LimitsOptions; proxy?: Omit<ProxyOptions, 'url'> } = {},
): Promise<Stack> {
  const records: AuditRecord[] = [];
  const registry = new Registry();
  const m = metrics({ registry });
  const quiet = { error() {}, warn() {} };
  const lim = limits({ perUserRpm: 0, ...opts.limits, hooks: m.limiterHooks(), logger: quiet });
  const upstream = proxy({ url, logger: quiet, ...opts.proxy });
  const chain = compose(
    [
      audit({ logger: { log: (_level: string, _message: string, meta: AuditRecord) => records.push(meta) } }),
      m,
      apiKeyAuth({ keys: [{ userId: 'alice', hash: hashKey(KEY), groups: ['staff'] }], logger: quiet }),
      lim.gate,
      rejectBatch(),
      parse(),
      lim,
      classifyRevision(),
      checkHeaders(),
      toolFilter({
        allow: ['card', 'fail', 'notify', 'hang', 'headers'],
        override: { echo_headers: { name: 'headers' } },
      }),
      redact(),
      upstream,
    ],
    { logger: quiet },
  );
  const server = http.createServer(chain);
  const port = await listenLoopback(server);
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    audit: records,
    registry,
    proxy: upstream,
    async metric(name, labels) {
      return samples(await registry.metrics()).get(sampleKey(`mcp_${name}`, labels));
    },
    async close() {
      await upstream.close();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

/** Polls (on the event loop, not a clock) until `check()` holds; for records written after the answer's end. */
export async function until(check: () => boolean | Promise<boolean>, tries = 400): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (await check()) return;
    await new Promise((r) => setImmediate(r));
  }
  throw new Error('the condition never held');
}

/** A modern tools/call over plain fetch (for the raw answer: status, headers, SSE events). */
export function rawModernCall(
  url: string,
  name: string,
  headers: Record<string, string> = AUTH,
  id: number | string = 7,
): Promise<Response> {
  return rawModernToolCall(url, name, headers, { id });
}

/** The `data` of each SSE event of `body`, parsed. */
export function sseMessages(body: string): Array<Record<string, unknown>> {
  return body
    .split('\n')
    .filter((l) => l.startsWith('data:'))
    .map((l) => JSON.parse(l.slice(5)) as Record<string, unknown>);
}
