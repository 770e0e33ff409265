/**
 * sdk() in front of an SDK v2 `createMcpHandler()` server in the same process, behind the real stack, with the
 * official v2 client as the peer in both eras (modern 2026-07-28 and legacy). Each middleware keeps its promise
 * for the SDK's answers: redaction of JSON results and SSE events, `isError` recorded as `tool_error` by audit and
 * metrics, the tool filter's rename on list and call, 401 and 429 before the SDK is called, the cost budget
 * charged by the call's real duration, and the client's going away reaching the tool's signal.
 */
import { McpServer, createMcpHandler } from '@modelcontextprotocol/server';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { z } from 'zod';
import { AUTH, CARD, MASKED, Seen, type Stack, rawModernCall, startStack, tools, until } from './stack';

function v2Handler(seen: Seen) {
  const bodies = tools(seen);
  return createMcpHandler(() => {
    const server = new McpServer({ name: 'v2-shop', version: '1.0.0' }, { capabilities: { logging: {} } });
    for (const [name, body] of Object.entries(bodies)) {
      server.registerTool(name, { description: name, inputSchema: z.object({}) }, async (_args, ctx) =>
        body({
          signal: ctx.mcpReq.signal,
          authInfo: ctx.http?.authInfo,
          log: (data) =>
            ctx.mcpReq.notify({ method: 'notifications/message', params: { level: 'info', data } }),
        }),
      );
    }
    return server;
  });
}

type Era = 'modern' | 'legacy';
const ERAS: Era[] = ['modern', 'legacy'];

async function connect(stack: Stack, era: Era): Promise<Client> {
  const client = new Client(
    { name: `v2-${era}`, version: '1.0.0' },
    era === 'modern' ? { versionNegotiation: { mode: 'auto' } } : {},
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL(stack.url), { requestInit: { headers: AUTH } }),
  );
  return client;
}

interface CallResult {
  content: Array<{ type: string; text: string }>;
  isError?: boolean;
}

let seen: Seen;
let stack: Stack;
let handler: ReturnType<typeof v2Handler>;

beforeEach(async () => {
  seen = new Seen();
  handler = v2Handler(seen);
  stack = await startStack(handler, { limits: { perUserRpm: 0 } });
});
afterEach(async () => {
  await stack.close();
  await handler.close();
});

describe.each(ERAS)('SDK v2 behind the stack, %s era', (era) => {
  test('the card number in a JSON result is masked', async () => {
    const client = await connect(stack, era);
    const result = (await client.callTool({ name: 'customer', arguments: {} })) as CallResult;
    expect(result.content[0]!.text).toBe(`card ${MASKED}`);
    await client.close();
    await until(() => stack.audit.some((r) => r.method === 'tools/call'));
    const record = stack.audit.find((r) => r.method === 'tools/call')!;
    expect(record).toMatchObject({ target: 'customer', outcome: 'ok' });
    expect(JSON.stringify(record)).not.toContain(CARD);
  });

  test('the card number in the SSE log event and in the result is masked', async () => {
    const client = await connect(stack, era);
    const result = (await client.callTool({ name: 'customer_stream', arguments: {} })) as CallResult;
    expect(result.content[0]!.text).toBe(`card ${MASKED}`);
    await client.close();
  });

  test('isError is recorded as tool_error by audit and metrics', async () => {
    const client = await connect(stack, era);
    // Listed first: a tool the server listed is a metrics label of its own (else `other`).
    await client.listTools();
    const result = (await client.callTool({ name: 'broken', arguments: {} })) as CallResult;
    expect(result.isError).toBe(true);
    await client.close();
    await until(() => stack.audit.some((r) => r.target === 'broken'));
    expect(stack.audit.find((r) => r.target === 'broken')).toMatchObject({ outcome: 'tool_error' });
    expect(await stack.metric('tool_calls_total', { tool: 'broken', outcome: 'tool_error' })).toBe(1);
  });

  test('a renamed tool is listed and called by its new name, refused by its old one', async () => {
    const client = await connect(stack, era);
    const listed = await client.listTools();
    const names = listed.tools.map((t) => t.name);
    expect(names).toContain('report');
    expect(names).not.toContain('internal_report');
    const ok = (await client.callTool({ name: 'report', arguments: {} })) as CallResult;
    expect(ok.content[0]!.text).toBe('report ready');
    expect(seen.count('internal_report')).toBe(1);
    const old = client.callTool({ name: 'internal_report', arguments: {} }).then(
      (r) => r as CallResult,
      (e: unknown) => e as Error,
    );
    const refused = await old;
    // Refused as an unknown tool, and the SDK never ran it.
    expect(JSON.stringify(refused instanceof Error ? refused.message : refused)).toMatch(/Unknown tool/);
    expect(seen.count('internal_report')).toBe(1);
    await client.close();
  });

  test('the tool sees the caller from the principal, never a credential', async () => {
    const client = await connect(stack, era);
    await client.callTool({ name: 'count', arguments: {} });
    await client.close();
    expect(seen.authInfo).toMatchObject({ token: '', clientId: 'alice', scopes: [] });
    expect(JSON.stringify(seen.authInfo)).not.toContain('sdk-test-key');
  });
});

