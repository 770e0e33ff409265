/**
 * otel() over HTTP with the real SDK: one SERVER span per request, named and attributed per the MCP semantic
 * conventions, its parent the caller's context from `params._meta` (modern and legacy), its outcome classified
 * (error.type, rpc.response.status_code, status), refusals before the parse included.
 */
import request from 'supertest';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import {
  PARENT_ID,
  PLATFORMS,
  TRACEPARENT,
  TRACE_ID,
  type Sdk,
  legacyHeaders,
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

const providers = () => ({ tracerProvider: sdk.tracerProvider, meterProvider: sdk.meterProvider });

describe.each(PLATFORMS)('on %s', (platform) => {
  test('a modern tools/call with _meta.traceparent: the caller is the parent, and every attribute is set', async () => {
    const server = serve(platform, { otel: providers() });
    const res = await request(server)
      .post('/mcp')
      .set(modernHeaders('tools/call', 'echo'))
      .send(
        modern(
          'tools/call',
          { name: 'echo', arguments: { a: 1 } },
          { traceparent: TRACEPARENT, tracestate: 'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE' },
          'req-7',
        ),
      );
    expect(res.status).toBe(200);
    const span = only(sdk.spans());
    expect(span.name).toBe('tools/call echo');
    expect(span.kind).toBe(SpanKind.SERVER);
    expect(span.spanContext().traceId).toBe(TRACE_ID);
    expect(span.parentSpanContext?.spanId).toBe(PARENT_ID);
    expect(span.parentSpanContext?.isRemote).toBe(true);
    expect(span.parentSpanContext?.traceState?.serialize()).toBe('rojo=00f067aa0ba902b7,congo=t61rcWkgMzE');
    expect(span.links).toEqual([]);
    expect(span.status.code).toBe(SpanStatusCode.UNSET);
    expect(span.attributes).toEqual({
      'mcp.method.name': 'tools/call',
      'jsonrpc.request.id': 'req-7',
      'gen_ai.tool.name': 'echo',
      'gen_ai.operation.name': 'execute_tool',
      'mcp.protocol.version': '2026-07-28',
      'network.transport': 'tcp',
      'network.protocol.name': 'http',
      'network.protocol.version': '1.1',
      'client.address': expect.stringMatching(/127\.0\.0\.1/),
      'client.port': expect.any(Number),
    });
    expect(span.attributes['mcp.session.id']).toBeUndefined();
  });

  test('a legacy request with _meta.traceparent: the same parent; mcp.session.id only in a session', async () => {
    const server = serve(platform, { otel: providers() });
    const init = await request(server)
      .post('/mcp')
      .set(legacyHeaders())
      .send({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-06-18',
          capabilities: {},
          clientInfo: { name: 'otel-test', version: '1.0.0' },
        },
      });
    expect(init.status).toBe(200);
    const session = init.headers['mcp-session-id'] as string | undefined;
    const res = await request(server)
      .post('/mcp')
      .set({ ...legacyHeaders(), ...(session === undefined ? {} : { 'Mcp-Session-Id': session }) })
      .send({ jsonrpc: '2.0', id: 3, method: 'tools/list', params: { _meta: { traceparent: TRACEPARENT } } });
    expect(res.status).toBe(200);
    const [initSpan, span] = sdk.spans();
    expect(initSpan!.name).toBe('initialize');
    expect(initSpan!.spanContext().traceId).not.toBe(TRACE_ID);
    expect(span!.name).toBe('tools/list');
    expect(span!.spanContext().traceId).toBe(TRACE_ID);
    expect(span!.parentSpanContext?.spanId).toBe(PARENT_ID);
    expect(span!.attributes['mcp.method.name']).toBe('tools/list');
    expect(span!.attributes['jsonrpc.request.id']).toBe('3');
    expect(span!.attributes['mcp.protocol.version']).toBe('2025-06-18');
    expect(span!.attributes['mcp.session.id']).toBe(session);
  });

  test('a -32602 answer: rpc.response.status_code, no error.type, status UNSET', async () => {
    const server = serve(platform, { otel: providers() });
    await request(server)
      .post('/mcp')
      .set(modernHeaders('tools/call', 'picky'))
      .send(modern('tools/call', { name: 'picky', arguments: {} }));
    const span = only(sdk.spans());
    expect(span.attributes['rpc.response.status_code']).toBe('-32602');
    expect(span.attributes['error.type']).toBeUndefined();
    expect(span.status.code).toBe(SpanStatusCode.UNSET);
  });

  test('an unknown tool: -32602 too, the requested name on the span', async () => {
    const server = serve(platform, { otel: providers() });
    await request(server)
      .post('/mcp')
      .set(modernHeaders('tools/call', 'nope'))
      .send(modern('tools/call', { name: 'nope', arguments: {} }));
    const span = only(sdk.spans());
    expect(span.name).toBe('tools/call nope');
    expect(span.attributes['gen_ai.tool.name']).toBe('nope');
    expect(span.attributes['rpc.response.status_code']).toBe('-32602');
    expect(span.status.code).toBe(SpanStatusCode.UNSET);
  });

  test('a handler that throws: -32603, error.type, status ERROR with the wire message (never the exception)', async () => {
    const server = serve(platform, { otel: providers() });
    const res = await request(server)
      .post('/mcp')
      .set(modernHeaders('tools/call', 'boom'))
      .send(modern('tools/call', { name: 'boom', arguments: {} }));
    expect(res.body.error.code).toBe(-32603);
    const span = only(sdk.spans());
    expect(span.attributes['rpc.response.status_code']).toBe('-32603');
    expect(span.attributes['error.type']).toBe('-32603');
    expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: res.body.error.message });
    expect(JSON.stringify([span.name, span.attributes, span.status, span.events])).not.toContain(
      'secret internal detail',
    );
  });

  test('an isError result: error.type tool_error, status ERROR, no status code', async () => {
    const server = serve(platform, { otel: providers() });
    await request(server)
      .post('/mcp')
      .set(modernHeaders('tools/call', 'sorry'))
      .send(modern('tools/call', { name: 'sorry', arguments: {} }));
    const span = only(sdk.spans());
    expect(span.attributes['error.type']).toBe('tool_error');
    expect(span.attributes['rpc.response.status_code']).toBeUndefined();
    expect(span.status.code).toBe(SpanStatusCode.ERROR);
  });

  test('a 401 before the parse: a span at the end, named from a known Mcp-Method, parent the ambient (none)', async () => {
    const server = serve(platform, { otel: providers() });
    const res = await request(server)
      .post('/mcp')
      .set({ ...modernHeaders('tools/call', 'echo'), Authorization: 'Bearer wrong' })
      .send(modern('tools/call', { name: 'echo', arguments: {} }, { traceparent: TRACEPARENT }));
    expect(res.status).toBe(401);
    const span = only(sdk.spans());
    expect(span.name).toBe('tools/call');
    expect(span.spanContext().traceId).not.toBe(TRACE_ID);
    expect(span.parentSpanContext).toBeUndefined();
    expect(span.attributes['mcp.method.name']).toBe('tools/call');
    expect(span.attributes['gen_ai.tool.name']).toBeUndefined();
    expect(span.attributes['rpc.response.status_code']).toBe('401');
    expect(span.attributes['error.type']).toBe('401');
    expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: 'Unauthorized' });
    expect(span.events.map((e) => [e.name, e.attributes])).toEqual([
      ['mcpware.auth', expect.objectContaining({ outcome: 'invalid' })],
    ]);
  });

  test('a refused request whose Mcp-Method is unknown is _OTHER, the header never on the span', async () => {
    const server = serve(platform, { otel: providers() });
    await request(server)
      .post('/mcp')
      .set({ ...modernHeaders('x'.repeat(300)), Authorization: 'Bearer wrong' })
      .send('{}');
    const span = only(sdk.spans());
    expect(span.name).toBe('_OTHER');
    expect(span.attributes['mcp.method.name']).toBe('_OTHER');
    expect(JSON.stringify(span.attributes)).not.toContain('xxxx');
  });

  test('the limiter gate refusing with 429: error.type 429, status ERROR', async () => {
    const server = serve(platform, { otel: providers(), rpm: 1 });
    const send = () =>
      request(server).post('/mcp').set(modernHeaders('tools/list')).send(modern('tools/list'));
    expect((await send()).status).toBe(200);
    expect((await send()).status).toBe(429);
    const spans = sdk.spans();
    expect(spans).toHaveLength(2);
    const refused = spans[1]!;
    expect(refused.name).toBe('tools/list');
    expect(refused.attributes['rpc.response.status_code']).toBe('429');
    expect(refused.attributes['error.type']).toBe('429');
    expect(refused.status).toEqual({ code: SpanStatusCode.ERROR, message: 'Rate limit exceeded' });
  });

  test('an unknown method is _OTHER in the name and mcp.method.name; its target never shown', async () => {
    const server = serve(platform, { otel: providers() });
    await request(server)
      .post('/mcp')
      .set(modernHeaders('made/up'))
      .send(modern('made/up', { name: 'n' }));
    const span = only(sdk.spans());
    expect(span.name).toBe('_OTHER');
    expect(span.attributes['mcp.method.name']).toBe('_OTHER');
    expect(span.attributes['rpc.response.status_code']).toBe('-32601');
    expect(span.attributes['error.type']).toBeUndefined();
  });

  test('a long tool name is clipped to 128 in the name and the attribute', async () => {
    const server = serve(platform, { otel: providers() });
    const name = 't'.repeat(1000);
    await request(server)
      .post('/mcp')
      .set(modernHeaders('tools/call', name))
      .send(modern('tools/call', { name, arguments: {} }));
    const span = only(sdk.spans());
    expect(span.name).toBe(`tools/call ${'t'.repeat(128)}`);
    expect(span.attributes['gen_ai.tool.name']).toBe('t'.repeat(128));
  });
});
