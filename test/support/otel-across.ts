/**
 * For the tests of a trace that continues across requests: the real OpenTelemetry SDK (an in-memory exporter, the
 * AsyncLocalStorage context manager) behind `otel()`, a dispatcher on node:http with `otel()` mounted first, and
 * modern requests whose `_meta` may carry the client's `traceparent`.
 */
import { type Context, context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type DispatchMiddleware, type DispatchOptions, dispatch } from '../../middleware/dispatch/index';
import { otel } from '../../middleware/otel/index';
import type { JsonObject } from '../../lib/jsonrpc';
import { chain } from './dispatch-harness';
import { envelope, modernHeaders, until } from './streaming';

export const QUIET = { error() {}, warn() {}, info() {}, debug() {} };

/** The SDK: spans end up in `spans()`. */
export interface Sdk {
  readonly provider: BasicTracerProvider;
  spans(): ReadableSpan[];
  /** Wait until a finished span matches. */
  span(pred: (s: ReadableSpan) => boolean, what: string): Promise<ReadableSpan>;
  close(): Promise<void>;
}

export function startSdk(): Sdk {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  const spans = (): ReadableSpan[] => exporter.getFinishedSpans();
  return {
    provider,
    spans,
    async span(pred, what) {
      await until(() => spans().some(pred), what);
      return spans().find(pred)!;
    },
    async close() {
      await provider.shutdown();
      context.disable();
    },
  };
}

export interface TracedServer {
  readonly url: string;
  readonly mcp: DispatchMiddleware;
  close(): Promise<void>;
}

/** `otel()` then `dispatch(options)` (anonymous) on node:http. */
export async function tracedServer(sdk: Sdk, options: Partial<DispatchOptions>): Promise<TracedServer> {
  const mcp = dispatch({
    anonymous: true,
    serverInfo: { name: 'otel-across', version: '1' },
    logger: QUIET,
    ...options,
  } as DispatchOptions);
  const server: Server = http.createServer(
    chain([otel({ tracerProvider: sdk.provider, logger: QUIET }), mcp]),
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    mcp,
    async close() {
      await mcp.close({ deadlineMs: 100 });
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

let nextId = 1;

/** A modern request; `meta` adds to its `_meta` (a `traceparent`, say). Resolves with its id and answer. */
export async function call(
  url: string,
  method: string,
  params: JsonObject,
  caps: JsonObject = {},
  meta: JsonObject = {},
): Promise<{
  id: number;
  result?: JsonObject & Record<string, any>;
  error?: { code: number; message: string; data?: any };
}> {
  const id = nextId++;
  const name = typeof params.taskId === 'string' ? params.taskId : (params.name as string | undefined);
  const res = await fetch(url, {
    method: 'POST',
    headers: modernHeaders(method, name),
    body: JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta: envelope(caps, meta) } }),
  });
  return { ...((await res.json()) as object), id };
}

/** The finished span of the request whose JSON-RPC id is `id`. */
export function spanOf(sdk: Sdk, id: number): Promise<ReadableSpan> {
  return sdk.span((s) => s.attributes['jsonrpc.request.id'] === String(id), `the span of request ${id}`);
}

/** The span context of `s`'s parent (SDK 2.x). */
export function parentOf(s: ReadableSpan): string | undefined {
  return s.parentSpanContext?.spanId;
}

/** The context to start a handler's span in: `ctx.otel` as the API types it. */
export const asContext = (v: unknown): Context => v as Context;
