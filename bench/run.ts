/**
 * `npm run bench`: the benchmark runner. Measures mcpware against bare node:http, Express and the official SDKs
 * (v1 and v2) under load over loopback, or counts their instructions per request under valgrind
 * (`--instructions`). A full run writes bench/results/RESULTS.md; the other modes write under bench/.out/.
 *
 *   npm run bench [-- --quick | --soak | --ablate [--base=mcpware-express] | --instructions | --render]
 *     [--profile] [--servers=a,b] [--workloads=legacy-list,modern-call] [--connections=32,1]
 *     [--duration=S] [--warmup=S] [--reps=N] [--no-micro] [--out=FILE]
 *
 * Every server runs in its own child process from the compiled build (bench/build.ts); the load comes from
 * autocannon in this process. Runs are interleaved (for each repetition, workload and connection count, every
 * server in turn) so that drift of the shared machine hits every server alike. Every answer is checked.
 *
 * @see bench/README.md (what each mode measures and writes, and how to read the results)
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BUILD, OUT, RESULTS_FILE, ROOT, build } from './build.js';
import { countInstructions, type InstructionResults, valgrindVersion } from './instructions.js';
import { type LoadResult, runLoad } from './load.js';
import type { MicroResult } from './micro.js';
import { RunningServer, SERVERS, type ServerSpec, cpuMs, messageOf, sendOnce, supports } from './procs.js';
import { type Results, type SoakResults, renderResults } from './report.js';
import { WORKLOADS, type Workload } from './workloads.js';

interface Args {
  mode: 'full' | 'quick' | 'soak' | 'ablate' | 'instructions';
  servers: ServerSpec[];
  workloads: Workload[];
  connections: number[];
  durationS: number;
  warmupS: number;
  reps: number;
  micro: boolean;
  profile: boolean;
  out: string | undefined;
  soakS: number;
  /** Load before the soak's samples start: V8 sizes its heap in the first seconds of load. */
  soakWarmupS: number;
}

