/**
 * A redis-server of the benchmark's own, for the Redis variant of the full stack: started on a free 127.0.0.1
 * port with no persistence, killed when the server process exits.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import Redis from 'ioredis';
import { redisClientOptions } from '../../middleware/limits/index.js';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** Start redis-server (`BENCH_REDIS_SERVER`, default `redis-server` on the PATH) and a client ready on it. */
export async function startBenchRedis(): Promise<Redis> {
  const bin = process.env.BENCH_REDIS_SERVER ?? 'redis-server';
  if (spawnSync(bin, ['--version']).status !== 0) throw new Error(`${bin} is not installed`);
  const port = await freePort();
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
  const proc: ChildProcess = spawn(bin, [...args, '--loglevel', 'warning'], { stdio: 'ignore' });
  process.on('exit', () => proc.kill('SIGKILL'));
  const deadline = Date.now() + 10_000;
  for (;;) {
    const client = new Redis(port, '127.0.0.1', { ...redisClientOptions, retryStrategy: () => 50 });
    client.on('error', () => {});
    const ready = await new Promise<boolean>((resolve) => {
      client.once('ready', () => resolve(true));
      setTimeout(resolve, 500, false);
    });
    if (ready) return client;
    client.disconnect();
    if (Date.now() > deadline || proc.exitCode !== null)
      throw new Error(`redis-server did not start on ${port}`);
  }
}
