/**
 * What takes a slot: a JSON-RPC request does; a response the client posts (its answer to the server's own
 * request) and a notification do not, and they take nothing from the minute either. So a legacy call that asks
 * the client for input completes with a concurrency of 1, and with the minute spent meanwhile; the gate lets the
 * answer of a caller with a call in flight through. Through mcpEndpoint() on bare node:http.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { JsonObject } from '../../../lib/jsonrpc';
import { elicitationRequest } from '../../../lib/mrtr';
import { hashKey } from '../../../middleware/api-key-auth/index';
import { type McpEndpoint, mcpEndpoint } from '../../../middleware/endpoint/index';
import type { LimitsOptions } from '../../../middleware/limits/index';
import { ToolRegistry, ok, textResult } from '../../../handlers/tools/index';
import { legacyHeaders, openStream, post, until } from '../../support/streaming';

const KEY = 'answers-key-0123456789abcdef';
const AUTH = { ...legacyHeaders(), Authorization: `Bearer ${KEY}` };
const quiet = { error() {}, warn() {} };
/** Shared with the replica that mints the caller's session (so that minting takes nothing from the minute). */
const STATE_KEY = 'answers-state-key-0123456789abcdef';

const tools = () =>
  new ToolRegistry({
    logger: quiet,
    tools: [
      { name: 'hello', inputSchema: { type: 'object' }, call: () => ok({ hi: true }) },
      {
        name: 'greet',
        inputSchema: { type: 'object' },
        call: (_args, ctx) => {
          const content = ctx.inputResponses?.who?.content as JsonObject | undefined;
          if (typeof content?.name === 'string') return textResult(`Hello, ${content.name}`);
          return ctx.inputRequired!({
            inputRequests: {
              who: elicitationRequest('Who are you?', {
                type: 'object',
                properties: { name: { type: 'string' } },
                required: ['name'],
              }),
            },
          });
        },
      },
    ],
  });

const GREET = { jsonrpc: '2.0', id: 10, method: 'tools/call', params: { name: 'greet', arguments: {} } };
const LIST = { jsonrpc: '2.0', id: 11, method: 'tools/list' };
const CANCELLED = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 99 } };

let server: http.Server | undefined;
let e: McpEndpoint | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = undefined;
  e = undefined;
});

async function start(l: LimitsOptions): Promise<string> {
  e = mcpEndpoint({
    auth: { apiKeys: [{ userId: 'lena', hash: hashKey(KEY), groups: ['g'] }] },
    handlers: { tools: tools() },
    dispatch: {
      serverInfo: { name: 'answers', version: '1' },
      inputRequests: { requestStateKey: STATE_KEY },
    },
    limits: l,
    logger: quiet,
  });
  server = http.createServer(e);
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
}

/**
 * The caller's headers with a legacy session that declared elicitation (a legacy client is sent only the
 * requests it negotiated), minted by a replica without limits that shares the key.
 */
async function sessionHeaders(): Promise<Record<string, string>> {
  const replica = http.createServer(
    mcpEndpoint({
      auth: { apiKeys: [{ userId: 'lena', hash: hashKey(KEY), groups: ['g'] }] },
      handlers: { tools: tools() },
      dispatch: {
        serverInfo: { name: 'answers', version: '1' },
        inputRequests: { requestStateKey: STATE_KEY },
      },
      logger: quiet,
    }),
  );
  await new Promise<void>((r) => replica.listen(0, '127.0.0.1', r));
  try {
    const init = await post(
      `http://127.0.0.1:${(replica.address() as AddressInfo).port}/mcp`,
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-11-25',
          capabilities: { elicitation: {} },
          clientInfo: { name: 't', version: '1' },
        },
      },
      AUTH,
    );
    return { ...AUTH, 'Mcp-Session-Id': String(init.headers['mcp-session-id']) };
  } finally {
    replica.closeAllConnections();
    await new Promise<void>((r) => replica.close(() => r()));
  }
}

/** Open the greet call, answer its elicitation (after `meanwhile`), and expect the call to complete. */
async function greetAnswered(url: string, meanwhile: () => Promise<void> = async () => {}): Promise<void> {
  const withSession = await sessionHeaders();
  const st = await openStream(url, GREET, withSession);
  expect(st.status).toBe(200);
  const ask = await st.next();
  expect(ask).toMatchObject({ method: 'elicitation/create' });
  await meanwhile();
  const answer = await post(
    url,
    { jsonrpc: '2.0', id: ask.id, result: { action: 'accept', content: { name: 'Lena' } } },
    withSession,
  );
  expect(answer.status).toBe(202);
  expect(await st.next()).toMatchObject({
    id: 10,
    result: { content: [{ type: 'text', text: 'Hello, Lena' }] },
  });
  await st.ended;
}

describe('responses and notifications take no slot and nothing from the minute', () => {
  test('perUserConcurrency 1: the answer to a legacy input request is accepted, and the call completes', async () => {
    const url = await start({ perUserConcurrency: 1 });
    await greetAnswered(url, async () => {
      // The call holds the only slot: another request waits its turn.
      expect((await post(url, LIST, AUTH)).messages[0]).toMatchObject({
        error: { code: 429, data: { limit: 'user_concurrent' } },
      });
    });
    await until(() => e!.stats().limits!.inflight.user === 0, 'the slot to be given back');
    expect((await post(url, LIST, AUTH)).status).toBe(200);
  });

  test('perUserRpm 1 and perUserConcurrency 1: notifications and answers still go through', async () => {
    const url = await start({ perUserRpm: 1, perUserConcurrency: 1 });
    await greetAnswered(url, async () => {
      expect((await post(url, CANCELLED, AUTH)).status).toBe(202);
    });
  });

  test('the minute refused meanwhile: the gate lets the answer of a call in flight through', async () => {
    const url = await start({ perUserRpm: 2 });
    await greetAnswered(url, async () => {
      expect((await post(url, LIST, AUTH)).status).toBe(200);
      const refused = await post(url, LIST, AUTH);
      expect(refused.messages[0]).toMatchObject({ id: 11, error: { code: 429, data: { limit: 'rpm' } } });
    });
    // The call is over: nothing of the caller is in flight, and the gate refuses before reading.
    await until(() => e!.stats().limits!.inflight.user === 0, 'the call to be settled');
    const gated = await post(url, CANCELLED, AUTH);
    expect(gated.status).toBe(429);
    expect(gated.messages[0]).toEqual({
      jsonrpc: '2.0',
      error: {
        code: 429,
        message: expect.any(String),
        data: { limit: 'rpm', retryAfterSeconds: expect.any(Number) },
      },
    });
  });
});
