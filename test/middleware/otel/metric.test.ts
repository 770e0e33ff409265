/**
 * `mcp.server.operation.duration` over HTTP with the real metrics SDK: a histogram in seconds with the
 * conventions' buckets, one point per request, the conventions' metric attributes only (a tool's name only when
 * it is a registered tool; no request id, session, client address or port), refusals included; and recorded
 * without a tracer provider too.
 */
import request from 'supertest';
import type { Attributes } from '@opentelemetry/api';
import { DURATION_BUCKETS } from '../../../middleware/otel/providers';
import { PLATFORMS, type Sdk, modern, modernHeaders, serve, startSdk } from './otel-harness';

let sdk: Sdk;
beforeEach(() => {
  sdk = startSdk();
});
afterEach(async () => {
  await sdk.shutdown();
});

const NETWORK = {
  'network.transport': 'tcp',
  'network.protocol.name': 'http',
  'network.protocol.version': '1.1',
};

async function points(): Promise<{ attributes: Attributes; count: number; bounds: number[] }[]> {
  const data = await sdk.durations();
  return (data?.dataPoints ?? []).map((p) => ({
    attributes: p.attributes,
    count: p.value.count,
    bounds: p.value.buckets.boundaries,
  }));
}

describe.each(PLATFORMS)('on %s', (platform) => {
  test('seconds, the conventions buckets, and the attributes of a call to a registered tool', async () => {
    const server = serve(platform, {
      otel: { tracerProvider: sdk.tracerProvider, meterProvider: sdk.meterProvider },
    });
    await request(server)
      .post('/mcp')
      .set(modernHeaders('tools/call', 'echo'))
      .send(modern('tools/call', { name: 'echo', arguments: {} }));
    const data = await sdk.durations();
    expect(data?.descriptor.unit).toBe('s');
    expect(DURATION_BUCKETS).toEqual([0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300]);
    expect(await points()).toEqual([
      {
        attributes: {
          'mcp.method.name': 'tools/call',
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': 'echo',
          'mcp.protocol.version': '2026-07-28',
          ...NETWORK,
        },
        count: 1,
        bounds: [...DURATION_BUCKETS],
      },
    ]);
  });

  test('an unknown tool is recorded without its name; errors with their code; a 401 too', async () => {
    const server = serve(platform, { otel: { meterProvider: sdk.meterProvider } });
    await request(server)
      .post('/mcp')
      .set(modernHeaders('tools/call', 'nope'))
      .send(modern('tools/call', { name: 'nope', arguments: {} }));
    await request(server)
      .post('/mcp')
      .set(modernHeaders('tools/call', 'boom'))
      .send(modern('tools/call', { name: 'boom', arguments: {} }));
    await request(server)
      .post('/mcp')
      .set(modernHeaders('tools/call', 'sorry'))
      .send(modern('tools/call', { name: 'sorry', arguments: {} }));
    await request(server)
      .post('/mcp')
      .set({ ...modernHeaders('tools/list'), Authorization: 'Bearer wrong' })
      .send(modern('tools/list'));
    const got = (await points()).map((p) => p.attributes);
    const common = { 'mcp.method.name': 'tools/call', 'gen_ai.operation.name': 'execute_tool', ...NETWORK };
    expect(got).toEqual(
      expect.arrayContaining([
        { ...common, 'mcp.protocol.version': '2026-07-28', 'rpc.response.status_code': '-32602' },
        {
          ...common,
          'gen_ai.tool.name': 'boom',
          'mcp.protocol.version': '2026-07-28',
          'rpc.response.status_code': '-32603',
          'error.type': '-32603',
        },
        {
          ...common,
          'gen_ai.tool.name': 'sorry',
          'mcp.protocol.version': '2026-07-28',
          'error.type': 'tool_error',
        },
        {
          'mcp.method.name': 'tools/list',
          'rpc.response.status_code': '401',
          'error.type': '401',
          ...NETWORK,
        },
      ]),
    );
    expect(got).toHaveLength(4);
    for (const a of got) {
      for (const key of ['jsonrpc.request.id', 'mcp.session.id', 'client.address', 'client.port'])
        expect(a[key]).toBeUndefined();
    }
  });

  test('an unknown method is _OTHER on the metric', async () => {
    const server = serve(platform, { otel: { meterProvider: sdk.meterProvider } });
    await request(server).post('/mcp').set(modernHeaders('x/y')).send(modern('x/y'));
    const [point] = await points();
    expect(point!.attributes['mcp.method.name']).toBe('_OTHER');
  });
});
