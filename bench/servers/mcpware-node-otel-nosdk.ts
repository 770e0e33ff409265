/**
 * `mcpware-node` with `otel()` in front and no OpenTelemetry SDK registered (the API's no-op providers): what
 * mounting `otel()` costs an application that has not set OpenTelemetry up. `bench/ab.ts --instructions` counts it
 * against `mcpware-node` (docs/performance.md, the 2 % rule).
 */
import type { RequestListener } from 'node:http';
import { compose } from '../../middleware/compose/index.js';
import { listen, serveStats } from './common.js';
import { withOtel } from './otel.js';
import { fullStack } from './stack.js';

const stack = withOtel(fullStack('mcpware-node-otel-nosdk', process.env.BENCH_OUT ?? '.'));
const chain = compose(stack.middlewares);

/** The request listener (exported for the in-process harness, bench/inproc.ts). */
export const handler: RequestListener = (req, res) => {
  if (serveStats(req, res, stack.stats)) return;
  chain(req, res);
};

if (require.main === module) listen(handler, 'mcpware-node-otel-nosdk');
