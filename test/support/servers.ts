import http from 'node:http';
import express from 'express';
import type { Middleware } from '../../core/types';
import { compose } from '../../middleware/compose/index';

/** A final handler that answers with what the chain attached, so tests can see it. */
export const echoFinal: Middleware = (req, res) => {
  const mcp = req.locals?.mcp;
  const body = JSON.stringify({
    passed: true,
    kind: mcp?.kind,
    method: mcp?.method,
    id: mcp?.id,
    era: mcp?.era,
    target: mcp?.target,
  });
  res.statusCode = 200;
  res.setHeader('Content-Type', 'application/json');
  res.end(body);
};

export type Flavour = 'node:http' | 'express';
export const FLAVOURS: Flavour[] = ['node:http', 'express'];

/** The same chain on bare node:http (through compose) or mounted with app.use('/mcp', ...) in Express 5. */
export function makeServer(
  flavour: Flavour,
  chain: Middleware[],
  opts: { expressJson?: boolean } = {},
): http.Server {
  if (flavour === 'node:http')
    return http.createServer(compose([...chain, echoFinal], { logger: { error() {} } }));
  const app = express();
  if (opts.expressJson) app.use(express.json());
  app.use('/mcp', ...chain, echoFinal);
  return http.createServer(app);
}
