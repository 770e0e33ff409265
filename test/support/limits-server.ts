/**
 * A replica for the two-process limits tests, run with tsx: the limits middleware on a Redis store, behind a
 * stand-in authenticator (`x-user` header), in front of a handler that holds requests while `x-hold: gate`.
 *
 * Configuration comes as JSON in LIMITS_FIXTURE: { redisUrl, keyPrefix, slotLeaseMs?, limits: {...} }.
 * Prints one line `{"port":<n>}` on stdout once it listens on 127.0.0.1.
 *   GET /stats   → {"admitted":n,"holding":n,"stats":{...}}
 *   GET /release → answers every held request
 */
import http from 'node:http';
import Redis from 'ioredis';
import { limits, redisClientOptions } from '../../middleware/limits/index.js';
import { localsOf } from '../../core/respond.js';

interface FixtureConfig {
  redisUrl: string;
  keyPrefix: string;
  slotLeaseMs?: number;
  limits: Record<string, number>;
}

async function main(): Promise<void> {
  const cfg = JSON.parse(process.env.LIMITS_FIXTURE ?? '{}') as FixtureConfig;
  const redis = new Redis(cfg.redisUrl, { ...redisClientOptions, retryStrategy: () => 50 });
  redis.on('error', () => {});
  await new Promise((r) => redis.once('ready', r));
  const mw = limits({
    perUserRpm: 0,
    perUserConcurrency: 0,
    globalConcurrency: 0,
    costBudgetPerHour: 0,
    ...cfg.limits,
    store: {
      redis,
      onOutage: 'fail-closed',
      keyPrefix: cfg.keyPrefix,
      ...(cfg.slotLeaseMs ? { slotLeaseMs: cfg.slotLeaseMs } : {}),
    },
  });
  let admitted = 0;
  let waiting: (() => void)[] = [];
  const server = http.createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/stats') {
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify({ admitted, holding: waiting.length, stats: mw.stats() }));
      return;
    }
    if (req.method === 'GET' && req.url === '/release') {
      const w = waiting;
      waiting = [];
      for (const f of w) f();
      res.end('released');
      return;
    }
    const user = req.headers['x-user'];
    if (typeof user === 'string')
      localsOf(req).principal = { userId: user, groups: [], roles: [], method: 'test' };
    mw(req, res, () => {
      admitted++;
      req.resume();
      const answer = (): void => {
        if (res.destroyed) return;
        res.setHeader('Content-Type', 'application/json');
        res.end('{"jsonrpc":"2.0","id":1,"result":{}}');
      };
      if (req.headers['x-hold'] === 'gate') waiting.push(answer);
      else answer();
    });
  });
  server.listen(0, '127.0.0.1', () => {
    const addr = server.address();
    process.stdout.write(JSON.stringify({ port: typeof addr === 'object' && addr ? addr.port : 0 }) + '\n');
  });
  const stop = (): void => {
    redis.disconnect();
    server.closeAllConnections();
    server.close(() => process.exit(0));
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((e: unknown) => {
  process.stderr.write(`fixture failed: ${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});
