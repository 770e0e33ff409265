/**
 * Hostile trace context in `params._meta` over HTTP: a traceparent too long, in the wrong case, all zero or not a
 * string; a tracestate or baggage too long or with 10 000 members. Each is ignored (the span's parent is the
 * ambient context, none here; a valid traceparent beside a bad tracestate keeps its parent without the state),
 * and no raw value reaches the span.
 */
import request from 'supertest';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import {
  PARENT_ID,
  PLATFORMS,
  TRACEPARENT,
  TRACE_ID,
  type Sdk,
  modern,
  modernHeaders,
  only,
  serve,
  startSdk,
} from './otel-harness';

let sdk: Sdk;
beforeEach(() => {
  sdk = startSdk();
});
afterEach(async () => {
  await sdk.shutdown();
});

/** Everything a span carries that a caller's string could reach. */
function shown(span: ReadableSpan): string {
  return JSON.stringify([
    span.name,
    span.attributes,
    span.events,
    span.links,
    span.status,
    span.parentSpanContext?.traceState?.serialize(),
  ]);
}

const MEMBERS = Array.from({ length: 10_000 }, (_, i) => `k${i}=v${i}`).join(',');

const badTraceparents: [string, unknown][] = [
  ['too long', `${TRACEPARENT}-${'a'.repeat(600)}`],
  ['upper case', TRACEPARENT.toUpperCase()],
  ['an all-zero trace id', `00-${'0'.repeat(32)}-${PARENT_ID}-01`],
  ['an all-zero span id', `00-${TRACE_ID}-${'0'.repeat(16)}-01`],
  ['version ff', `ff-${TRACE_ID}-${PARENT_ID}-01`],
  ['a number', 12345],
  ['an object', { traceId: TRACE_ID }],
  ['an array', [TRACEPARENT]],
];

describe.each(PLATFORMS)('on %s', (platform) => {
  const providers = () => ({ tracerProvider: sdk.tracerProvider });

  test.each(badTraceparents)('a traceparent that is %s is ignored', async (_what, value) => {
    const server = serve(platform, { otel: providers() });
    const res = await request(server)
      .post('/mcp')
      .set(modernHeaders('tools/list'))
      .send(modern('tools/list', {}, { traceparent: value, tracestate: 'rojo=00f067aa0ba902b7' }));
    expect(res.status).toBe(200);
    const span = only(sdk.spans());
    expect(span.spanContext().traceId).not.toBe(TRACE_ID);
    expect(span.parentSpanContext).toBeUndefined();
    expect(span.links).toEqual([]);
    expect(shown(span)).not.toContain(TRACE_ID);
    expect(shown(span)).not.toContain('rojo');
  });

  test.each([
    ['10 000 members', MEMBERS],
    ['over 512 characters', `a=${'b'.repeat(600)}`],
    ['a key in upper case', 'Rojo=1'],
    ['a key twice', 'a=1,a=2'],
    ['not a string', 7],
  ])('a tracestate with %s is dropped; the valid traceparent stays the parent', async (_what, state) => {
    const server = serve(platform, { otel: providers() });
    await request(server)
      .post('/mcp')
      .set(modernHeaders('tools/list'))
      .send(modern('tools/list', {}, { traceparent: TRACEPARENT, tracestate: state }));
    const span = only(sdk.spans());
    expect(span.spanContext().traceId).toBe(TRACE_ID);
    expect(span.parentSpanContext?.spanId).toBe(PARENT_ID);
    expect(span.parentSpanContext?.traceState).toBeUndefined();
    expect(shown(span)).not.toContain('k9999');
    expect(shown(span)).not.toContain('bbbb');
  });

  test('a tracestate with spaces around its members is carried in its canonical form', async () => {
    const server = serve(platform, { otel: providers() });
    await request(server)
      .post('/mcp')
      .set(modernHeaders('tools/list'))
      .send(modern('tools/list', {}, { traceparent: TRACEPARENT, tracestate: ' rojo=1 ,\t, congo=2 ' }));
    expect(only(sdk.spans()).parentSpanContext?.traceState?.serialize()).toBe('rojo=1,congo=2');
  });

  test('baggage with 10 000 members and hostile values never reaches the span', async () => {
    const server = serve(platform, { otel: providers() });
    await request(server)
      .post('/mcp')
      .set(modernHeaders('tools/list'))
      .send(modern('tools/list', {}, { traceparent: TRACEPARENT, baggage: MEMBERS }));
    const span = only(sdk.spans());
    expect(span.spanContext().traceId).toBe(TRACE_ID);
    expect(shown(span)).not.toContain('k9999');
  });
});
