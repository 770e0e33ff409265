/**
 * `examples/upstream.ts` (a plain official-SDK server, no mcpware) as a process of its own, on a free loopback
 * port: the upstream the demo proxies to in its `MCP_UPSTREAM_URL` mode.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { freePort } from './ports';

const ROOT = path.resolve(__dirname, '../..');

export interface UpstreamProcess {
  /** `http://127.0.0.1:PORT/mcp` */
  url: string;
  output(): string;
  stop(): Promise<void>;
}

/** Start the upstream and resolve once it prints its ready line; rejects (with its output) if it exits first. */
export async function spawnUpstream(): Promise<UpstreamProcess> {
  const port = await freePort();
  const proc = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'examples/upstream.ts')], {
    cwd: ROOT,
    env: { ...process.env, HOST: '127.0.0.1', PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((resolve) => proc.on('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}/mcp`;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ready line: ${out}`)), 30_000);
    proc.stdout.on('data', () => {
      if (out.includes(`listening on ${url}`)) {
        clearTimeout(timer);
        resolve();
      }
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`the upstream exited before listening: ${out}`));
    });
  });
  return {
    url,
    output: () => out,
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
      await exited;
    },
  };
}
