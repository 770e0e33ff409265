/**
 * The four hosts a middleware must work in: bare node:http, Express 5, Express 4 (the `express4` alias) and
 * Connect. A server mounts `mcp` under `/mcp` (bare node:http runs it on every path), with app-wide middlewares
 * before and after it, and answers what falls through with 404 `{"fell":"through"}`.
 */
import http from 'node:http';
import connect from 'connect';
import express from 'express';
import express4 from 'express4';
import type { Middleware } from '../../core/types';
import { chain, fellThrough } from './dispatch-harness';

export type Host = 'node:http' | 'express5' | 'express4' | 'connect';
export const HOSTS: Host[] = ['node:http', 'express5', 'express4', 'connect'];
/** The hosts that mount a middleware under a path (every one but bare node:http). */
export const APP_HOSTS: Exclude<Host, 'node:http'>[] = ['express5', 'express4', 'connect'];

/** The Express of a host: its `express.json()` and its router; Connect and node:http have none. */
export function expressOf(host: Host): typeof express | undefined {
  if (host === 'express5') return express;
  if (host === 'express4') return express4;
  return undefined;
}

export interface Mount {
  /** App-wide middlewares mounted before `/mcp`. */
  before?: readonly Middleware[];
  /** The MCP route's middlewares. */
  mcp: readonly Middleware[];
  /** App-wide middlewares mounted after `/mcp`. */
  after?: readonly Middleware[];
}

/** A server (not yet listening) for the mount on `host`. */
export function hostServer(host: Host, m: Mount): http.Server {
  const before = m.before ?? [];
  const after = m.after ?? [];
  if (host === 'node:http') return http.createServer(chain([...before, ...m.mcp, ...after]));
  if (host === 'connect') {
    const app = connect();
    for (const mw of before) app.use(mw);
    for (const mw of m.mcp) app.use('/mcp', mw);
    for (const mw of after) app.use(mw);
    app.use((_req: http.IncomingMessage, res: http.ServerResponse) => fellThrough(res));
    return http.createServer(app);
  }
  const app = expressOf(host)!();
  for (const mw of before) app.use(mw);
  app.use('/mcp', ...m.mcp);
  for (const mw of after) app.use(mw);
  app.use((_req, res) => fellThrough(res));
  return http.createServer(app);
}
