/**
 * mcpEndpoint({ otel }): the otel() middleware given is mounted first, none otherwise; over
 * HTTP with the real SDK (in-memory exporter): the request span, a handler's own spans under it (active context
 * and ctx.otel), the auth and redaction events, the audit record's trace and span ids, a 401 refused before its
 * body is read included.
 */
import { Writable } from 'node:stream';
import http from 'node:http';
import { type Context, context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import winston from 'winston';
import { hashKey } from '../../../middleware/api-key-auth/index';
import { auditJsonFormat } from '../../../middleware/audit/index';
import { mcpEndpoint, type McpEndpointOptions } from '../../../middleware/endpoint/index';
import { otel } from '../../../middleware/otel/index';
import { ToolRegistry, ok } from '../../../handlers/tools/index';
import type { CallContext } from '../../../core/contract';
import { McpTestClient } from '../../../testing/index';

const KEY = 'otel-key-0123456789abcdef';
const AUTH = { Authorization: `Bearer ${KEY}` };
const quiet = { error() {}, warn() {} };

let exporter: InMemorySpanExporter;
let provider: BasicTracerProvider;
beforeAll(() => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
});
afterAll(() => {
  context.disable();
});
beforeEach(() => {
  exporter = new InMemorySpanExporter();
  provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
});
afterEach(() => provider.shutdown());

function options(extra: Partial<McpEndpointOptions>, records: Record<string, unknown>[]): McpEndpointOptions {
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      records.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      cb();
    },
  });
  const logger = winston.createLogger({
    format: auditJsonFormat(),
    transports: [new winston.transports.Stream({ stream })],
  });
  const tracer = provider.getTracer('handler');
  const tools = new ToolRegistry({
    logger: quiet,
    tools: [
      {
        name: 'nest',
        inputSchema: { type: 'object' },
        call: (_args: unknown, ctx: CallContext) => {
          tracer.startSpan('own-active').end();
          tracer.startSpan('own-ctx', {}, ctx.otel as Context).end();
          return ok({ mail: 'alice@example.com' });
        },
      },
    ],
  });
  return {
    auth: { apiKeys: [{ userId: 'ci', hash: hashKey(KEY), groups: ['bots'] }] },
    handlers: { tools },
    dispatch: { serverInfo: { name: 't', version: '1' } },
    audit: { logger },
    logger: quiet,
    ...extra,
  };
}

async function served<T>(e: ReturnType<typeof mcpEndpoint>, fn: (base: string) => Promise<T>): Promise<T> {
  const server = http.createServer(e);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  try {
    return await fn(`http://127.0.0.1:${port}`);
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await e.close({ deadlineMs: 100 });
  }
}

/** Wait for `n` audit records (each is written when its response closes). */
async function recordsOf(list: Record<string, unknown>[], n: number): Promise<Record<string, unknown>[]> {
  for (let i = 0; i < 2000 && list.length < n; i++) await new Promise((r) => setTimeout(r, 2));
  return list;
}

const serverSpan = (name: string): ReadableSpan | undefined =>
  exporter.getFinishedSpans().find((s) => s.name === name && s.kind === 1);

