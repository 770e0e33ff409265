/**
 * dispatch() under a request trace (core/trace.ts): the handler runs in the request span's context, `ctx.otel`
 * is that context, and the answered result (after redaction) is handed to the trace. Over HTTP, with a real
 * OpenTelemetry SDK behind a hand-made trace (test/support/otel-hand-trace.ts).
 */
import { type Context, trace } from '@opentelemetry/api';
import { dispatch } from '../../../middleware/dispatch/index';
import { redact } from '../../../middleware/redact/index';
import type { CallContext } from '../../../core/contract';
import { ERAS, type Stack, stack } from '../../support/dispatch-harness';
import { type HandTracing, handTracing, parentOf } from '../../support/otel-hand-trace';

const SERVER_INFO = { name: 'otel-test', version: '1.0.0' };

let tracing: HandTracing;
let s: Stack;
const seen: { otel: unknown[] } = { otel: [] };

beforeAll(async () => {
  tracing = handTracing();
  const { tracer } = tracing;
  const tools = {
    list: () => ({ tools: [{ name: 'nest', inputSchema: { type: 'object' } }] }),
    call: async (p: Record<string, unknown>, ctx: CallContext) => {
      seen.otel.push(ctx.otel);
      tracer.startSpan('own-active').end();
      if (ctx.otel !== undefined) tracer.startSpan('own-ctx', {}, ctx.otel as Context).end();
      await new Promise((r) => setImmediate(r));
      tracer.startSpan('own-after-await').end();
      return { content: [{ type: 'text', text: `mail ${String(p.name)} at alice@example.com` }] };
    },
  };
  s = await stack('node:http', [
    tracing.middleware,
    redact(),
    dispatch({ anonymous: true, handlers: { tools }, serverInfo: SERVER_INFO }),
  ]);
});

afterAll(async () => {
  await s.close();
  await tracing.close();
});

describe.each(ERAS)('dispatch() under a request trace (%s)', (era) => {
  test("a handler's own spans (active context, ctx.otel, after an await) are children of the request span", async () => {
    const before = tracing.logs.length;
    const r = await s.client({ era }).callTool('nest');
    expect(r.status).toBe(200);
    const log = tracing.logs.filter((l) => l.req.method === 'POST').at(-1)!;
    expect(tracing.logs.length).toBeGreaterThan(before);
    const own = tracing
      .spans()
      .filter((x) => x.spanContext().traceId === log.traceId && x.name !== 'request');
    expect(own.map((x) => x.name).sort()).toEqual(['own-active', 'own-after-await', 'own-ctx']);
    for (const x of own) expect(parentOf(x)).toBe(log.spanId);
    // ctx.otel is the request span's context.
    expect(trace.getSpan(seen.otel.at(-1) as Context)?.spanContext().spanId).toBe(log.spanId);
  });

  test('the trace is handed the answered result, as redact() masked it', async () => {
    const r = await s.client({ era }).callTool('nest');
    expect(r.status).toBe(200);
    const log = tracing.logs.at(-1)!;
    expect(log.results).toHaveLength(1);
    expect(JSON.stringify(log.results[0])).not.toContain('alice@example.com');
    expect(log.results[0]).toMatchObject({ content: [{ type: 'text' }] });
  });
});

test('without a trace, ctx.otel is undefined and the handler runs in no span', async () => {
  const tools = {
    list: () => ({ tools: [] }),
    call: (_p: Record<string, unknown>, ctx: CallContext) => {
      seen.otel.push(ctx.otel);
      tracing.tracer.startSpan('untraced').end();
      return { content: [] };
    },
  };
  const bare = await stack('node:http', [
    dispatch({ anonymous: true, handlers: { tools }, serverInfo: SERVER_INFO }),
  ]);
  try {
    const r = await bare.client().callTool('x');
    expect(r.status).toBe(200);
  } finally {
    await bare.close();
  }
  expect(seen.otel.at(-1)).toBeUndefined();
  const untraced = tracing.spans().find((x) => x.name === 'untraced')!;
  expect(parentOf(untraced)).toBeUndefined();
});