function parseArgs(argv: string[]): Args {
  const get = (name: string): string | undefined => {
    const a = argv.find((x) => x.startsWith(`--${name}=`));
    return a === undefined ? undefined : a.slice(name.length + 3);
  };
  const has = (name: string): boolean => argv.includes(`--${name}`);
  const mode = has('soak')
    ? 'soak'
    : has('ablate')
      ? 'ablate'
      : has('instructions')
        ? 'instructions'
        : has('quick')
          ? 'quick'
          : 'full';
  const list = (name: string): string[] | undefined => get(name)?.split(',').filter(Boolean);
  const serverIds = list('servers');
  const workloadIds = list('workloads');
  const all = mode === 'ablate' ? ablationServers(get('base') ?? 'mcpware-node') : [...SERVERS];
  const servers = serverIds ? all.filter((s) => serverIds.includes(s.id)) : all;
  const workloads = workloadIds ? WORKLOADS.filter((w) => workloadIds.includes(w.id)) : [...WORKLOADS];
  if (servers.length === 0 || workloads.length === 0) throw new Error('no server or workload selected');
  const num = (name: string, dflt: number): number => {
    const v = get(name);
    if (v === undefined) return dflt;
    const n = Number(v);
    if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name} must be a positive number`);
    return n;
  };
  const quick = mode === 'quick' || mode === 'ablate';
  return {
    mode,
    servers,
    workloads,
    connections: (list('connections') ?? ['32', '1']).map(Number),
    durationS: num('duration', quick ? 2 : 10),
    warmupS: num('warmup', quick ? 1 : 3),
    reps: num('reps', quick ? 1 : 3),
    micro: !has('no-micro'),
    profile: has('profile'),
    out: get('out'),
    soakS: num('soak-duration', 60),
    // Under saturation V8 grows its young generation with the bytes that survive its collections; the warm-up
    // leaves it the time to settle, and the soak measures what comes after. `--soak-warmup=S` to change it.
    soakWarmupS: num('soak-warmup', 30),
  };
}

/**
 * `--ablate`: the full stack (on node:http, or `--base=mcpware-express`) with one middleware left out per
 * variant, next to the complete stack and its baseline (bare node:http, or Express + express.json), to show what
 * each middleware costs.
 */
function ablationServers(base: string): ServerSpec[] {
  const drops = [
    'audit',
    'metrics',
    'limits',
    'redact',
    'apiKeyAuth',
    'checkHeaders',
    'classifyRevision',
    'rejectBatch',
    'guardOrigin,methodGuard',
    'audit,metrics,limits,redact,apiKeyAuth',
  ];
  return [
    // The baseline, in the same interleaved run: how far each variant is from bare node:http (or Express).
    SERVERS.find((s) => s.id === (base === 'mcpware-express' ? 'express' : 'bare'))!,
    { id: base, label: `${base}: complete`, modern: true },
    ...drops.map((d) => ({
      id: `${base}-${d.replace(/,/g, '+')}`,
      label: `${base} without ${d.replace(/,/g, ', ')}`,
      modern: true,
      script: base,
      env: { BENCH_WITHOUT: d },
    })),
    // What audit's logging costs apart from building its records: a logger that drops them, and one JSON line per
    // record written straight to a WriteStream (no winston).
    ...(['none', 'raw'] as const).map((t) => ({
      id: `${base}-audit-to-${t}`,
      label: `${base} with audit records ${t === 'none' ? 'dropped' : 'written without winston'}`,
      modern: true,
      script: base,
      env: { BENCH_AUDIT_TRANSPORT: t },
    })),
  ];
}

const log = (msg: string): void => void process.stdout.write(msg + '\n');
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function machine(): Results['machine'] {
  const cpuinfo = fs.readFileSync('/proc/cpuinfo', 'utf8');
  const model = /model name\s*:\s*(.+)/.exec(cpuinfo)?.[1]?.trim() ?? os.cpus()[0]?.model ?? 'unknown';
  let kernel = os.release();
  try {
    kernel = execFileSync('uname', ['-sr'], { encoding: 'utf8' }).trim();
  } catch {
    // keep os.release()
  }
  return {
    cpu: model,
    cores: os.cpus().length,
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    kernel,
    autocannon: versionOf('autocannon'),
  };
}

function versionOf(pkg: string): string {
  try {
    const file = path.join(ROOT, 'node_modules', pkg, 'package.json');
    return (JSON.parse(fs.readFileSync(file, 'utf8')) as { version: string }).version;
  } catch {
    return 'n/a';
  }
}

function versions(): Record<string, string> {
  const v = versionOf;
  return {
    express: v('express'),
    '@modelcontextprotocol/sdk': v('@modelcontextprotocol/sdk'),
    '@modelcontextprotocol/server': v('@modelcontextprotocol/server'),
    '@modelcontextprotocol/express': v('@modelcontextprotocol/express'),
    winston: v('winston'),
    'prom-client': v('prom-client'),
  };
}

async function startServers(specs: readonly ServerSpec[], profile: boolean): Promise<RunningServer[]> {
  const profDir = path.join(OUT, 'profiles');
  if (profile) fs.mkdirSync(profDir, { recursive: true });
  const out: RunningServer[] = [];
  // One at a time: start-up is CPU-bound and the machine has two cores.
  for (const spec of specs) {
    const argv = profile
      ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`, `--cpu-prof-name=${spec.id}.cpuprofile`]
      : [];
    const s = new RunningServer(spec, argv);
    await s.ready();
    s.sample();
    out.push(s);
  }
  return out;
}

/** Send each workload once to each server and hold every answer to the thorough check. */
async function probe(servers: RunningServer[], workloads: readonly Workload[]): Promise<Results['probes']> {
  const probes: Results['probes'] = [];
  const problems: string[] = [];
  for (const s of servers) {
    for (const w of workloads) {
      if (!supports(s.spec, w)) continue;
      const r = await sendOnce(s.port, w);
      let problem: string | undefined;
      if (r.status < 200 || r.status > 299) problem = `HTTP ${r.status}: ${r.body.slice(0, 300)}`;
      else {
        try {
          problem = w.inspect(messageOf(r.body, r.contentType));
        } catch (e) {
          problem = `unreadable answer (${String(e)}): ${r.body.slice(0, 300)}`;
        }
        if (!problem && !w.verify(r.body)) problem = `the per-answer check rejects: ${r.body.slice(0, 300)}`;
      }
      if (problem) problems.push(`${s.spec.id} ${w.id}: ${problem}`);
      probes.push({
        server: s.spec.id,
        workload: w.id,
        status: r.status,
        contentType: r.contentType.split(';')[0]!,
        bytes: Buffer.byteLength(r.body),
        ok: problem === undefined,
      });
    }
  }
  if (problems.length > 0) throw new Error(`probe failed:\n  ${problems.join('\n  ')}`);
  return probes;
}

