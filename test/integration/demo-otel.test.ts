/**
 * Issue 38 end to end: the demo in a process of its own, `OTEL_EXPORTER_OTLP_ENDPOINT` pointed at a real
 * OTLP/HTTP receiver on loopback (test/support/otlp-receiver.ts), in both encodings (`http/json` and
 * `http/protobuf`), with short export intervals. Every method of the demo's contract gets a SERVER span and a
 * `mcp.server.operation.duration` point as the MCP semantic conventions describe them (docs/middleware/otel.md),
 * failures included (a tool that throws, an `isError` result, 401, 429, -32602); the official SDK v2 client's
 * `traceparent` in `_meta` joins the server's span and the audit line to the client's trace; hostile trace
 * context is ignored; the SDK flushes on the graceful stop. Unset, the demo registers nothing.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { ROOT_CONTEXT, SpanKind, defaultTextMapSetter, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { TASKS_EXTENSION } from '../../lib/tasks';
import { McpTestClient } from '../../testing/index';
import { startDemo } from '../support/demo';
import { type DemoProcess, spawnDemo } from '../support/demo-process';
import {
  type OtlpReceiver,
  type ReceivedDataPoint,
  type ReceivedSpan,
  startOtlpReceiver,
} from '../support/otlp-receiver';
import { envelope, modernHeaders, openStream } from '../support/streaming';

const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const KEYS = [
  `demo:sha256:${sha('demo-token')}:users`,
  `root:sha256:${sha('root-token')}:admin|users`,
  `busy:sha256:${sha('busy-token')}:users`,
].join(',');
const AUTH = { Authorization: 'Bearer demo-token' };
const ADMIN = { Authorization: 'Bearer root-token' };
const BUSY = { Authorization: 'Bearer busy-token' };
/** Requests per user per minute: more than the demo user sends here, reached by the busy user's loop. */
const RPM = 60;
const BOUNDS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300];
const DURATION = 'mcp.server.operation.duration';
/** Attributes the conventions keep off the metric (high cardinality). */
const SPAN_ONLY = [
  'jsonrpc.request.id',
  'mcp.session.id',
  'client.address',
  'client.port',
  'mcp.resource.uri',
];

const PROTOCOLS = [
  ['http/json', 'json', 'demo-otel-json'],
  ['http/protobuf', 'protobuf', undefined],
] as const;

interface Running {
  otlp: OtlpReceiver;
  demo: DemoProcess;
  auditFile: string;
}

/** A receiver, and the demo exporting to it in `protocol`, auditing to a file of its own. */
async function start(protocol: string, serviceName: string | undefined, env: Record<string, string> = {}) {
  const otlp = await startOtlpReceiver();
  const auditFile = path.join(mkdtempSync(path.join(tmpdir(), 'mcpware-demo-otel-')), 'audit.log');
  const demo = await spawnDemo({
    MCP_API_KEYS: KEYS,
    MCP_RPM: String(RPM),
    MCP_AUDIT_LOG: auditFile,
    MCP_LOG_LEVEL: 'off',
    OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
    ...(serviceName ? { OTEL_SERVICE_NAME: serviceName } : {}),
    OTEL_BSP_SCHEDULE_DELAY: '50',
    OTEL_METRIC_EXPORT_INTERVAL: '250',
    ...env,
  });
  return { otlp, demo, auditFile };
}

async function stop(r: Running | undefined): Promise<void> {
  if (!r) return;
  r.demo.kill();
  await r.demo.exited;
  await r.otlp.close();
}

