/**
 * `npm run bench -- --instructions`: how many machine instructions a request costs each server's JavaScript,
 * counted by valgrind's callgrind while the in-process harness (bench/inproc.ts) drives the server's own
 * handler. Timings on a shared machine move with its load; these counts do not, having no load generator and
 * no kernel in them, and they repeat closely (bench/README.md).
 *
 * Each server × workload runs once. callgrind starts with its instrumentation off and the harness says when
 * its warm-up is over and when the `COUNTED` requests after it are: `callgrind_control` turns the
 * instrumentation on and off there, so start-up, module loading, the warm-up and the exit are not counted, and
 * the total over `COUNTED` is the count per request. `--single-threaded` keeps V8's garbage collector and
 * compiler on the main thread, so their work is counted too, and V8's garbage collection schedule is its
 * predictable one (`--predictable-gc-schedule`: fixed young-generation size, fixed heap growing, no memory
 * reducer or idle-time collections), so that the collector's schedule does not depend on how fast valgrind
 * runs. What is not in the count: node's HTTP parser, the kernel and the load generator, which the load tests
 * measure, and the cost of cache misses, which instructions do not show.
 */
import { spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { INPROC_SERVERS, type InprocServer, WARMUP_REQUESTS } from './inproc.js';

export interface InstructionResults {
  startedAt: string;
  finishedAt: string;
  valgrind: string;
  node: string;
  /**
   * Requests counted after the warm-up; two numbers in counts recorded before the warm-up was left out of the
   * count (two runs, whose difference was counted), which are not comparable with one.
   */
  requests: number | [number, number];
  /** Requests run before the counted ones (absent from counts recorded before it was kept). */
  warmup?: number;
  rows: { server: InprocServer; workload: string; perRequest: number; total: number }[];
}

/** Requests counted per server × workload, after the warm-up. */
export const COUNTED = 8000;

export function run(
  cmd: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  cwd?: string,
): Promise<{ code: number; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? 1, out }));
  });
}

/** valgrind's version, or undefined when it is not installed. */
export async function valgrindVersion(): Promise<string | undefined> {
  try {
    const r = await run('valgrind', ['--version'], process.env);
    return r.code === 0 ? r.out.trim() : undefined;
  } catch {
    return undefined;
  }
}

/** How node runs under callgrind. */
const NODE_FLAGS: readonly string[] = [
  '--single-threaded',
  // V8 sizes its young generation and its heap from allocation and collection rates measured against the clock,
  // and its memory reducer runs on timers: under valgrind, which slows everything unevenly, counts of the same
  // build would differ widely. The predictable schedule fixes all three (and the young generation at 4 MB, which
  // its implication sets whatever else is asked), so that repeated counts agree.
  '--predictable-gc-schedule',
  // Scavenges and incremental-marking steps also run from tasks the event loop picks up when it gets to them:
  // under valgrind, how much the young generation holds by then, and so what survives and is promoted, depends
  // on how fast the machine runs valgrind, and a loaded machine's counts drift. Without those tasks the
  // collector runs only where allocation asks for it, the same in every run.
  '--no-minor-gc-task',
  '--no-incremental-marking-task',
  // V8 draws a random hash seed per process; with a fixed one, its hash tables lay out (and collide) the same
  // in every count.
  '--hash-seed=1',
];

/** How a server is counted: where callgrind writes its profile, V8's perf map, middlewares left out. */
export interface CountOptions {
  /** callgrind's output file (default: none written). */
  outFile?: string;
  /** Have V8 write `/tmp/perf-<pid>.map`, which names the code it compiles (bench/functions.ts). */
  perfMap?: boolean;
  /** The directory node runs in: with `perfMap`, V8 also writes an `isolate-*.log` there. */
  cwd?: string;
  /** `BENCH_WITHOUT`: middlewares of the full stack to leave out (bench/servers/stack.ts). */
  without?: string;
}

/** The callgrind command that turns instrumentation on or off at each line the harness says (bench/inproc.ts). */
const TOGGLES: ReadonlyMap<string, string> = new Map([
  ['warm', '--instr=on'],
  ['counted', '--instr=off'],
]);

