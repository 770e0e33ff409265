/**
 * The full stack on bare `node:http` with its limits in Redis (a redis-server of its own on loopback, started
 * with the server): what sharing the limits between replicas costs per request.
 */
import type { RequestListener } from 'node:http';
import { compose } from '../../middleware/compose/index.js';
import { listen, serveStats } from './common.js';
import { startBenchRedis } from './redis.js';
import { fullStack } from './stack.js';

async function main(): Promise<void> {
  const redis = await startBenchRedis();
  const stack = fullStack('mcpware-node-redis', process.env.BENCH_OUT ?? '.', redis);
  const chain = compose(stack.middlewares);
  const handler: RequestListener = (req, res) => {
    if (serveStats(req, res, stack.stats)) return;
    chain(req, res);
  };
  listen(handler, 'mcpware-node-redis');
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});