describe('mcpEndpoint({ otel })', () => {
  test('otel: otel({ tracerProvider }): mounted first; spans, events and the audit ids join up', async () => {
    const records: Record<string, unknown>[] = [];
    const e = mcpEndpoint(options({ otel: otel({ tracerProvider: provider, logger: quiet }) }, records));
    expect(typeof e.parts.otel).toBe('function');
    await served(e, async (base) => {
      const c = new McpTestClient(`${base}/mcp`, { headers: AUTH, autoParamHeaders: true });
      const r = await c.callTool('nest');
      expect(r.status).toBe(200);
      expect(r.text).not.toContain('alice@example.com');
    });
    const call = serverSpan('tools/call nest')!;
    expect(call).toBeDefined();
    const { traceId, spanId } = call.spanContext();
    const own = exporter.getFinishedSpans().filter((s) => s.name.startsWith('own-'));
    expect(own.map((s) => [s.name, s.spanContext().traceId, s.parentSpanContext?.spanId]).sort()).toEqual([
      ['own-active', traceId, spanId],
      ['own-ctx', traceId, spanId],
    ]);
    expect(call.events.map((ev) => [ev.name, ev.attributes])).toEqual(
      expect.arrayContaining([
        ['mcpware.auth', { outcome: 'ok', method: 'api-key' }],
        // ok() answers the value twice: as structuredContent and as its JSON text.
        ['mcpware.redaction', { count: 2, rules: 'email' }],
      ]),
    );
    const rec = (await recordsOf(records, 2)).find((x) => x.method === 'tools/call');
    expect(rec).toMatchObject({ trace_id: traceId, span_id: spanId });
  });

  test('a 401 refused before its body is read: its span and its audit record share the ids', async () => {
    const records: Record<string, unknown>[] = [];
    const e = mcpEndpoint(options({ otel: otel({ tracerProvider: provider, logger: quiet }) }, records));
    await served(e, async (base) => {
      const r = await new McpTestClient(`${base}/mcp`).listTools();
      expect(r.status).toBe(401);
    });
    const [rec] = await recordsOf(records, 1);
    expect(rec).toMatchObject({ status: 401, auth: 'missing' });
    const spans = exporter.getFinishedSpans().filter((s) => s.kind === 1);
    expect(spans).toHaveLength(1);
    expect(spans[0]!.events.map((ev) => [ev.name, ev.attributes])).toEqual([
      ['mcpware.auth', { outcome: 'missing' }],
    ]);
    expect(rec).toMatchObject({
      trace_id: spans[0]!.spanContext().traceId,
      span_id: spans[0]!.spanContext().spanId,
    });
  });

  test.each([['mask'], ['warn']] as const)(
    'captureArguments with redact() in %s mode: the arguments on the span are masked',
    async (mode) => {
      const records: Record<string, unknown>[] = [];
      const e = mcpEndpoint(
        options(
          {
            otel: otel({ tracerProvider: provider, captureArguments: true, logger: quiet }),
            redact: { mode },
          },
          records,
        ),
      );
      await served(e, async (base) => {
        const c = new McpTestClient(`${base}/mcp`, { headers: AUTH, autoParamHeaders: true });
        expect((await c.callTool('nest', { to: 'bob@example.com', n: 1 })).status).toBe(200);
      });
      const captured = serverSpan('tools/call nest')!.attributes['gen_ai.tool.call.arguments'];
      expect(typeof captured).toBe('string');
      expect(captured).not.toContain('bob@example.com');
      expect(JSON.parse(captured as string)).toMatchObject({
        n: 1,
        to: expect.stringContaining('@example.com'),
      });
    },
  );

  test.each([['mask'], ['warn']] as const)(
    'captureResults with redact() in %s mode: the result on the span is masked',
    async (mode) => {
      const records: Record<string, unknown>[] = [];
      const e = mcpEndpoint(
        options(
          { otel: otel({ tracerProvider: provider, captureResults: true, logger: quiet }), redact: { mode } },
          records,
        ),
      );
      await served(e, async (base) => {
        const c = new McpTestClient(`${base}/mcp`, { headers: AUTH, autoParamHeaders: true });
        expect((await c.callTool('nest', {})).status).toBe(200);
      });
      const captured = serverSpan('tools/call nest')!.attributes['gen_ai.tool.call.result'];
      expect(typeof captured).toBe('string');
      expect(captured).toContain('@example.com');
      expect(captured).not.toContain('alice@example.com');
    },
  );

  test('otel: otel() with its defaults (the global providers)', async () => {
    trace.setGlobalTracerProvider(provider);
    try {
      const records: Record<string, unknown>[] = [];
      const e = mcpEndpoint(options({ otel: otel({ logger: quiet }) }, records));
      expect(typeof e.parts.otel).toBe('function');
      await served(e, async (base) => {
        const c = new McpTestClient(`${base}/mcp`, { headers: AUTH });
        expect((await c.listTools()).status).toBe(200);
      });
      expect(serverSpan('tools/list')).toBeDefined();
    } finally {
      trace.disable();
    }
  });

  test.each([[undefined], [false]] as const)(
    'otel: %s: no otel() mounted, no span, empty ids',
    async (value) => {
      trace.setGlobalTracerProvider(provider);
      try {
        const records: Record<string, unknown>[] = [];
        const extra: Partial<McpEndpointOptions> = value === undefined ? {} : { otel: value };
        const e = mcpEndpoint(options(extra, records));
        expect(e.parts.otel).toBeUndefined();
        await served(e, async (base) => {
          const c = new McpTestClient(`${base}/mcp`, { headers: AUTH });
          expect((await c.listTools()).status).toBe(200);
        });
        expect(exporter.getFinishedSpans().filter((s) => s.kind === 1)).toEqual([]);
        const [rec] = await recordsOf(records, 1);
        expect(rec).toMatchObject({ trace_id: '', span_id: '' });
      } finally {
        trace.disable();
      }
    },
  );

  test('the otel option is checked: a middleware or false', () => {
    const records: Record<string, unknown>[] = [];
    expect(() => mcpEndpoint(options({ otel: 'yes' as never }, records))).toThrow(/mcpEndpoint.*otel/);
    expect(() => mcpEndpoint(options({ otel: { captureArguments: true } as never }, records))).toThrow(
      /mcpEndpoint.*otel.*middleware/,
    );
    expect(() => mcpEndpoint(options({ otel: true as never }, records))).toThrow(/mcpEndpoint.*otel/);
    expect(() => mcpEndpoint(options({ otle: otel() } as never, records))).toThrow(/"otle".*"otel"/);
  });
});
