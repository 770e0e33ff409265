/**
 * limits() keys on `req.locals.principal`: mounted before authentication it sees no principal, puts every caller
 * in one bucket and can answer an unauthenticated caller 429 where authentication would have said 401. It says
 * so once, through the logger, and changes nothing else.
 */
import type { Server } from 'node:http';
import request from 'supertest';
import { apiKeyAuth, hashKey } from '../../../middleware/api-key-auth/index';
import { limits } from '../../../middleware/limits/index';
import type { Middleware } from '../../../core/types';
import { jsonLogger } from '../../support/json-logger';
import { HOSTS, hostServer } from '../../support/hosts';

const KEY = 'misorder-key-0123456789';
const keys = [{ userId: 'alice', hash: hashKey(KEY), groups: ['g'] }];
const MESSAGE = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });

const answer: Middleware = (_req, res) => {
  res.statusCode = 200;
  res.setHeader('Content-Type', 'application/json');
  res.end('{"jsonrpc":"2.0","id":1,"result":{}}');
};

const post = (server: Server, auth?: string) => {
  const r = request(server).post('/mcp').set('Content-Type', 'application/json');
  return (auth ? r.set('Authorization', `Bearer ${auth}`) : r).send(MESSAGE);
};

describe.each(HOSTS)('on %s', (host) => {
  test('limits() before authentication: warns once for many requests, and answers as before', async () => {
    const log = jsonLogger();
    const quiet = { error() {}, warn() {} };
    const server = hostServer(host, {
      mcp: [limits({ perUserRpm: 2, logger: log.logger }), apiKeyAuth({ keys, logger: quiet }), answer],
    });
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await post(server)).status);
    // The misorder itself: one shared bucket, so the third unauthenticated caller is rate limited, not refused.
    expect(statuses).toEqual([401, 401, 429, 429, 429]);
    const lines = log.records('limits:');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 'warn' });
    expect(lines[0]!.message).toMatch(/no principal/);
    expect(lines[0]!.message).toMatch(/after authentication/);
  });

  test('limits() after authentication: no warning', async () => {
    const log = jsonLogger();
    const server = hostServer(host, {
      mcp: [apiKeyAuth({ keys, logger: log.logger }), limits({ perUserRpm: 2, logger: log.logger }), answer],
    });
    for (let i = 0; i < 3; i++) await post(server, KEY);
    expect((await post(server)).status).toBe(401);
    expect(log.records('limits:')).toEqual([]);
  });

  test('a GET (which limits() does not count) is no reason to warn', async () => {
    const log = jsonLogger();
    const server = hostServer(host, { mcp: [limits({ logger: log.logger }), answer] });
    await request(server).get('/mcp');
    expect(log.records('limits:')).toEqual([]);
  });
});
