/**
 * compose(): the request listener of bare node:http, and one middleware in Express or Connect. A request that
 * falls off the end goes on to the host's next() (Express), or gets 404 (node:http); an error ends the chain with
 * -32603 and goes to the logger.
 */
import express from 'express';
import http from 'node:http';
import request from 'supertest';
import { compose } from '../../../middleware/compose/index';
import { dispatch } from '../../../middleware/dispatch/index';
import { parse } from '../../../middleware/parse/index';
import type { Middleware } from '../../../core/types';

const body = { jsonrpc: '2.0', id: 7, method: 'ping' };
const passThrough: Middleware = (_req, _res, next) => next();
const quiet = { error() {} };

describe('compose()', () => {
  it('refuses anything but an array of functions', () => {
    expect(() => compose('parse' as never)).toThrow(TypeError);
    expect(() => compose([passThrough, 1 as never])).toThrow(/array of middleware functions/);
  });

  it('on node:http: runs the chain in order and answers 404 when it falls off the end', async () => {
    const order: string[] = [];
    const tag =
      (name: string): Middleware =>
      (_req, _res, next) => {
        order.push(name);
        next();
      };
    const server = http.createServer(compose([tag('a'), parse({ logger: quiet }), tag('b')]));
    const res = await request(server).post('/mcp').send(body);
    expect(order).toEqual(['a', 'b']);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'Not found' });
  });

  it("in Express, as one layer: a request that falls off the end goes on to Express's next route", async () => {
    const app = express();
    app.use('/mcp', compose([parse({ logger: quiet }), passThrough]));
    app.post('/mcp', (req, res) => {
      res.json({ fellThrough: true, method: req.locals?.mcp?.method });
    });
    const res = await request(app).post('/mcp').send(body);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ fellThrough: true, method: 'ping' });
  });

  it('in Express, as one layer: the whole stack answers, and later routes are not reached', async () => {
    const app = express();
    let reached = false;
    app.use(
      '/mcp',
      compose([
        parse({ logger: quiet }),
        dispatch({ anonymous: true, handlers: {}, serverInfo: { name: 't', version: '1' }, logger: quiet }),
      ]),
    );
    app.use(() => {
      reached = true;
    });
    const res = await request(app).post('/mcp').send(body);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ jsonrpc: '2.0', id: 7, result: {} });
    expect(reached).toBe(false);
  });

  it('an error passed to next() or thrown ends the chain with -32603, not in Express’s error handler', async () => {
    const errors: unknown[] = [];
    for (const failing of [
      ((_req, _res, next) => next(new Error('secret detail'))) as Middleware,
      (() => {
        throw new Error('secret detail');
      }) as Middleware,
    ]) {
      const app = express();
      app.use(
        '/mcp',
        compose([parse({ logger: quiet }), failing], {
          logger: { error: (m, meta) => errors.push(meta ?? m) },
        }),
      );
      app.use((_err: unknown, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
        res.status(599).end();
      });
      const res = await request(app).post('/mcp').send(body);
      expect(res.status).toBe(500);
      expect(res.body).toEqual({ jsonrpc: '2.0', id: 7, error: { code: -32603, message: 'Internal error' } });
      expect(JSON.stringify(res.body)).not.toContain('secret');
    }
    expect(errors).toHaveLength(2);
  });
});
