/** Server 5: the mcpware full stack inside Express 5, mounted with `app.use('/mcp', ...)`. */
import express from 'express';
import http from 'node:http';
import { listen, serveStats } from './common.js';
import { fullStack } from './stack.js';

const stack = fullStack('mcpware-express', process.env.BENCH_OUT ?? '.');
/** The app (exported for the in-process harness, bench/inproc.ts). */
export const app = express();
app.disable('x-powered-by');
app.get('/__bench/stats', (req, res) => void serveStats(req, res, stack.stats));
app.use('/mcp', ...stack.middlewares);

if (require.main === module) listen(http.createServer(app), 'mcpware-express');
