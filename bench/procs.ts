/**
 * The servers under test: what they are, which workloads they can answer, and the child processes that run
 * them (one each, started from the compiled build, RSS sampled from /proc).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import readline from 'node:readline';
import { BUILD, OUT } from './build.js';
import type { Workload } from './workloads.js';

export interface ServerSpec {
  id: string;
  label: string;
  /** Speaks the 2026-07-28 revision (SDK v1 does not). */
  modern: boolean;
  /** The server script, when not `id` (ablation variants share one). */
  script?: string;
  /** Environment of the server process (ablation: `BENCH_WITHOUT`). */
  env?: Record<string, string>;
  /** Extra node flags of the server process (the heap-capped variant). */
  nodeArgs?: readonly string[];
}

/**
 * V8 heap limits of the heap-capped variant: old space 64 MB, semi-spaces 1 MB. It shows what the full stack
 * needs apart from the room V8's default sizing gives its heap under load (bench/README.md).
 */
export const SMALL_HEAP_FLAGS: readonly string[] = Object.freeze([
  '--max-old-space-size=64',
  '--max-semi-space-size=1',
]);

export const SERVERS: readonly ServerSpec[] = Object.freeze([
  { id: 'bare', label: 'bare node:http (fixed answer)', modern: true },
  { id: 'express', label: 'Express 5 + express.json', modern: true },
  // A reference, not a competitor: the ceiling of any handler mounted in Express (bench/servers/express-floor.ts).
  { id: 'express-floor', label: 'bare handler mounted in Express 5 (the ceiling)', modern: true },
  { id: 'sdk-v1', label: 'official SDK v1 (stateless)', modern: false },
  { id: 'sdk-v2', label: 'official SDK v2 (createMcpHandler)', modern: true },
  { id: 'mcpware-express', label: 'mcpware full stack in Express 5', modern: true },

  { id: 'mcpware-node', label: 'mcpware full stack on node:http', modern: true },
  // otel() in front of the full stack: with an SDK exporting over OTLP/HTTP to a loopback sink, and with none.
  {
    id: 'mcpware-node-otel',
    label: 'mcpware full stack on node:http, otel() and an SDK (batch export to a loopback sink)',
    modern: true,
  },
  {
    id: 'mcpware-node-otel-nosdk',
    label: 'mcpware full stack on node:http, otel() without an SDK',
    modern: true,
  },
  { id: 'mcpware-node-redis', label: 'mcpware full stack on node:http, limits in Redis', modern: true },
  { id: 'mcpware-minimal', label: 'mcpware minimal on node:http', modern: true },
  {
    id: 'mcpware-proxy',
    label: 'mcpware full stack as a proxy to bare node:http (another process)',
    modern: true,
  },
  {
    id: 'mcpware-node-small-heap',
    label: `mcpware full stack on node:http, ${SMALL_HEAP_FLAGS.join(' ')}`,
    modern: true,
    script: 'mcpware-node',
    nodeArgs: SMALL_HEAP_FLAGS,
  },
]);

export function supports(s: ServerSpec, w: Workload): boolean {
  return w.era === 'legacy' || s.modern;
}

/** One line of /proc/<pid>/status, in kB. */
function procStatus(pid: number): { rss: number; hwm: number } | undefined {
  try {
    const text = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const rss = /VmRSS:\s+(\d+) kB/.exec(text);
    const hwm = /VmHWM:\s+(\d+) kB/.exec(text);
    if (!rss || !hwm) return undefined;
    return { rss: Number(rss[1]), hwm: Number(hwm[1]) };
  } catch {
    return undefined;
  }
}

/** CPU time (user + system) a process has used, in ms, from /proc/<pid>/stat (clock ticks of 10 ms). */
export function cpuMs(pid: number): number {
  try {
    const text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces, hence the last ')'): state is field 3.
    const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return ((Number(f[11]) + Number(f[12])) * 1000) / CLK_TCK;
  } catch {
    return NaN;
  }
}
const CLK_TCK = 100;

