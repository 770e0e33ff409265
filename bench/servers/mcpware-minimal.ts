/** Server 7: mcpware minimal (parse, classifyRevision, dispatch) on bare `node:http` with `compose()`. */
import { compose } from '../../middleware/compose.js';
import { listen, serveStats } from './common.js';
import { minimalStack } from './stack.js';

const stack = minimalStack();
const chain = compose(stack.middlewares);

listen((req, res) => {
  if (serveStats(req, res, stack.stats)) return;
  chain(req, res);
}, 'mcpware-minimal');
