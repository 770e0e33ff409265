/**
 * A reference, not a competitor: bare node:http's handler (server 1) mounted in Express 5 as
 * one layer, `app.use('/mcp', handler)`, the way mcpware's `compose()` is mounted in the full stack in Express.
 * What Express itself costs a mounted handler that does nothing but answer: the most any stack mounted in Express
 * can reach on this machine, so the report can say which Express targets the machine allows.
 */
import express from 'express';
import http from 'node:http';
import { handler } from './bare.js';
import { listen, serveStats } from './common.js';

/** The app (exported like the other servers' handlers; the process listens only when run as a program). */
export const app = express();
app.disable('x-powered-by');
app.get('/__bench/stats', (req, res) => void serveStats(req, res));
app.use('/mcp', handler);

if (require.main === module) listen(http.createServer(app), 'express-floor');
