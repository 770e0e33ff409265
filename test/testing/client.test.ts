/**
 * McpTestClient's own options: a typo must not send a request other than the one the test means.
 */
import { createHash } from 'node:crypto';
import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  apiKeyAuth,
  checkHeaders,
  classifyRevision,
  compose,
  dispatch,
  methodGuard,
  parse,
} from '../../index';
import { McpTestClient } from '../../testing/index';

describe('McpTestClient options', () => {
  test('a misspelt constructor option is refused naming the right one', () => {
    expect(() => new McpTestClient('http://127.0.0.1:1', { autoParamHeader: false } as never)).toThrow(
      /McpTestClient: unknown option "autoParamHeader"; did you mean "autoParamHeaders"\?/,
    );
    expect(() => new McpTestClient('http://127.0.0.1:1', { era: 'modem' } as never)).toThrow(
      /option "era" must be one of "modern", "legacy"/,
    );
  });

  test('a misspelt per-call option is refused before anything is sent', async () => {
    const client = new McpTestClient('http://127.0.0.1:1');
    await expect(client.ping({ omitHeaders: 'Mcp-Method' } as never)).rejects.toThrow(
      /McpTestClient.request: unknown option "omitHeaders"; did you mean "omitHeader"\?/,
    );
  });
});

/**
 * Every method returns the response whatever its status, the legacy client's automatic `initialize` included:
 * a refused handshake is the answer to the call that needed it.
 */
describe('McpTestClient legacy handshake refused', () => {
  let server: Server;
  let base: string;
  let posts = 0;
  beforeAll(async () => {
    const hash = `sha256:${createHash('sha256').update('good').digest('hex')}`;
    const stack = compose([
      (_req, _res, next) => {
        posts++;
        next();
      },
      methodGuard(),
      apiKeyAuth({ keys: [{ userId: 'alice', hash, groups: ['users'] }] }),
      parse(),
      classifyRevision(),
      checkHeaders(),
      dispatch({ anonymous: true, handlers: {}, serverInfo: { name: 'refusing', version: '1' } }),
    ]);
    server = http.createServer(stack);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  beforeEach(() => {
    posts = 0;
  });

  test('a 401 to the automatic initialize is returned by the call, not thrown', async () => {
    const client = new McpTestClient(base, { era: 'legacy', headers: { Authorization: 'Bearer wrong' } });
    const res = await client.listTools();
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
    expect(res.body.error?.code).toBeDefined();
    // The refused initialize is the only request: the call that needed it is not sent.
    expect(posts).toBe(1);
  });

  test('the handshake is tried again on the next call', async () => {
    const client = new McpTestClient(base, { era: 'legacy', headers: { Authorization: 'Bearer wrong' } });
    expect((await client.ping()).status).toBe(401);
    expect((await client.ping()).status).toBe(401);
    expect(posts).toBe(2);
  });

  test('a client with a key it may use handshakes once, then sends the call', async () => {
    const client = new McpTestClient(base, { era: 'legacy', headers: { Authorization: 'Bearer good' } });
    const res = await client.ping();
    expect(res.status).toBe(200);
    expect(res.body.result).toEqual({});
    // initialize, notifications/initialized, ping
    expect(posts).toBe(3);
  });
});
