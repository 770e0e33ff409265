/**
 * Issue 36, legacy capability checks: `ctx.requireClientCapabilities()` on a legacy request reads the
 * capabilities its session declared (none without a session), with the official SDK 1.x client as the peer. A
 * tool that requires sampling answers a tool error naming it to a client that did not declare it, and runs for
 * one that did; a modern request keeps its -32021 (HTTP 400).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { dispatch } from '../../middleware/dispatch';
import { ToolRegistry, ok } from '../../handlers/tools';
import { chain } from '../support/dispatch-harness';

const tools = new ToolRegistry({
  tools: [
    {
      name: 'summarise',
      inputSchema: { type: 'object' },
      call: (_args, ctx) => {
        ctx.requireClientCapabilities!({ sampling: {} });
        return ok({ summarised: true });
      },
    },
    {
      name: 'fallback',
      inputSchema: { type: 'object' },
      call: (_args, ctx) => {
        try {
          ctx.requireClientCapabilities!({ sampling: {} });
          return ok({ path: 'sampling' });
        } catch (err) {
          return ok({ path: 'plain', code: (err as { code?: number }).code });
        }
      },
    },
  ],
});

const mw = dispatch({
  anonymous: true,
  handlers: { tools },
  serverInfo: { name: 'legacy-notify-capabilities', version: '1.0.0' },
});
let server: http.Server;
let url: string;
beforeAll(async () => {
  server = http.createServer(chain([mw]));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
});
afterAll(async () => {
  await mw.close();
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

async function v1(sampling: boolean): Promise<Client> {
  const client = new Client(
    { name: 'legacy-notify-capabilities', version: '1.0.0' },
    { capabilities: sampling ? { sampling: {} } : {} },
  );
  if (sampling) {
    client.setRequestHandler(CreateMessageRequestSchema, () => ({
      role: 'assistant',
      content: { type: 'text', text: 'ok' },
      model: 'test',
    }));
  }
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

const textOf = (r: unknown): string =>
  ((r as { content: Array<{ text: string }> }).content[0] ?? { text: '' }).text;

describe('requireClientCapabilities on legacy requests', () => {
  test('a session without sampling: the tool answers a tool error naming the capability', async () => {
    const client = await v1(false);
    const r = await client.callTool({ name: 'summarise', arguments: {} });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toBe('The client did not declare the sampling capability');
    await client.close();
  });

  test('a session with sampling: the tool runs', async () => {
    const client = await v1(true);
    const r = await client.callTool({ name: 'summarise', arguments: {} });
    expect(r.isError).toBeFalsy();
    expect(r.structuredContent).toEqual({ summarised: true });
    await client.close();
  });

  test('the handler can catch it and fall back (-32021)', async () => {
    const client = await v1(false);
    const r = await client.callTool({ name: 'fallback', arguments: {} });
    expect(r.structuredContent).toEqual({ path: 'plain', code: -32021 });
    await client.close();
  });

  test('no session: read as having declared nothing', async () => {
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'summarise', arguments: {} },
    });
    const res = await fetch(url, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        'MCP-Protocol-Version': '2025-11-25',
      },
      body,
    });
    expect(res.status).toBe(200);
    const out = (await res.json()) as { result: { isError?: boolean; content: Array<{ text: string }> } };
    expect(out.result.isError).toBe(true);
    expect(out.result.content[0]!.text).toBe('The client did not declare the sampling capability');
  });
});
