/**
 * The forwarding engine's test harness: a real node:http server with the engine's `handle` mounted behind real
 * mcpware middlewares (audit with a collecting logger, metrics with its own registry, an optional toolFilter,
 * redact in mask mode), and helpers to build the web `Response` objects a `send` answers with.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import {
  type Forwarder,
  type ForwardOptions,
  type Send,
  createForwarder,
  resolveForwardOptions,
} from '../../core/forward';
import type { Middleware } from '../../core/types';
import { audit } from '../../middleware/audit/index';
import { compose } from '../../middleware/compose/index';
import { metrics } from '../../middleware/metrics/index';
import { redact } from '../../middleware/redact/index';
import { type ToolFilterOptions, toolFilter } from '../../middleware/tool-filter/index';

export const CARD = '4111 1111 1111 1111';

export interface Harness {
  url: string;
  forwarder: Forwarder;
  audits: Record<string, unknown>[];
  registry: Registry;
  warnings: string[];
  post(body: unknown, headers?: Record<string, string>): Promise<Response>;
  close(): Promise<void>;
}

export async function startHarness(
  send: Send,
  options: ForwardOptions = {},
  extra: { filter?: ToolFilterOptions; before?: Middleware[]; postOnly?: false } = {},
): Promise<Harness> {
  const audits: Record<string, unknown>[] = [];
  const warnings: string[] = [];
  const registry = new Registry();
  const logger = {
    error: (m: string) => warnings.push(m),
    warn: (m: string) => warnings.push(m),
  };
  const forwarder = createForwarder('proxy', send, resolveForwardOptions('proxy', { logger, ...options }));
  const chain: Middleware[] = [
    audit({ logger: { log: (_l: string, _m: string, meta: Record<string, unknown>) => audits.push(meta) } }),
    metrics({ registry }),
    ...(extra.before ?? []),
    ...(extra.filter ? [toolFilter(extra.filter)] : []),
    // redact() (like every POST-only middleware) answers GET and DELETE with 405 itself.
    ...(extra.postOnly === false ? [] : [redact({ mode: 'mask' })]),
    forwarder.handle,
  ];
  const server = http.createServer(compose(chain, { logger: { error() {} } }));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  return {
    url,
    forwarder,
    audits,
    registry,
    warnings,
    post: (body, headers = {}) =>
      fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...headers,
        },
        body: JSON.stringify(body),
      }),
    close: async () => {
      await forwarder.close();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** A JSON answer. */
export function json(value: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(value), {
    status,
    headers: { 'content-type': 'application/json', ...headers },
  });
}

/** A JSON-RPC result for `id`. */
export function result(id: unknown, value: unknown, headers: Record<string, string> = {}): Response {
  return json({ jsonrpc: '2.0', id, result: value }, 200, headers);
}

/** An SSE answer from a stream the test controls: `push(text)`, `end()`, and `pulls` counted. */
export function sse(headers: Record<string, string> = {}): {
  response: Response;
  push(text: string): void;
  end(): void;
  pulls: () => number;
  cancelled: () => boolean;
} {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let pulls = 0;
  let cancelled = false;
  const stream = new ReadableStream<Uint8Array>(
    {
      start: (c) => void (controller = c),
      pull: () => void pulls++,
      cancel: () => void (cancelled = true),
    },
    { highWaterMark: 0 },
  );
  const enc = new TextEncoder();
  return {
    response: new Response(stream, {
      status: 200,
      headers: { 'content-type': 'text/event-stream', ...headers },
    }),
    push: (text) => controller.enqueue(enc.encode(text)),
    end: () => controller.close(),
    pulls: () => pulls,
    cancelled: () => cancelled,
  };
}

/** One SSE event carrying a JSON-RPC message. */
export function event(message: unknown): string {
  return `event: message\ndata: ${JSON.stringify(message)}\n\n`;
}

/** The SSE events' messages of a text. */
export function messagesOf(text: string): unknown[] {
  return text
    .split('\n')
    .filter((l) => l.startsWith('data: '))
    .map((l) => JSON.parse(l.slice(6)) as unknown);
}

export function callTool(id: number, name: string, args: Record<string, unknown> = {}): unknown {
  return { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } };
}