function runMicroChild(quick: boolean): MicroResult[] {
  const r = spawnSync(
    process.execPath,
    [path.join(BUILD, 'bench', 'micro.js'), ...(quick ? ['--quick'] : [])],
    {
      encoding: 'utf8',
      env: { ...process.env, NODE_NO_WARNINGS: '1' },
    },
  );
  if (r.status !== 0) throw new Error(`micro-benchmarks failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as MicroResult[];
}

function clean(r: LoadResult): boolean {
  return r.non2xx === 0 && r.errors === 0 && r.timeouts === 0 && r.mismatches === 0;
}

async function measureAll(args: Args, servers: RunningServer[]): Promise<Results['runs']> {
  const runs: Results['runs'] = [];
  const combos = (w: Workload): RunningServer[] => servers.filter((s) => supports(s.spec, w));
  const total =
    args.reps * args.connections.length * args.workloads.reduce((n, w) => n + combos(w).length, 0);
  log(`warm-up: ${args.warmupS} s per server and workload at 32 connections`);
  for (const w of args.workloads) {
    for (const s of combos(w)) {
      const r = await runLoad(w, { port: s.port, connections: 32, durationS: args.warmupS });
      if (!clean(r)) throw new Error(`${s.spec.id} ${w.id}: failures during warm-up ${JSON.stringify(r)}`);
    }
  }
  let done = 0;
  const started = Date.now();
  for (let rep = 1; rep <= args.reps; rep++) {
    for (const w of args.workloads) {
      for (const connections of args.connections) {
        for (const s of combos(w)) {
          await sleep(300);
          s.resetWindow();
          const sampler = setInterval(() => s.sample(), 100);
          const cpu0 = cpuMs(s.pid);
          const r = await runLoad(w, { port: s.port, connections, durationS: args.durationS });
          r.cpuUsPerReq = ((cpuMs(s.pid) - cpu0) * 1000) / r.total;
          clearInterval(sampler);
          s.sample();
          runs.push({
            server: s.spec.id,
            workload: w.id,
            connections,
            rep,
            load: r,
            peakRssKb: s.windowPeakKb,
          });
          done++;
          const eta = ((Date.now() - started) / done) * (total - done);
          log(
            `[${done}/${total}] rep ${rep} ${w.id.padEnd(12)} c=${String(connections).padEnd(2)} ` +
              `${s.spec.id.padEnd(16)} ${r.rps.toFixed(0).padStart(6)} req/s  p50 ${r.p50.toFixed(2)} ms  ` +
              `p99 ${r.p99.toFixed(2)} ms  cpu ${r.cpuUsPerReq.toFixed(0)} µs/req  rss ${(s.windowPeakKb / 1024).toFixed(1)} MB` +
              (clean(r)
                ? ''
                : `  FAILURES non2xx=${r.non2xx} errors=${r.errors} mismatches=${r.mismatches}`) +
              `  (eta ${Math.round(eta / 60000)} min)`,
          );
        }
      }
    }
  }
  return runs;
}

/** 60 s of mixed load (all four workloads in turn on every connection) on each full stack, RSS every second. */
async function soak(args: Args, servers: RunningServer[]): Promise<SoakResults['servers']> {
  const out: SoakResults['servers'] = [];
  for (const s of servers) {
    log(`soak: ${s.spec.id}, warm-up ${args.soakWarmupS} s, then ${args.soakS} s at 32 connections`);
    await runLoad(WORKLOADS[0]!, {
      port: s.port,
      connections: 32,
      durationS: args.soakWarmupS,
      rotate: WORKLOADS,
    });
    await sleep(500);
    const statsBefore = await s.stats();
    s.resetWindow();
    const samples: { t: number; rssKb: number }[] = [];
    const t0 = Date.now();
    const sampler = setInterval(() => {
      s.sample();
      samples.push({ t: (Date.now() - t0) / 1000, rssKb: s.rssKb });
    }, 1000);
    const r = await runLoad(WORKLOADS[0]!, {
      port: s.port,
      connections: 32,
      durationS: args.soakS,
      rotate: WORKLOADS,
    });
    clearInterval(sampler);
    s.sample();
    const statsAfter = await s.stats();
    out.push({ server: s.spec.id, load: r, samples, hwmKb: s.hwmKb, statsBefore, statsAfter });
    log(
      `soak ${s.spec.id}: ${r.rps.toFixed(0)} req/s, RSS ${(samples[0]!.rssKb / 1024).toFixed(1)} → ` +
        `${(samples[samples.length - 1]!.rssKb / 1024).toFixed(1)} MB, peak ${(s.hwmKb / 1024).toFixed(1)} MB` +
        (clean(r) ? '' : `  FAILURES ${JSON.stringify(r)}`),
    );
  }
  return out;
}

/** Write a report, creating its directory (bench/results/ for the committed one). */
function writeReport(target: string, text: string): void {
  fs.mkdirSync(path.dirname(target), { recursive: true });
  fs.writeFileSync(target, text);
}

function readJson<T>(file: string): T | undefined {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

const FULL_JSON = path.join(OUT, 'results-full.json');
const SOAK_JSON = path.join(OUT, 'results-soak.json');
const INSTRUCTIONS_JSON = path.join(OUT, 'results-instructions.json');
const rel = (file: string): string => path.relative(ROOT, file);

/** The report of a run, with the recorded soak (unless given) and instruction counts. */
function render(run: Results, soak = readJson<SoakResults>(SOAK_JSON)): string {
  return renderResults(run, soak, readJson<InstructionResults>(INSTRUCTIONS_JSON));
}

/** After a soak or a count: the full run's report again, now with what `recorded` holds. */
function rerender(args: Args, recorded: string, soak?: SoakResults): void {
  const full = readJson<Results>(FULL_JSON);
  if (!full) return log(`no full run recorded yet (${rel(FULL_JSON)}); results in ${rel(recorded)}`);
  const target = args.out ?? RESULTS_FILE;
  writeReport(target, render(full, soak));
  log(`wrote ${rel(target)} (full run of ${full.startedAt}) and ${rel(recorded)}`);
}

/** `--render`: the report rewritten from the recorded full run, soak and counts. */
function renderRecorded(args: Args): void {
  const full = readJson<Results>(FULL_JSON);
  if (!full) throw new Error(`no full run recorded (${rel(FULL_JSON)})`);
  const target = args.out ?? RESULTS_FILE;
  writeReport(target, render(full));
  log(`wrote ${rel(target)}`);
}

/** `--instructions`: counts per request of the in-process servers. */
async function countMode(args: Args): Promise<void> {
  if (!(await valgrindVersion())) throw new Error('--instructions needs valgrind (apt-get install valgrind)');
  log('counting instructions per request under valgrind (a few minutes per server)…');
  const result = await countInstructions(
    BUILD,
    args.servers.map((s) => s.id),
    args.workloads.map((w) => w.id),
    log,
  );
  fs.writeFileSync(INSTRUCTIONS_JSON, JSON.stringify(result, null, 2));
  rerender(args, INSTRUCTIONS_JSON);
}

/** `--soak`: mixed load on the full stacks, RSS sampled every second. */
async function soakMode(args: Args, startedAt: string, loadBefore: number[]): Promise<void> {
  const specs = args.servers.filter((s) =>
    ['mcpware-express', 'mcpware-node', 'mcpware-node-small-heap'].includes(s.id),
  );
  const servers = await startServers(specs.length > 0 ? specs : args.servers, args.profile);
  let result: SoakResults;
  try {
    await probe(servers, WORKLOADS);
    result = {
      startedAt,
      machine: machine(),
      loadBefore,
      soakS: args.soakS,
      soakWarmupS: args.soakWarmupS,
      servers: await soak(args, servers),
      loadAfter: os.loadavg(),
    };
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
  }
  fs.writeFileSync(SOAK_JSON, JSON.stringify(result, null, 2));
  rerender(args, SOAK_JSON, result);
}

/** The modes that put servers under load and time them. */
type LoadKind = Exclude<Results['kind'], 'soak'>;

/** The load runs of every server (probed first), with what the servers report after them. */
async function loadRuns(
  args: Args,
  kind: LoadKind,
  startedAt: string,
  loadBefore: number[],
): Promise<Results> {
  const servers = await startServers(args.servers, args.profile);
  try {
    const probes = await probe(servers, args.workloads);
    log('probe: every server answers every workload correctly');
    const runs = await measureAll(args, servers);
    const statsAfter: Record<string, unknown> = {};
    const hwmKb: Record<string, number> = {};
    for (const s of servers) {
      s.sample();
      hwmKb[s.spec.id] = s.hwmKb;
      statsAfter[s.spec.id] = await s.stats().catch(() => undefined);
    }
    return {
      kind,
      startedAt,
      finishedAt: new Date().toISOString(),
      machine: machine(),
      versions: versions(),
      loadBefore,
      loadAfter: os.loadavg(),
      settings: {
        durationS: args.durationS,
        warmupS: args.warmupS,
        reps: args.reps,
        connections: args.connections,
      },
      servers: args.servers.map((s) => ({ id: s.id, label: s.label, modern: s.modern })),
      workloads: args.workloads.map((w) => w.id),
      probes,
      runs,
      hwmKb,
      statsAfter,
      micro: [],
    };
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
  }
}

/** A full, quick or ablation run: load, micro-benchmarks, the report. */
async function loadMode(args: Args, kind: LoadKind, startedAt: string, loadBefore: number[]): Promise<void> {
  const results = await loadRuns(args, kind, startedAt, loadBefore);
  if (args.micro) {
    log('micro-benchmarks…');
    results.micro = runMicroChild(args.mode === 'quick');
    for (const m of results.micro) log(`  ${m.name}: ${Math.round(m.opsPerSec).toLocaleString('en')} ops/s`);
  }
  results.loadAfter = os.loadavg();
  const isFull =
    args.mode === 'full' &&
    args.servers.length === SERVERS.length &&
    args.workloads.length === WORKLOADS.length &&
    args.out === undefined;
  const json = isFull ? FULL_JSON : path.join(OUT, `results-${args.mode}.json`);
  fs.writeFileSync(json, JSON.stringify(results, null, 2));
  const target = args.out ?? (isFull ? RESULTS_FILE : path.join(OUT, `RESULTS-${args.mode}.md`));
  writeReport(target, render(results));
  log(`wrote ${rel(target)} and ${rel(json)}`);
  const failures = results.runs.filter((r) => !clean(r.load));
  if (failures.length > 0) {
    log(`${failures.length} runs had failed answers: see the report`);
    process.exitCode = 1;
  }
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  fs.mkdirSync(OUT, { recursive: true });
  if (process.argv.includes('--render')) return renderRecorded(args);
  // The servers' audit logs of earlier runs (winston numbers rotated files anew in each process): not kept.
  for (const f of fs.readdirSync(OUT)) if (/^audit-.*\.log$/.test(f)) fs.rmSync(path.join(OUT, f));
  log(`compiling: ${build()} files → ${rel(BUILD)}`);
  const loadBefore = os.loadavg();
  log(`load average before: ${loadBefore.map((x) => x.toFixed(2)).join(' ')}`);
  const startedAt = new Date().toISOString();
  if (args.mode === 'instructions') return countMode(args);
  if (args.mode === 'soak') return soakMode(args, startedAt, loadBefore);
  return loadMode(args, args.mode, startedAt, loadBefore);
}

main().catch((e: unknown) => {
  process.stderr.write(`bench failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
