/**
 * The full stack as a proxy: the `mcpware-node` stack with `proxy()` in place of `dispatch()`, forwarding every
 * request to a `bare` server it starts in a child process of its own (the upstream alone is the `bare` row). Next
 * to `bare`, it shows what the proxy hop costs: the stack, one more loopback round trip, and relaying the answer.
 * The CPU the runner reports is this process's only; the upstream's is not counted.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import type { RequestListener } from 'node:http';
import path from 'node:path';
import readline from 'node:readline';
import { compose } from '../../middleware/compose/index.js';
import { proxy } from '../../middleware/proxy/index.js';
import { listen, serveStats } from './common.js';
import { fullStack } from './stack.js';

/** Starts `bare` (compiled next to this file) and resolves with its port. */
function startUpstream(): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, [path.join(__dirname, 'bare.js')], {
    env: process.env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  process.on('exit', () => child.kill('SIGTERM'));
  return new Promise((resolve, reject) => {
    readline.createInterface({ input: child.stdout! }).once('line', (line) => {
      resolve({ child, port: (JSON.parse(line) as { port: number }).port });
    });
    child.once('exit', (code) => reject(new Error(`the bare upstream exited with ${code}`)));
  });
}

async function main(): Promise<void> {
  const { port } = await startUpstream();
  const stack = fullStack('mcpware-proxy', process.env.BENCH_OUT ?? '.');
  const upstream = proxy({ url: `http://127.0.0.1:${port}/mcp`, timeoutMs: 30_000 });
  // The full stack ends with dispatch(): the proxy takes its place.
  const chain = compose([...stack.middlewares.slice(0, -1), upstream]);
  const handler: RequestListener = (req, res) => {
    if (serveStats(req, res, stack.stats)) return;
    chain(req, res);
  };
  listen(handler, 'mcpware-proxy');
}

void main().catch((err: unknown) => {
  process.stderr.write(`mcpware-proxy: ${String(err)}\n`);
  process.exit(1);
});
