/**
 * otel()'s side of the trace contract (core/trace.ts) over HTTP: events, links and attributes given before the
 * span starts are kept and added at its start; the ids and the traceparent name the span; a work span is an
 * INTERNAL child of the request's, ended with its outcome; and otel()'s options are validated by name.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import request from 'supertest';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { type RequestTrace, type WorkTrace, traceOf } from '../../../core/trace';
import { OPTION_ERRORS } from '../../../core/options';
import type { Middleware } from '../../../core/types';
import { otel } from '../../../middleware/otel/index';
import { chain } from '../../support/dispatch-harness';
import {
  PARENT_ID,
  TRACEPARENT,
  TRACE_ID,
  type Sdk,
  modern,
  modernHeaders,
  only,
  stack,
  startSdk,
} from './otel-harness';

let sdk: Sdk;
beforeEach(() => {
  sdk = startSdk();
});
afterEach(async () => {
  await sdk.shutdown();
});

const OTHER_PARENT = `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01`;

/** The stack with `before` right after otel() (before the parse) and `after` in front of dispatch(). */
function server(before: Middleware, after: Middleware): http.Server {
  const [o, ...rest] = stack({ otel: { tracerProvider: sdk.tracerProvider } });
  const last = rest.pop()!;
  const run = chain([o!, before, ...rest, after, last], (res: ServerResponse) => {
    res.statusCode = 404;
    res.end();
  });
  return http.createServer(run);
}

test('events, links and attributes given before the start are on the span; the ids name it', async () => {
  let early: { traceId?: string; traceparent?: string; context: unknown } | undefined;
  let late: { traceId?: string; spanId?: string; traceparent?: string } | undefined;
  const before: Middleware = (req: IncomingMessage, _res, next) => {
    const t = traceOf(req.locals)!;
    t.event('test.early', { n: 1 });
    t.link(OTHER_PARENT, { 'mcpware.link': 'test' });
    t.link('not a traceparent');
    t.set({ 'test.attr': 'early', 'test.other': 2 });
    early = { traceId: t.traceId, traceparent: t.traceparent, context: t.context };
    next();
  };
  const after: Middleware = (req, _res, next) => {
    const t = traceOf(req.locals)!;
    t.event('test.late', { ok: true });
    t.set({ 'test.attr': 'late' });
    t.link(OTHER_PARENT);
    late = { traceId: t.traceId, spanId: t.spanId, traceparent: t.traceparent };
    next();
  };
  await request(server(before, after))
    .post('/mcp')
    .set(modernHeaders('tools/list'))
    .send(modern('tools/list', {}, { traceparent: TRACEPARENT }));
  expect(early).toEqual({ traceId: undefined, traceparent: undefined, context: undefined });
  const span = only(sdk.spans());
  const events = span.events.filter((e) => e.name !== 'mcpware.auth');
  expect(events.map((e) => [e.name, e.attributes])).toEqual([
    ['test.early', { n: 1 }],
    ['test.late', { ok: true }],
  ]);
  expect(span.events.every((e) => e.time[0] >= span.startTime[0])).toBe(true);
  expect(span.attributes['test.attr']).toBe('late');
  expect(span.attributes['test.other']).toBe(2);
  expect(span.links.map((l) => [l.context.traceId, l.attributes ?? {}])).toEqual([
    ['a'.repeat(32), { 'mcpware.link': 'test' }],
    ['a'.repeat(32), {}],
  ]);
  expect(late).toEqual({
    traceId: TRACE_ID,
    spanId: span.spanContext().spanId,
    traceparent: `00-${TRACE_ID}-${span.spanContext().spanId}-01`,
  });
  expect(span.parentSpanContext?.spanId).toBe(PARENT_ID);
});

test('a work span: INTERNAL, child of the request span, outliving it, ended with its outcome', async () => {
  const works: WorkTrace[] = [];
  let trace: RequestTrace | undefined;
  const before: Middleware = (req, _res, next) => {
    trace = traceOf(req.locals);
    expect(trace!.work('too early')).toBeUndefined();
    next();
  };
  const after: Middleware = (req, _res, next) => {
    const t = traceOf(req.locals)!;
    for (const name of ['ok work', 'failed work', 'invalid work', 'tool work'])
      works.push(t.work(name, { 'test.kind': name })!);
    next();
  };
  await request(server(before, after))
    .post('/mcp')
    .set(modernHeaders('tools/list'))
    .send(modern('tools/list'));
  const request_ = only(sdk.spans());
  expect(trace!.work('after the end')).toBeDefined();
  works[0]!.event('step', { i: 1 });
  expect(works[0]!.run(() => 7)).toBe(7);
  works[0]!.end();
  works[1]!.end({ code: -32603, message: 'Internal error', attributes: { 'mcpware.task.status': 'failed' } });
  works[2]!.end({ code: -32602, message: 'Invalid params' });
  works[3]!.end({ toolError: true });
  works[3]!.end({ code: -32603 });
  const spans = sdk.spans().filter((s) => s !== request_);
  expect(spans.map((s) => s.name)).toEqual(['ok work', 'failed work', 'invalid work', 'tool work']);
  for (const s of spans) {
    expect(s.kind).toBe(SpanKind.INTERNAL);
    expect(s.parentSpanContext?.spanId).toBe(request_.spanContext().spanId);
  }
  const [ok, failed, invalid, tool] = spans;
  expect(ok!.events.map((e) => e.name)).toEqual(['step']);
  expect(ok!.status.code).toBe(SpanStatusCode.UNSET);
  expect(failed!.attributes).toMatchObject({
    'rpc.response.status_code': '-32603',
    'error.type': '-32603',
    'mcpware.task.status': 'failed',
  });
  expect(failed!.status).toEqual({ code: SpanStatusCode.ERROR, message: 'Internal error' });
  expect(invalid!.attributes['error.type']).toBeUndefined();
  expect(invalid!.status.code).toBe(SpanStatusCode.UNSET);
  expect(tool!.attributes['error.type']).toBe('tool_error');
  expect(tool!.attributes['rpc.response.status_code']).toBeUndefined();
});

describe('options', () => {
  test('an unknown option is refused by name, with the closest known one', () => {
    expect(() => otel({ captureArgs: true } as never)).toThrow(
      expect.objectContaining({
        code: OPTION_ERRORS.unknown,
        message: expect.stringContaining(
          'otel: unknown option "captureArgs"; did you mean "captureArguments"?',
        ),
      }),
    );
  });

  test.each([
    ['tracerProvider', {}],
    ['meterProvider', 'global'],
    ['captureArguments', 'yes'],
    ['captureResults', 1],
    ['resourceUriInSpanName', null],
    ['logger', {}],
  ])('a bad %s is refused', (name, value) => {
    expect(() => otel({ [name]: value } as never)).toThrow(
      expect.objectContaining({ code: OPTION_ERRORS.invalid, message: expect.stringContaining(`"${name}"`) }),
    );
  });

  test('the options are documented', () => {
    expect(() => otel({ nope: 1 } as never)).toThrow(/docs\/middleware\/otel\.md#options/);
  });
});
