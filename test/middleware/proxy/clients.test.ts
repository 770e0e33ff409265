/**
 * proxy() in front of an official SDK v2 server in another process (test/support/upstream-server.ts), behind the
 * real stack, with the official clients as peers: the v2 client in both eras and the SDK 1.x client (legacy). Each
 * middleware keeps its promise for the upstream's answers: the card number masked (the upstream's legacy answers
 * are SSE), `isError` recorded as `tool_error` by audit and metrics, the tool filter's rename applied to the
 * upstream's list and refused by the old name before the upstream is called.
 */
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { UPSTREAM_CARD, type UpstreamProcess, startUpstream } from '../../support/upstream-server';
import { AUTH, MASKED_CARD, type Stack, startStack, until } from './stack';

interface CallResult {
  content: Array<{ type: string; text: string }>;
  isError?: boolean;
}
interface Peer {
  listTools(): Promise<{ tools: Array<{ name: string }> }>;
  callTool(p: { name: string; arguments?: Record<string, unknown> }): Promise<unknown>;
  close(): Promise<void>;
}

type PeerKind = 'v2 modern' | 'v2 legacy' | 'v1 legacy';
const PEERS: PeerKind[] = ['v2 modern', 'v2 legacy', 'v1 legacy'];

async function connect(stack: Stack, kind: PeerKind): Promise<Peer> {
  const url = new URL(stack.url);
  if (kind === 'v1 legacy') {
    const client = new ClientV1({ name: 'v1', version: '1.0.0' });
    await client.connect(new TransportV1(url, { requestInit: { headers: AUTH } }));
    return client as unknown as Peer;
  }
  const client = new Client(
    { name: 'v2', version: '1.0.0' },
    kind === 'v2 modern' ? { versionNegotiation: { mode: 'auto' } } : {},
  );
  await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: AUTH } }));
  return client as unknown as Peer;
}

let upstream: UpstreamProcess;
let stack: Stack;
beforeAll(async () => {
  upstream = await startUpstream();
});
afterAll(() => upstream.stop());
beforeEach(async () => {
  stack = await startStack(upstream.url);
});
afterEach(() => stack.close());

describe.each(PEERS)('through the proxy, %s client', (kind) => {
  test('the card number in the upstream result is masked; the e-mail too', async () => {
    const client = await connect(stack, kind);
    const result = (await client.callTool({ name: 'card', arguments: {} })) as CallResult;
    expect(result.content[0]!.text).toContain(MASKED_CARD);
    expect(result.content[0]!.text).not.toContain(UPSTREAM_CARD);
    expect(result.content[0]!.text).not.toContain('jane.doe@example.com');
    await client.close();
    await until(() => stack.audit.some((r) => r.target === 'card'));
    expect(stack.audit.find((r) => r.target === 'card')).toMatchObject({
      method: 'tools/call',
      outcome: 'ok',
    });
  });

  test('isError from the upstream is recorded as tool_error by audit and metrics', async () => {
    const client = await connect(stack, kind);
    // The metrics' tool label names only tools the upstream listed through the proxy (a bounded set).
    await client.listTools();
    const result = (await client.callTool({ name: 'fail', arguments: {} })) as CallResult;
    expect(result.isError).toBe(true);
    await client.close();
    await until(() => stack.audit.some((r) => r.target === 'fail'));
    expect(stack.audit.find((r) => r.target === 'fail')).toMatchObject({ outcome: 'tool_error' });
    await until(
      async () => (await stack.metric('tool_calls_total', { tool: 'fail', outcome: 'tool_error' })) === 1,
    );
  });

  test('the upstream list is filtered and renamed; the old name is refused before the upstream', async () => {
    const client = await connect(stack, kind);
    const names = (await client.listTools()).tools.map((t) => t.name).sort();
    expect(names).toEqual(['card', 'fail', 'hang', 'headers', 'notify']);
    const before = (await upstream.stats()).calls.echo_headers ?? 0;
    const renamed = (await client.callTool({ name: 'headers', arguments: {} })) as CallResult;
    expect(renamed.content[0]!.text).toContain('"host"');
    expect((await upstream.stats()).calls.echo_headers).toBe(before + 1);
    const old = await client.callTool({ name: 'echo_headers', arguments: {} }).then(
      (r) => JSON.stringify(r),
      (e: unknown) => String(e),
    );
    expect(old).toMatch(/Unknown tool/);
    expect((await upstream.stats()).calls.echo_headers).toBe(before + 1);
    await client.close();
  });
});
