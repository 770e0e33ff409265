/**
 * The real OpenTelemetry SDK for otel()'s tests: a tracer provider with an in-memory exporter behind a simple
 * processor, a meter provider with a reader collected on demand, and the stack otel() runs in front of (auth,
 * the limiter's gate, parse, limits, classification, header checks, redact, dispatch over a ToolRegistry), on
 * bare node:http or Express 5.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import express from 'express';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import {
  type HistogramMetricData,
  MeterProvider,
  MetricReader,
  type ResourceMetrics,
} from '@opentelemetry/sdk-metrics';
import { otel } from '../../../middleware/otel/index';
import type { OtelOptions } from '../../../middleware/otel/index';
import { apiKeyAuth, hashKey } from '../../../middleware/api-key-auth/index';
import { limits } from '../../../middleware/limits/index';
import { parse } from '../../../middleware/parse/index';
import { classifyRevision } from '../../../middleware/classify-revision/index';
import { checkHeaders } from '../../../middleware/check-headers/index';
import { redact } from '../../../middleware/redact/index';
import { dispatch } from '../../../middleware/dispatch/index';
import { ToolRegistry, ok } from '../../../handlers/tools/index';
import { McpError } from '../../../lib/errors';
import type { Middleware } from '../../../core/types';
import type { CallContext } from '../../../core/contract';
import { chain } from '../../support/dispatch-harness';

/** A metric reader the test collects when it wants. */
class OnDemandReader extends MetricReader {
  protected async onShutdown(): Promise<void> {}
  protected async onForceFlush(): Promise<void> {}
}

export interface Sdk {
  readonly tracerProvider: BasicTracerProvider;
  readonly meterProvider: MeterProvider;
  readonly exporter: InMemorySpanExporter;
  /** The ended spans. */
  spans(): ReadableSpan[];
  /** The duration histogram's data points now. */
  durations(): Promise<HistogramMetricData | undefined>;
  reset(): void;
  shutdown(): Promise<void>;
}

export function startSdk(): Sdk {
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const reader = new OnDemandReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  return {
    tracerProvider,
    meterProvider,
    exporter,
    spans: () => exporter.getFinishedSpans(),
    async durations() {
      const { resourceMetrics } = (await reader.collect()) as { resourceMetrics: ResourceMetrics };
      for (const scope of resourceMetrics.scopeMetrics)
        for (const m of scope.metrics)
          if (m.descriptor.name === 'mcp.server.operation.duration') return m as HistogramMetricData;
      return undefined;
    },
    reset: () => exporter.reset(),
    async shutdown() {
      await tracerProvider.shutdown();
      await meterProvider.shutdown();
    },
  };
}

export const KEY = 'alice-secret-key';
export type Platform = 'node:http' | 'express';
export const PLATFORMS: Platform[] = ['node:http', 'express'];

/**
 * The tools: `echo` answers its arguments, `boom` throws, `sorry` answers `isError`, `picky` -32602, and
 * `inner` runs `inner` (the test's) and answers what it returns.
 */
export function tools(inner?: (ctx: CallContext) => unknown): ToolRegistry {
  const registry = new ToolRegistry();
  registry.register({
    name: 'inner',
    inputSchema: { type: 'object' },
    call: (_args, ctx) => ok({ inner: inner?.(ctx) ?? null }),
  });
  registry.register({
    name: 'echo',
    inputSchema: { type: 'object' },
    call: (args) => ok({ echoed: args }),
  });
  registry.register({
    name: 'boom',
    inputSchema: { type: 'object' },
    call: () => {
      throw new Error('secret internal detail');
    },
  });
  registry.register({
    name: 'sorry',
    inputSchema: { type: 'object' },
    call: () => ({ content: [{ type: 'text', text: 'no luck' }], isError: true }),
  });
  registry.register({
    name: 'picky',
    inputSchema: { type: 'object' },
    call: () => {
      throw new McpError(-32602, 'Invalid params: picky');
    },
  });
  return registry;
}

export interface StackOptions {
  otel?: OtelOptions;
  /** Mount redact() (default true). */
  redact?: boolean;
  /** The limiter's requests per minute (default: no limiter). */
  rpm?: number;
  /** What the `inner` tool runs. */
  inner?: (ctx: CallContext) => unknown;
  /** Wrap each request in this (an HTTP instrumentation's ambient span). */
  around?: (req: IncomingMessage, res: ServerResponse, go: () => void) => void;
}

/** The stack with otel() first. */
export function stack(opts: StackOptions = {}): Middleware[] {
  const limiter = opts.rpm === undefined ? undefined : limits({ perUserRpm: opts.rpm });
  const mws: (Middleware | undefined)[] = [
    otel(opts.otel),
    apiKeyAuth({ keys: [{ userId: 'alice', hash: hashKey(KEY), groups: ['users'] }] }),
    limiter?.gate,
    parse(),
    limiter,
    classifyRevision(),
    checkHeaders(),
    opts.redact === false ? undefined : redact(),
    dispatch({ handlers: { tools: tools(opts.inner) }, serverInfo: { name: 'otel-test', version: '1.0.0' } }),
  ];
  return mws.filter((m): m is Middleware => m !== undefined);
}

/** A server over the stack (not listening: supertest binds it). Express mounts it on /mcp. */
export function serve(platform: Platform, opts: StackOptions = {}): http.Server {
  const mws = stack(opts);
  if (platform === 'node:http') {
    const run = chain(mws, (res) => {
      res.statusCode = 404;
      res.end();
    });
    return http.createServer((req, res) =>
      opts.around ? opts.around(req, res, () => run(req, res)) : run(req, res),
    );
  }
  const app = express();
  if (opts.around) app.use((req, res, next) => opts.around!(req, res, next));
  app.use('/mcp', ...mws);
  return http.createServer(app);
}

export const PV = 'io.modelcontextprotocol/protocolVersion';

/** A modern request body; `meta` adds `_meta` members. */
export function modern(
  method: string,
  params: Record<string, unknown> = {},
  meta: Record<string, unknown> = {},
  id: string | number = 1,
): Record<string, unknown> {
  return {
    jsonrpc: '2.0',
    id,
    method,
    params: {
      ...params,
      _meta: {
        [PV]: '2026-07-28',
        'io.modelcontextprotocol/clientInfo': { name: 'otel-test', version: '1.0.0' },
        'io.modelcontextprotocol/clientCapabilities': {},
        ...meta,
      },
    },
  };
}

/** A modern request's headers. */
export function modernHeaders(method: string, name?: string): Record<string, string> {
  const h: Record<string, string> = {
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
    'MCP-Protocol-Version': '2026-07-28',
    'Mcp-Method': method,
    Authorization: `Bearer ${KEY}`,
  };
  if (name !== undefined) h['Mcp-Name'] = name;
  return h;
}

/** A legacy request's headers (after initialize: the negotiated revision in MCP-Protocol-Version). */
export function legacyHeaders(): Record<string, string> {
  return {
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
    'MCP-Protocol-Version': '2025-06-18',
    Authorization: `Bearer ${KEY}`,
  };
}

export const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
export const PARENT_ID = '00f067aa0ba902b7';
export const TRACEPARENT = `00-${TRACE_ID}-${PARENT_ID}-01`;

/** The one span named `name` (fails the test when there is not exactly one). */
export function only(spans: readonly ReadableSpan[], name?: string): ReadableSpan {
  const found = name === undefined ? spans : spans.filter((s) => s.name === name);
  if (found.length !== 1)
    throw new Error(
      `expected one span${name ? ` "${name}"` : ''}, got ${spans.map((s) => s.name).join(', ')}`,
    );
  return found[0]!;
}