/** The audit file's records (written a line per answer; read after the answers it should hold). */
function auditLines(file: string): Array<Record<string, unknown>> {
  return readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** The span of the request whose JSON-RPC id is `id`, once exported. */
function spanOf(otlp: OtlpReceiver, id: string): Promise<ReceivedSpan> {
  return otlp.waitFor((r) => r.spans.find((s) => s.attributes['jsonrpc.request.id'] === id));
}

/** A duration point whose attributes hold `attrs` (and nothing of `absent`), once exported. */
async function pointWith(
  otlp: OtlpReceiver,
  attrs: Record<string, string>,
  absent: readonly string[] = [],
): Promise<ReceivedDataPoint> {
  const matches = (p: ReceivedDataPoint): boolean =>
    p.metric === DURATION &&
    Object.entries(attrs).every(([k, v]) => p.attributes[k] === v) &&
    absent.every((k) => !(k in p.attributes));
  try {
    return await otlp.waitFor((r) => r.points.find(matches), 5000);
  } catch {
    const seen = new Set(
      otlp.points.filter((p) => p.metric === DURATION).map((p) => JSON.stringify(p.attributes)),
    );
    throw new Error(
      `no ${DURATION} point with ${JSON.stringify(attrs)}; series seen:\n${[...seen].join('\n')}`,
    );
  }
}

/** What every server span of an HTTP request carries (conventions: network and client attributes). */
const NETWORK = {
  'network.transport': 'tcp',
  'network.protocol.name': 'http',
  'network.protocol.version': '1.1',
  'client.address': '127.0.0.1',
  'client.port': expect.any(Number),
};

/** One request of the contract: how to send it and what its span is named. */
interface Case {
  id: string;
  method: string;
  name: string;
  send: (id: string) => Promise<{ status: number; body: Record<string, unknown> }>;
  extra?: Record<string, unknown>;
}

describe.each(PROTOCOLS)('the demo exporting over OTLP %s', (protocol, encoding, serviceName) => {
  let r: Running;
  beforeAll(async () => {
    r = await start(protocol, serviceName);
  }, 40_000);
  afterAll(() => stop(r));

  const client = (headers = AUTH, opts: ConstructorParameters<typeof McpTestClient>[1] = {}) =>
    new McpTestClient(r.demo.url, { headers, autoParamHeaders: true, ...opts });

  test('every method of the contract: a SERVER span named per the conventions, with its attributes, and a duration point', async () => {
    const c = client();
    const admin = client(ADMIN);
    // introduce asks for an elicitation; report is a task for a client declaring the extension.
    const able = client(AUTH, {
      clientCapabilities: { elicitation: {}, extensions: { [TASKS_EXTENSION]: {} } },
    });
    await c.listTools({}, { id: 'warm-up' }); // region_status's Mcp-Param-* headers come from this list
    const call =
      (tool: string, args: Record<string, unknown> = {}, on = c) =>
      (id: string) =>
        on.callTool(tool, args, { id });
    const cases: Case[] = [
      {
        id: 'discover',
        method: 'server/discover',
        name: 'server/discover',
        send: (id) => c.discover({ id }),
      },
      { id: 'list', method: 'tools/list', name: 'tools/list', send: (id) => c.listTools({}, { id }) },
      ...(
        [
          ['hello', { who: 'Ada' }],
          ['customer', { id: 'c-1' }],
          ['slow', { ms: 5 }],
          ['region_status', { region: 'eu-west1' }],
          ['note', { text: 'traced' }],
          ['introduce', {}],
        ] as const
      ).map(([tool, args]) => ({
        id: `call-${tool}`,
        method: 'tools/call',
        name: `tools/call ${tool}`,
        send: call(tool, args, tool === 'introduce' ? able : c),
        extra: { 'gen_ai.tool.name': tool, 'gen_ai.operation.name': 'execute_tool' },
      })),
      {
        id: 'call-admin_report',
        method: 'tools/call',
        name: 'tools/call admin_report',
        send: call('admin_report', {}, admin),
        extra: { 'gen_ai.tool.name': 'admin_report' },
      },
      {
        id: 'resources',
        method: 'resources/list',
        name: 'resources/list',
        send: (id) => c.listResources({}, { id }),
      },
      {
        id: 'templates',
        method: 'resources/templates/list',
        name: 'resources/templates/list',
        send: (id) => c.listResourceTemplates({}, { id }),
      },
      {
        id: 'read',
        method: 'resources/read',
        name: 'resources/read',
        send: (id) => c.readResource('docs://getting-started.md', { id }),
        extra: { 'mcp.resource.uri': 'docs://getting-started.md' },
      },
      {
        id: 'prompts',
        method: 'prompts/list',
        name: 'prompts/list',
        send: (id) => c.listPrompts({}, { id }),
      },
      {
        id: 'prompt',
        method: 'prompts/get',
        name: 'prompts/get summarize',
        send: (id) => c.getPrompt('summarize', { topic: 'tracing' }, { id }),
        extra: { 'gen_ai.prompt.name': 'summarize' },
      },
      {
        id: 'complete',
        method: 'completion/complete',
        name: 'completion/complete',
        send: (id) =>
          c.complete(
            { ref: { type: 'ref/prompt', name: 'summarize' }, argument: { name: 'topic', value: 'p' } },
            { id },
          ),
      },
    ];
    for (const k of cases) {
      const res = await k.send(k.id);
      expect({ id: k.id, status: res.status, error: res.body.error }).toEqual({
        id: k.id,
        status: 200,
        error: undefined,
      });
    }
    // A listen stream: its span lasts as long as the stream.
    const st = await openStream(
      r.demo.url,
      {
        jsonrpc: '2.0',
        id: 'listen',
        method: 'subscriptions/listen',
        params: { notifications: { resourceSubscriptions: ['notes://today'] }, _meta: envelope() },
      },
      { ...modernHeaders('subscriptions/listen'), ...AUTH },
    );
    await st.next();
    st.close();
    // A notification: a span without a request id.
    expect((await c.notify('notifications/initialized')).status).toBe(202);

    for (const k of cases) {
      const span = await spanOf(r.otlp, k.id);
      expect({ id: k.id, name: span.name, kind: span.kind, status: span.status }).toEqual({
        id: k.id,
        name: k.name,
        kind: 'SERVER',
        status: { code: 'UNSET' },
      });
      expect(span.attributes).toMatchObject({
        'mcp.method.name': k.method,
        'jsonrpc.request.id': k.id,
        'mcp.protocol.version': '2026-07-28',
        ...NETWORK,
        ...k.extra,
      });
      // A modern request has no session; success has no error attributes.
      for (const absent of ['mcp.session.id', 'error.type', 'rpc.response.status_code'])
        expect({ id: k.id, [absent]: span.attributes[absent] }).toEqual({ id: k.id });
      expect(span.resource['service.name']).toBe(serviceName ?? 'mcpware-demo');
      expect(span.protocol).toBe(encoding);
    }
    const listen = await spanOf(r.otlp, 'listen');
    expect(listen).toMatchObject({ name: 'subscriptions/listen', kind: 'SERVER' });
    const note = await r.otlp.waitFor((x) =>
      x.spans.find((s) => s.name === 'notifications/initialized' && s.kind === 'SERVER'),
    );
    expect(note.attributes['mcp.method.name']).toBe('notifications/initialized');
    expect(note.attributes['jsonrpc.request.id']).toBeUndefined();

    // The duration histogram: one series per method (and registered tool), the conventions' buckets. A prompt's
    // name stays off the metric: only names the server registered go there, and only tools say which they are.
    for (const k of [...cases, { method: 'subscriptions/listen', extra: {} }]) {
      const names = Object.fromEntries(
        Object.entries(k.extra ?? {}).filter(
          ([key]) => key.startsWith('gen_ai.') && key !== 'gen_ai.prompt.name',
        ),
      ) as Record<string, string>;
      const point = await pointWith(r.otlp, {
        'mcp.method.name': k.method,
        'mcp.protocol.version': '2026-07-28',
        'network.transport': 'tcp',
        ...names,
      });
      expect(point).toMatchObject({ type: 'histogram', unit: 's', explicitBounds: BOUNDS });
      expect(point.bucketCounts).toHaveLength(BOUNDS.length + 1);
    }
    for (const p of r.otlp.points.filter((x) => x.metric === DURATION))
      for (const key of SPAN_ONLY) expect({ [key]: p.attributes[key] }).toEqual({ [key]: undefined });
  }, 60_000);

  test('a task: tasks/get and tasks/cancel are spans of their own, linked to the span of the request that made it', async () => {
    const able = client(AUTH, { clientCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } });
    const created = (await able.callTool('report', { seconds: 60 }, { id: 'task-create' })).body.result as {
      taskId: string;
    };
    const onTask = (method: string, id: string) =>
      able.request(method, { taskId: created.taskId }, { id, headers: { 'Mcp-Name': created.taskId } });
    expect((await onTask('tasks/get', 'task-get')).status).toBe(200);
    expect((await onTask('tasks/cancel', 'task-cancel')).status).toBe(200);
    const create = await spanOf(r.otlp, 'task-create');
    expect(create.name).toBe('tools/call report');
    for (const id of ['task-get', 'task-cancel']) {
      const span = await spanOf(r.otlp, id);
      expect(span.name).toBe(id === 'task-get' ? 'tasks/get' : 'tasks/cancel');
      // Linked to the request that created the task.
      expect(span.links).toContainEqual(
        expect.objectContaining({ spanId: create.spanId, traceId: create.traceId }),
      );
    }
  });

  test('a legacy session: initialize, ping and a call carry mcp.session.id and the legacy revision', async () => {
    const c = new McpTestClient(r.demo.url, { era: 'legacy', headers: AUTH, autoInitialize: false });
    const init = await c.initialize({}, { id: 'legacy-init' });
    const session = init.headers['mcp-session-id'] as string | undefined;
    expect(typeof session).toBe('string');
    const headers = { 'Mcp-Session-Id': session! };
    await c.ping({ id: 'legacy-ping', headers });
    await c.callTool('hello', { who: 'Bo' }, { id: 'legacy-call', headers });
    const span = await spanOf(r.otlp, 'legacy-call');
    expect(span.name).toBe('tools/call hello');
    expect(span.attributes).toMatchObject({
      'mcp.method.name': 'tools/call',
      'mcp.protocol.version': '2025-11-25',
      'mcp.session.id': session,
      'gen_ai.tool.name': 'hello',
      ...NETWORK,
    });
    expect((await spanOf(r.otlp, 'legacy-init')).name).toBe('initialize');
    expect((await spanOf(r.otlp, 'legacy-ping')).attributes).toMatchObject({ 'mcp.method.name': 'ping' });
  });

  test('failures: a tool that throws, an isError result, -32602, 401 and 429, each with its status and error.type', async () => {
    const c = client();
    expect((await c.callTool('crash', {}, { id: 'crash' })).body.error).toMatchObject({ code: -32603 });
    expect(
      ((await c.callTool('slow', { ms: 20000 }, { id: 'bad-args' })).body.result as { isError: boolean })
        .isError,
    ).toBe(true);
    expect((await c.callTool('no_such_tool', {}, { id: 'unknown' })).body.error).toMatchObject({
      code: -32602,
    });
    const anon = await new McpTestClient(r.demo.url).listTools({}, { id: 'anon' });
    expect(anon.status).toBe(401);
    let refused: Awaited<ReturnType<McpTestClient['listTools']>> | undefined;
    const busy = client(BUSY);
    for (let i = 0; i <= RPM && !refused; i++) {
      const res = await busy.listTools({}, { id: `busy-${i}` });
      if (res.status === 429) refused = res;
    }
    expect(refused?.status).toBe(429);
    const code429 = String((refused!.body.error as { code: number }).code);

    const crash = await spanOf(r.otlp, 'crash');
    expect(crash).toMatchObject({
      name: 'tools/call crash',
      status: { code: 'ERROR', message: 'Internal error' },
      attributes: { 'error.type': '-32603', 'rpc.response.status_code': '-32603' },
    });
    const badArgs = await spanOf(r.otlp, 'bad-args');
    expect(badArgs.status.code).toBe('ERROR');
    expect(badArgs.attributes['error.type']).toBe('tool_error');
    expect(badArgs.attributes['rpc.response.status_code']).toBeUndefined();
    // -32602 is the caller's mistake, not the server's: the code, no error.type, status unset.
    const unknown = await spanOf(r.otlp, 'unknown');
    expect(unknown).toMatchObject({
      name: 'tools/call no_such_tool',
      status: { code: 'UNSET' },
      attributes: { 'rpc.response.status_code': '-32602', 'gen_ai.tool.name': 'no_such_tool' },
    });
    expect(unknown.attributes['error.type']).toBeUndefined();
    // Refused before the message was read: named from Mcp-Method, the HTTP refusal's code.
    const [unauthorized, limited] = await r.otlp.waitFor((x) => {
      const a = x.spans.find((s) => s.attributes['rpc.response.status_code'] === '401');
      const b = x.spans.find((s) => s.attributes['rpc.response.status_code'] === code429);
      return a && b && ([a, b] as const);
    });
    expect(unauthorized).toMatchObject({
      name: 'tools/list',
      kind: 'SERVER',
      status: { code: 'ERROR' },
      attributes: { 'mcp.method.name': 'tools/list', 'error.type': '401', ...NETWORK },
    });
    expect(limited).toMatchObject({
      name: 'tools/list',
      status: { code: 'ERROR' },
      attributes: { 'mcp.method.name': 'tools/list', 'error.type': code429 },
    });
    expect(limited.events).toContainEqual(
      expect.objectContaining({
        name: 'mcpware.limits.refused',
        attributes: expect.objectContaining({ limit: 'rpm' }),
      }),
    );
    // Nothing of the exception a tool threw reaches a span.
    expect(JSON.stringify(r.otlp.spans)).not.toMatch(/hunter2|password/);

    // The metric: the same classification; an unknown tool's name stays off it.
    await pointWith(r.otlp, { 'gen_ai.tool.name': 'crash', 'error.type': '-32603' });
    await pointWith(r.otlp, { 'gen_ai.tool.name': 'slow', 'error.type': 'tool_error' });
    await pointWith(r.otlp, { 'mcp.method.name': 'tools/call', 'rpc.response.status_code': '-32602' }, [
      'error.type',
      'gen_ai.tool.name',
    ]);
    await pointWith(r.otlp, { 'mcp.method.name': 'tools/list', 'error.type': '401' });
    await pointWith(r.otlp, { 'mcp.method.name': 'tools/list', 'error.type': code429 });
  });

  test.each([
    ['pinned to 2026-07-28', { mode: { pin: '2026-07-28' } }, '2026-07-28'],
    ['in its default (legacy) mode', undefined, '2025-11-25'],
  ] as const)(
    'the official SDK v2 client (%s): its traceparent in _meta parents the server span, and the audit line has its trace id',
    async (_label, versionNegotiation, revision) => {
      // The client's own span, as a client-side instrumentation makes it, injected into the request's _meta.
      const exporter = new InMemorySpanExporter();
      const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
      const clientSpan = provider
        .getTracer('demo-otel-test')
        .startSpan('tools/call hello', { kind: SpanKind.CLIENT });
      const carrier: Record<string, string> = {};
      new W3CTraceContextPropagator().inject(
        trace.setSpan(ROOT_CONTEXT, clientSpan),
        carrier,
        defaultTextMapSetter,
      );
      carrier.tracestate = 'vendor=opaque-1';
      const { traceId, spanId } = clientSpan.spanContext();

      const sdk = new Client(
        { name: 'otel-test', version: '1.0.0' },
        versionNegotiation ? { versionNegotiation } : {},
      );
      await sdk.connect(
        new StreamableHTTPClientTransport(new URL(r.demo.url), { requestInit: { headers: AUTH } }),
      );
      try {
        const who = `trace-${revision}`;
        const answer = (await sdk.callTool({ name: 'hello', arguments: { who }, _meta: carrier })) as {
          structuredContent: unknown;
        };
        expect(answer.structuredContent).toEqual({ greeting: `Hello, ${who}!` });
        clientSpan.end();
        const server = await r.otlp.waitFor((x) =>
          x.spans.find((s) => s.traceId === traceId && s.name === 'tools/call hello'),
        );
        expect(server).toMatchObject({
          kind: 'SERVER',
          parentSpanId: spanId,
          traceState: 'vendor=opaque-1',
          attributes: { 'mcp.protocol.version': revision, 'gen_ai.tool.name': 'hello' },
        });
        const line = auditLines(r.auditFile).find((l) => l.trace_id === traceId);
        expect(line).toMatchObject({ method: 'tools/call', target: 'hello', span_id: server.spanId });
      } finally {
        await sdk.close();
        await provider.shutdown();
      }
    },
  );

  test('hostile trace context is ignored: a fresh trace, never the raw value on a span or in the audit line', async () => {
    const c = client();
    const marker = 'deadbeefdeadbeefdeadbeefdeadbeef';
    const hostile: Array<[string, Record<string, unknown>, Record<string, string>?]> = [
      ['uppercase', { traceparent: `00-${marker.toUpperCase()}-00f067aa0ba902b7-01` }],
      ['zero span', { traceparent: `00-${marker}-0000000000000000-01` }],
      ['version ff', { traceparent: `ff-${marker}-00f067aa0ba902b7-01` }],
      ['injected', { traceparent: `00-${marker}-00f067aa0ba902b7-01\r\nx-evil: 1` }],
      ['huge', { traceparent: `00-${marker}-00f067aa0ba902b7-01`.padEnd(20_000, 'x') }],
      ['not a string', { traceparent: { traceId: marker } }],
      ['array', { traceparent: [`00-${marker}-00f067aa0ba902b7-01`] }],
      // A valid traceparent in an HTTP header: only _meta carries the MCP context (no HTTP instrumentation here).
      ['http header', {}, { traceparent: `00-${marker}-00f067aa0ba902b7-01` }],
    ];
    for (const [label, meta, headers] of hostile) {
      const res = await c.callTool(
        'hello',
        { who: 'x' },
        { id: `hostile-${label}`, meta: meta as never, headers },
      );
      expect({ label, status: res.status }).toEqual({ label, status: 200 });
    }
    // A valid parent with hostile tracestate and baggage: the parent is kept, the rest dropped.
    const parent = `00-${'ab'.repeat(16)}-00f067aa0ba902b7-01`;
    await c.callTool(
      'hello',
      { who: 'x' },
      {
        id: 'hostile-state',
        meta: { traceparent: parent, tracestate: 'a=1,a=2', baggage: `k=${'%'.repeat(9000)}` },
      },
    );
    for (const [label] of hostile) {
      const span = await spanOf(r.otlp, `hostile-${label}`);
      expect({ label, traceId: span.traceId, parent: span.parentSpanId }).toEqual({
        label,
        traceId: expect.not.stringMatching(marker),
        parent: undefined,
      });
    }
    const kept = await spanOf(r.otlp, 'hostile-state');
    expect(kept.traceId).toBe('ab'.repeat(16));
    expect(kept.traceState).toBeUndefined();
    const exported = JSON.stringify(r.otlp.spans);
    for (const raw of [marker, 'x-evil', 'xxxxxxxxxx', 'a=1,a=2', '%%%%'])
      expect({ raw, found: exported.includes(raw) }).toEqual({ raw, found: false });
    const audit = JSON.stringify(
      auditLines(r.auditFile).filter((l) => String(l.rpc_id).startsWith('hostile-')),
    );
    expect(audit).not.toContain(marker);
    expect(audit).not.toContain('x-evil');
  });
});

