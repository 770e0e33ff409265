/** Server 6: the same mcpware full stack on bare `node:http`, chained with `compose()` (Connect-style). */
import type { RequestListener } from 'node:http';
import { compose } from '../../middleware/compose/index.js';
import { listen, serveStats } from './common.js';
import { fullStack } from './stack.js';

const stack = fullStack('mcpware-node', process.env.BENCH_OUT ?? '.');
const chain = compose(stack.middlewares);

/** The request listener (exported for the in-process harness, bench/inproc.ts). */
export const handler: RequestListener = (req, res) => {
  if (serveStats(req, res, stack.stats)) return;
  chain(req, res);
};

if (require.main === module) listen(handler, 'mcpware-node');
