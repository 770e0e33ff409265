/**
 * The demo as a process of its own (`examples/server.ts` under `node --import tsx`, one process, so a signal sent
 * to it reaches the server): started on a free loopback port with the environment given, or run until it exits.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { freePort } from './ports';

const ROOT = path.resolve(__dirname, '../..');
const SERVER = path.join(ROOT, 'examples/server.ts');

export interface DemoProcess {
  proc: ChildProcess;
  port: number;
  /** `http://127.0.0.1:PORT` */
  base: string;
  /** `http://127.0.0.1:PORT/mcp` */
  url: string;
  /** Everything written to stdout and stderr so far. */
  output(): string;
  /** Resolves with the exit code (or the signal) when the process ends. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGKILL unless it has exited. */
  kill(): void;
}

function launch(env: Record<string, string>, port: number): Omit<DemoProcess, 'port' | 'base' | 'url'> {
  const proc = spawn(process.execPath, ['--import', 'tsx', SERVER], {
    cwd: ROOT,
    env: { ...process.env, HOST: '127.0.0.1', PORT: String(port), MCP_AUDIT_LOG: '/dev/null', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.on('exit', (code, signal) => resolve({ code, signal })),
  );
  return {
    proc,
    output: () => out,
    exited,
    kill: () => {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
    },
  };
}

/** Start a demo process and resolve once it prints its ready line; rejects (with its output) if it exits first. */
export async function spawnDemo(env: Record<string, string> = {}): Promise<DemoProcess> {
  const port = await freePort();
  const p = launch(env, port);
  const base = `http://127.0.0.1:${port}`;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ready line: ${p.output()}`)), 30_000);
    const check = (): void => {
      if (p.output().includes(`listening on ${base}/mcp`)) {
        clearTimeout(timer);
        resolve();
      }
    };
    p.proc.stdout!.on('data', check);
    void p.exited.then(({ code }) => {
      clearTimeout(timer);
      reject(new Error(`the demo exited (${code}) before listening: ${p.output()}`));
    });
  });
  return { ...p, port, base, url: `${base}/mcp` };
}

/** Run a demo process that is expected not to start: its exit code and output. */
export async function runDemoToExit(
  env: Record<string, string>,
  timeoutMs = 30_000,
): Promise<{ code: number | null; output: string; listened: boolean }> {
  const port = await freePort();
  const p = launch(env, port);
  const timer = setTimeout(p.kill, timeoutMs);
  const { code } = await p.exited;
  clearTimeout(timer);
  const output = p.output();
  return { code, output, listened: output.includes('listening on') };
}