describe('the demo and the OpenTelemetry environment', () => {
  test('graceful stop (SIGTERM) exports what the batch processor and the metric reader still hold', async () => {
    // Long intervals: nothing leaves before the stop.
    const r = await start('http/protobuf', undefined, {
      OTEL_BSP_SCHEDULE_DELAY: '600000',
      OTEL_METRIC_EXPORT_INTERVAL: '600000',
    });
    try {
      await new McpTestClient(r.demo.url, { headers: AUTH }).callTool('hello', { who: 'x' }, { id: 'last' });
      expect(r.otlp.spans).toEqual([]);
      r.demo.proc.kill('SIGTERM');
      expect((await r.demo.exited).code).toBe(0);
      expect(r.otlp.spans.find((s) => s.attributes['jsonrpc.request.id'] === 'last')?.name).toBe(
        'tools/call hello',
      );
      expect(r.otlp.points.some((p) => p.metric === DURATION)).toBe(true);
    } finally {
      await stop(r);
    }
  }, 40_000);

  test('unset: nothing registered and no otel(): the audit record has empty trace ids', async () => {
    const d = await startDemo({});
    try {
      await new McpTestClient(d.url, { headers: AUTH }).callTool('hello', { who: 'x' }, { id: 'untraced' });
      await d.stop();
      const line = auditLines(d.auditFile).find((l) => l.rpc_id === 'untraced');
      expect(line).toMatchObject({ trace_id: '', span_id: '' });
    } finally {
      await d.stop().catch(() => {});
    }
  });

  test('bad values fail at start-up, naming the variable', async () => {
    await expect(startDemo({ OTEL_EXPORTER_OTLP_ENDPOINT: '127.0.0.1:4318' })).rejects.toThrow(
      /OTEL_EXPORTER_OTLP_ENDPOINT/,
    );
    await expect(startDemo({ OTEL_EXPORTER_OTLP_ENDPOINT: 'ftp://collector' })).rejects.toThrow(
      /OTEL_EXPORTER_OTLP_ENDPOINT must be an http/,
    );
    await expect(
      startDemo({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
      }),
    ).rejects.toThrow(/OTEL_EXPORTER_OTLP_PROTOCOL must be one of http\/protobuf, http\/json, got "grpc"/);
    await expect(
      startDemo({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318',
        OTEL_METRIC_EXPORT_INTERVAL: 'soon',
      }),
    ).rejects.toThrow(/OTEL_METRIC_EXPORT_INTERVAL/);
  });
});