export class RunningServer {
  readonly spec: ServerSpec;
  readonly child: ChildProcess;
  port = 0;
  /** Highest VmRSS seen since the last `resetWindow()`, in kB. */
  windowPeakKb = 0;
  /** VmHWM (peak resident set over the process's life), in kB. */
  hwmKb = 0;
  rssKb = 0;
  stderr = '';

  constructor(spec: ServerSpec, execArgv: string[], buildDir: string = BUILD) {
    this.spec = spec;
    const script = path.join(buildDir, 'bench', 'servers', `${spec.script ?? spec.id}.js`);
    this.child = spawn(process.execPath, [...execArgv, ...(spec.nodeArgs ?? []), script], {
      env: { ...process.env, BENCH_OUT: OUT, NODE_ENV: 'production', NODE_NO_WARNINGS: '1', ...spec.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child.stderr!.on('data', (d: Buffer) => {
      // Keep the tail only: a server that logs per request must not grow the runner.
      this.stderr = (this.stderr + d.toString()).slice(-4000);
    });
  }

  get pid(): number {
    return this.child.pid!;
  }

  ready(timeoutMs = 30_000): Promise<void> {
    return new Promise((resolve, reject) => {
      const rl = readline.createInterface({ input: this.child.stdout! });
      const timer = setTimeout(
        () => reject(new Error(`${this.spec.id} did not start in time: ${this.stderr}`)),
        timeoutMs,
      );
      rl.once('line', (line) => {
        clearTimeout(timer);
        try {
          const msg = JSON.parse(line) as { port: number };
          this.port = msg.port;
          resolve();
        } catch {
          reject(new Error(`${this.spec.id}: unexpected first line ${line}`));
        }
      });
      this.child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`${this.spec.id} exited with ${code}: ${this.stderr}`));
      });
    });
  }

  sample(): void {
    const s = procStatus(this.pid);
    if (!s) return;
    this.rssKb = s.rss;
    this.hwmKb = s.hwm;
    if (s.rss > this.windowPeakKb) this.windowPeakKb = s.rss;
  }

  resetWindow(): void {
    this.windowPeakKb = 0;
    this.sample();
  }

  /** GET /__bench/stats. */
  stats(): Promise<Record<string, unknown>> {
    return new Promise((resolve, reject) => {
      http
        .get({ host: '127.0.0.1', port: this.port, path: '/__bench/stats' }, (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (body += c));
          res.on('end', () => {
            try {
              resolve(JSON.parse(body) as Record<string, unknown>);
            } catch (e) {
              reject(e instanceof Error ? e : new Error(String(e)));
            }
          });
        })
        .on('error', reject);
    });
  }

  /** SIGTERM (the server exits normally, so a `--cpu-prof` profile is written), SIGKILL after 10 s. */
  stop(): Promise<void> {
    return new Promise((resolve) => {
      if (this.child.exitCode !== null) return resolve();
      const kill = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
      this.child.once('exit', () => {
        clearTimeout(kill);
        resolve();
      });
      this.child.kill('SIGTERM');
    });
  }
}

/** Send one workload request and return the status, content type and body. */
export function sendOnce(
  port: number,
  w: Workload,
): Promise<{ status: number; contentType: string; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path: '/mcp',
        method: 'POST',
        headers: { ...w.headers, 'content-length': Buffer.byteLength(w.body) },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, contentType: String(res.headers['content-type']), body }),
        );
      },
    );
    req.on('error', reject);
    req.end(w.body);
  });
}

/** The JSON-RPC message of an answer: the body, or the last `data:` of an SSE stream. */
export function messageOf(body: string, contentType: string): unknown {
  if (contentType.startsWith('text/event-stream')) {
    const data = body
      .split('\n')
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(5).trim());
    return JSON.parse(data[data.length - 1] ?? 'null');
  }
  return JSON.parse(body);
}
