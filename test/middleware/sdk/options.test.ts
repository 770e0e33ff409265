/**
 * sdk() checks its options at construction: an unknown name is refused with the closest known one, a missing or
 * wrong handler with what to pass, and a face that would write its answer past mcpware (the v1 node
 * `StreamableHTTPServerTransport`, a node `(req, res, next)` handler, a bare server, a stateless web-standard
 * transport that serves one request) with what to pass instead. The real SDK classes are what is refused.
 */
import { McpServer as McpServerV1 } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { McpServer, createMcpHandler } from '@modelcontextprotocol/server';
import { sdk } from '../../../middleware/sdk/index';

const v2 = () => createMcpHandler(() => new McpServer({ name: 'x', version: '1' }));

function refusal(f: () => unknown): TypeError & { code?: string } {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(TypeError);
    return e as TypeError & { code?: string };
  }
  throw new Error('not refused');
}

test('an unknown option is refused with the closest known name', () => {
  const e = refusal(() => sdk({ handler: v2(), timeoutMS: 5 } as never));
  expect(e.code).toBe('ERR_MCPWARE_UNKNOWN_OPTION');
  expect(e.message).toMatch(/^sdk: unknown option "timeoutMS"; did you mean "timeoutMs"\?/);
});

test('a handler is required', () => {
  const e = refusal(() => sdk({} as never));
  expect(e.code).toBe('ERR_MCPWARE_MISSING_OPTION');
  expect(e.message).toMatch(/^sdk: option "handler" is required/);
  expect(e.message).toMatch(/createMcpHandler/);
});

test('the v1 node StreamableHTTPServerTransport is refused, naming the web-standard one', () => {
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => 'x' });
  const e = refusal(() => sdk({ handler: transport as never }));
  expect(e.code).toBe('ERR_MCPWARE_INVALID_OPTION');
  expect(e.message).toMatch(/node StreamableHTTPServerTransport/);
  expect(e.message).toMatch(/use WebStandardStreamableHTTPServerTransport/);
});

test('a node (req, res, next) handler is refused', () => {
  const e = refusal(() =>
    sdk({ handler: ((_req: unknown, _res: unknown, _next: unknown) => undefined) as never }),
  );
  expect(e.message).toMatch(/a node \(req, res, next\) handler/);
});

test('a bare McpServer is refused, naming what to connect it to', () => {
  const e = refusal(() => sdk({ handler: new McpServerV1({ name: 'x', version: '1' }) as never }));
  expect(e.message).toMatch(/connect it to a WebStandardStreamableHTTPServerTransport/);
});

test('a stateless web-standard transport (one request only) is refused, saying to make one per request', () => {
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  const e = refusal(() => sdk({ handler: transport }));
  expect(e.message).toMatch(/serves a single request/);
});

test('anything else is refused with what is expected', () => {
  for (const handler of [42, 'fetch', null, {}]) {
    const e = refusal(() => sdk({ handler: handler as never }));
    expect(e.code).toBe('ERR_MCPWARE_INVALID_OPTION');
    expect(e.message).toMatch(/^sdk: option "handler" must be an SDK handler/);
  }
});

test('the three faces are taken', async () => {
  const handler = v2();
  expect(typeof sdk({ handler })).toBe('function');
  const session = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: () => 'sid' });
  expect(typeof sdk({ handler: session })).toBe('function');
  expect(typeof sdk({ handler: async (request) => new Response(request.url) })).toBe('function');
  await handler.close();
});
