/**
 * Only a body that parses as a JSON array is a batch (-32600). A body that begins with `[` but is not JSON is
 * invalid JSON: 400 / -32700 Parse error, as JSON-RPC 2.0 says, from rejectBatch() alone and from the full
 * stack (mcpEndpoint(), which mounts rejectBatch() before parse()).
 */
import http from 'node:http';
import request from 'supertest';
import { hashKey } from '../../../middleware/api-key-auth/index';
import { mcpEndpoint } from '../../../middleware/endpoint/index';
import { rejectBatch } from '../../../middleware/reject-batch/index';
import type { Middleware } from '../../../core/types';
import { ToolRegistry, ok } from '../../../handlers/tools/index';

const KEY = 'reject-batch-key-0123456789abcdef';
const quiet = { error() {}, warn() {} };

/** A node:http server running `chain`, then answering 200 `{"passed":true}`. */
function serve(chain: Middleware[]): http.Server {
  return http.createServer((req, res) => {
    let i = 0;
    const next = (err?: unknown): void => {
      if (err) {
        res.statusCode = 500;
        res.end(String(err));
        return;
      }
      const mw = chain[i++];
      if (mw) return mw(req, res, next);
      res.setHeader('Content-Type', 'application/json');
      res.end('{"passed":true}');
    };
    next();
  });
}

const endpoint = mcpEndpoint({
  auth: { apiKeys: [{ userId: 'ci', hash: hashKey(KEY), groups: ['bots'] }] },
  handlers: {
    tools: new ToolRegistry({
      logger: quiet,
      tools: [{ name: 'noop', inputSchema: { type: 'object' }, call: () => ok({ done: true }) }],
    }),
  },
  dispatch: { serverInfo: { name: 'reject-batch-test', version: '1.0.0' } },
  logger: quiet,
});

const servers: [string, http.Server][] = [
  ['rejectBatch() alone', serve([rejectBatch({ logger: quiet })])],
  ['the full stack', serve([endpoint])],
];

function post(server: http.Server, body: string) {
  return request(server)
    .post('/')
    .set('Content-Type', 'application/json')
    .set('Accept', 'application/json, text/event-stream')
    .set('Authorization', `Bearer ${KEY}`)
    .set('MCP-Protocol-Version', '2025-11-25')
    .send(body);
}

describe.each(servers)('%s', (_name, server) => {
  test.each(['[1,', '[{"jsonrpc":"2.0","id":1,"method":"ping"}', ' \n[', '\uFEFF[}'])(
    'a body beginning with [ that is not JSON (%j) → 400 -32700 Parse error, no id',
    async (body) => {
      const res = await post(server, body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe(-32700);
      expect(res.body.error.message).not.toMatch(/batch/i);
      expect(res.body).not.toHaveProperty('id');
    },
  );

  test.each(['[]', '[1]', '[{"jsonrpc":"2.0","id":1,"method":"ping"}]', ' \n[{}]'])(
    'a JSON array (%j) is a batch → 400 -32600, no id',
    async (body) => {
      const res = await post(server, body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe(-32600);
      expect(res.body.error.message).toMatch(/batch/i);
      expect(res.body).not.toHaveProperty('id');
    },
  );
});
