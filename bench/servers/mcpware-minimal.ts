/** Server 7: mcpware minimal (parse, classifyRevision, dispatch) on bare `node:http` with `compose()`. */
import type { RequestListener } from 'node:http';
import { compose } from '../../middleware/compose/index.js';
import { listen, serveStats } from './common.js';
import { minimalStack } from './stack.js';

const stack = minimalStack();
const chain = compose(stack.middlewares);

/** The request listener (exported for the in-process harness, bench/inproc.ts). */
export const handler: RequestListener = (req, res) => {
  if (serveStats(req, res, stack.stats)) return;
  chain(req, res);
};

if (require.main === module) listen(handler, 'mcpware-minimal');
