/** parse(): a body another parser already read is used only when the request's Content-Type is JSON. */
import express from 'express';
import http from 'node:http';
import request from 'supertest';
import { parse } from '../../../middleware/parse/index';
import type { Middleware } from '../../../core/types';
import { chain } from '../../support/dispatch-harness';
import { FLAVOURS, echoFinal } from '../../support/servers';

/** `parser` app-wide, then parse() and the echo. */
function server(flavour: (typeof FLAVOURS)[number], parser: Middleware): http.Server {
  if (flavour === 'node:http') return http.createServer(chain([parser, parse(), echoFinal]));
  const app = express();
  app.use(parser);
  app.use('/mcp', parse(), echoFinal);
  return http.createServer(app);
}

const MESSAGE = { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'hello' } };
const FORM = 'jsonrpc=2.0&id=7&method=tools/call&params[name]=hello';

describe.each(FLAVOURS)('on %s', (flavour) => {
  test.each([
    ['express.urlencoded', 'application/x-www-form-urlencoded', express.urlencoded({ extended: true }), FORM],
    ['express.text', 'text/plain', express.text(), JSON.stringify(MESSAGE)],
    ['express.json for any type', 'text/plain', express.json({ type: '*/*' }), JSON.stringify(MESSAGE)],
  ])('%s: a %s body it read is 415, as without the parser', async (_name, type, parser, body) => {
    const res = await request(server(flavour, parser as unknown as Middleware))
      .post('/mcp')
      .set('Content-Type', type)
      .send(body);
    expect(res.status).toBe(415);
    expect(res.body).toEqual({
      jsonrpc: '2.0',
      error: { code: -32600, message: 'Content-Type must be application/json' },
    });
  });

  test('a parser that left an object on req.body without a Content-Type: 415', async () => {
    const setBody: Middleware = (req, _res, next) => {
      req.resume();
      req.on('end', () => {
        Object.assign(req, { body: MESSAGE, _body: true });
        next();
      });
    };
    const res = await request(server(flavour, setBody)).post('/mcp').send(Buffer.from('x'));
    expect(res.status).toBe(415);
  });

  test('express.json: the object it parsed from application/json is used', async () => {
    const res = await request(server(flavour, express.json() as unknown as Middleware))
      .post('/mcp')
      .set('Content-Type', 'application/json; charset=utf-8')
      .send(JSON.stringify(MESSAGE));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ passed: true, method: 'tools/call', id: 7, target: 'hello' });
  });
});
