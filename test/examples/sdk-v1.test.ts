/**
 * examples/sdk-v1.ts as a new user runs it: an SDK v1 application guarded by `mcpEndpoint({ backend: sdk() })`,
 * reached by the official 1.x client over HTTP. The card number is masked, the tool error is audited and
 * counted as `tool_error`, the minute's limit answers 429 before the SDK runs, and a caller without the key is
 * refused.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createSdkV1App } from '../../examples/sdk-v1';
import { jsonLogger } from '../support/json-logger';

async function start(perUserRpm: number) {
  const log = jsonLogger();
  const app = createSdkV1App({ perUserRpm, auditLogger: log.logger });
  const server = http.createServer(app.app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    log,
    async client(key = 'dev-key') {
      const c = new Client({ name: 'new-user', version: '1.0.0' });
      await c.connect(
        new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
          requestInit: { headers: { Authorization: `Bearer ${key}` } },
        }),
      );
      return c;
    },
    async close() {
      await app.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

type Text = { content: { type: string; text: string }[]; isError?: boolean };

test('the card number and e-mail leave masked; the tool error is audited and counted as tool_error', async () => {
  const s = await start(60);
  try {
    const c = await s.client();
    const customer = (await c.callTool({ name: 'customer', arguments: { id: 'c-1' } })) as Text;
    const text = customer.content[0]!.text;
    expect(text).not.toContain('4111 1111 1111 1111');
    expect(text).not.toContain('sam.carter@acme.com');
    expect(text).toContain('"id":"c-1"');
    const refund = (await c.callTool({ name: 'refund', arguments: { order: 'o-9' } })) as Text;
    expect(refund.isError).toBe(true);
    await c.close();
    const records = s.log.lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(records.find((r) => r.target === 'refund')).toMatchObject({
      outcome: 'tool_error',
      principal: 'dev',
    });
    expect(records.find((r) => r.target === 'customer')).toMatchObject({ outcome: 'ok' });
    const metrics = await (await fetch(`${s.base}/metrics`)).text();
    expect(metrics).toMatch(/tool_calls_total\{[^}]*outcome="tool_error"[^}]*\} 1/);
  } finally {
    await s.close();
  }
});

test("the minute's limit answers 429 before the SDK runs; no key, 401", async () => {
  const s = await start(3);
  try {
    const c = await s.client(); // initialize: the minute's first request (a notification takes none)
    await c.callTool({ name: 'customer', arguments: { id: 'a' } });
    await c.callTool({ name: 'customer', arguments: { id: 'b' } });
    await expect(c.callTool({ name: 'customer', arguments: { id: 'c' } })).rejects.toThrow(/429/);
    await c.close();
    await expect(s.client('wrong-key')).rejects.toThrow(/401/);
  } finally {
    await s.close();
  }
});