describe('SDK v2 behind the stack: HTTP', () => {
  test('the SSE stream carries the masked card in the log event and in the result', async () => {
    const res = await rawModernCall(stack.url, 'customer_stream');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const body = await res.text();
    const events = body.split('\n').filter((l) => l.startsWith('data:'));
    expect(events).toHaveLength(2);
    expect(events[0]).toContain('notifications/message');
    expect(events[0]).toContain(MASKED);
    expect(events[1]).toContain(MASKED);
    expect(body).not.toContain(CARD);
  });

  test('401 without a key; the SDK is not called', async () => {
    const res = await rawModernCall(stack.url, 'count', {});
    expect(res.status).toBe(401);
    expect(seen.count('count')).toBe(0);
  });

  test('the client going away aborts the tool', async () => {
    const controller = new AbortController();
    const pending = rawModernCall(stack.url, 'wait', AUTH, controller.signal).then(
      (r) => r.text(),
      (e: unknown) => e,
    );
    await seen.waiting;
    controller.abort();
    await pending;
    await seen.abortSeen;
    expect(seen.aborted).toBe(1);
  });

  test('close() aborts the exchanges in flight', async () => {
    const pending = rawModernCall(stack.url, 'wait').then(
      (r) => r.status,
      (e: unknown) => e,
    );
    await seen.waiting;
    await stack.sdk.close();
    await seen.abortSeen;
    expect(seen.aborted).toBe(1);
    await pending;
  });
});

describe('SDK v2 behind the stack: limits', () => {
  test('429 before the SDK is called', async () => {
    await stack.close();
    stack = await startStack(handler, { limits: { perUserRpm: 2 } });
    expect((await rawModernCall(stack.url, 'count')).status).toBe(200);
    expect((await rawModernCall(stack.url, 'count')).status).toBe(200);
    const refused = await rawModernCall(stack.url, 'count');
    expect(refused.status).toBe(429);
    expect(seen.count('count')).toBe(2);
  });

  test('the cost budget is charged by the real duration of the call', async () => {
    await stack.close();
    stack = await startStack(handler, { limits: { perUserRpm: 0, costBudgetPerHour: 100 } });
    const first = await rawModernCall(stack.url, 'slow');
    expect(first.status).toBe(200);
    await first.text();
    await until(() => stack.charges.length > 0);
    // The tool slept 150 ms: the charge is at least that, measured from the admission to the answer's end.
    expect(stack.charges[0]!.ms).toBeGreaterThanOrEqual(140);
    const second = await rawModernCall(stack.url, 'slow');
    expect(second.status).toBe(429);
    expect(seen.count('slow')).toBe(1);
  });
});
