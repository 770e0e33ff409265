/**
 * Server 5: the mcpware full stack inside Express 5, mounted with `app.use('/mcp', ...)`, one router layer per
 * middleware. `BENCH_EXPRESS_MOUNT=compose`: the same stack as one layer, `app.use('/mcp', compose([...]))`.
 */
import express from 'express';
import http from 'node:http';
import { compose } from '../../middleware/compose.js';
import { listen, serveStats } from './common.js';
import { fullStack } from './stack.js';

const stack = fullStack('mcpware-express', process.env.BENCH_OUT ?? '.');
/** The app (exported for the in-process harness, bench/inproc.ts). */
export const app = express();
app.disable('x-powered-by');
app.get('/__bench/stats', (req, res) => void serveStats(req, res, stack.stats));
if (process.env.BENCH_EXPRESS_MOUNT === 'compose') app.use('/mcp', compose(stack.middlewares));
else app.use('/mcp', ...stack.middlewares);

if (require.main === module) listen(http.createServer(app), 'mcpware-express');
