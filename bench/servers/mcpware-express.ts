/**
 * Server 5: the mcpware full stack inside Express 5, mounted as the README recommends: one router layer,
 * `app.use('/mcp', compose([...]))`. `BENCH_EXPRESS_MOUNT=layers` mounts one router layer per middleware,
 * `app.use('/mcp', ...middlewares)`, to compare the two.
 */
import express from 'express';
import http from 'node:http';
import { compose } from '../../middleware/compose/index.js';
import { listen, serveStats } from './common.js';
import { fullStack } from './stack.js';

const stack = fullStack('mcpware-express', process.env.BENCH_OUT ?? '.');
/** The app (exported for the in-process harness, bench/inproc.ts). */
export const app = express();
app.disable('x-powered-by');
app.get('/__bench/stats', (req, res) => void serveStats(req, res, stack.stats));
if (process.env.BENCH_EXPRESS_MOUNT === 'layers') app.use('/mcp', ...stack.middlewares);
else app.use('/mcp', compose(stack.middlewares));

if (require.main === module) listen(http.createServer(app), 'mcpware-express');