/**
 * Runs the in-process harness under callgrind: instrumentation off through start-up and the warm-up, on for the
 * `requests` counted ones, off again for the exit. Resolves to the instructions of the counted requests.
 */
export async function count(
  build: string,
  server: InprocServer,
  workload: string,
  requests: number,
  options: CountOptions = {},
): Promise<number> {
  const args = [
    '--tool=callgrind',
    `--callgrind-out-file=${options.outFile ?? '/dev/null'}`,
    '--instr-atstart=no',
    // V8 writes the code it compiles into memory valgrind must re-read.
    '--smc-check=all-non-file',
    process.execPath,
    ...NODE_FLAGS,
    ...(options.perfMap ? ['--perf-basic-prof'] : []),
    path.join(build, 'bench', 'inproc.js'),
    server,
    workload,
    String(requests),
  ];
  // The audit logger writes through winston's whole pipeline into a stream that drops the lines: no file I/O
  // (the thread pool would run outside the count).
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    BENCH_AUDIT_TRANSPORT: 'discard',
    BENCH_OUT: os.tmpdir(),
    BENCH_INPROC_HANDSHAKE: '1',
  };
  if (options.without !== undefined) env.BENCH_WITHOUT = options.without;
  const child = spawn('valgrind', args, { env, cwd: options.cwd, stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let line = '';
  let failure: Error | undefined;
  const toggle = async (flag: string): Promise<void> => {
    const r = await run('callgrind_control', [flag, String(child.pid)], process.env);
    if (r.code !== 0) throw new Error(`callgrind_control ${flag} failed:\n${r.out.slice(-2000)}`);
    child.stdin.write('go\n');
  };
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
    line += d.toString();
    for (let nl = line.indexOf('\n'); nl >= 0; nl = line.indexOf('\n')) {
      const flag = TOGGLES.get(line.slice(0, nl));
      line = line.slice(nl + 1);
      if (flag === undefined) continue;
      toggle(flag).catch((e: Error) => {
        failure ??= e;
        child.kill();
      });
    }
  });
  const code = await new Promise<number>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (c) => resolve(c ?? 1));
  });
  if (failure) throw failure;
  const m = /I\s+refs:\s+([\d,]+)/.exec(out);
  if (code !== 0 || !m)
    throw new Error(`${server} ${workload} (${requests} requests) failed:\n${out.slice(-2000)}`);
  return Number(m[1]!.replaceAll(',', ''));
}

/** Instructions per request of one server × workload: one count of `COUNTED` requests, over their number. */
export async function countPerRequest(
  build: string,
  server: InprocServer,
  workload: string,
  options: CountOptions = {},
): Promise<{ perRequest: number; total: number }> {
  const total = await count(build, server, workload, COUNTED, options);
  return { perRequest: Math.round(total / COUNTED), total };
}

/**
 * Counts every server × workload of `build` (servers the in-process harness cannot drive are skipped), `lanes`
 * valgrinds at a time: each runs single-threaded, so one per core by default.
 */
export async function countInstructions(
  build: string,
  servers: readonly string[],
  workloads: readonly string[],
  log: (line: string) => void,
  lanes: number = os.availableParallelism(),
): Promise<InstructionResults> {
  const startedAt = new Date().toISOString();
  const chosen = INPROC_SERVERS.filter((s) => servers.includes(s));
  const jobs = chosen.flatMap((server) => workloads.map((workload) => ({ server, workload })));
  const rows: InstructionResults['rows'] = [];
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < jobs.length) {
      const { server, workload } = jobs[next++]!;
      const { perRequest, total } = await countPerRequest(build, server, workload);
      rows.push({ server, workload, perRequest, total });
      log(`  ${server} ${workload}: ${perRequest.toLocaleString('en')} instructions per request`);
    }
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, lanes), jobs.length) }, lane));
  const order = (r: (typeof rows)[number]): number =>
    chosen.indexOf(r.server) * 100 + workloads.indexOf(r.workload);
  rows.sort((a, b) => order(a) - order(b));
  return {
    startedAt,
    finishedAt: new Date().toISOString(),
    valgrind: (await valgrindVersion()) ?? 'unknown',
    node: process.version,
    requests: COUNTED,
    warmup: WARMUP_REQUESTS,
    rows,
  };
}
