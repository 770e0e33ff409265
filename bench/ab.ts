/**
 * A/B: measure a change to the library before making it, by running the same benchmark server built from two
 * source trees (A defaults to this checkout).
 *
 *   tsx bench/ab.ts --b=DIR [--a=DIR] [--server=mcpware-node] [--workload=legacy-call] [--connections=32]
 *                   [--duration=5] [--reps=5]
 *     req/s, p50 and the server's CPU time per answer over loopback, A and B interleaved (A B A B …): medians,
 *     and the median of the p50 differences within each A B pair.
 *
 *   tsx bench/ab.ts --instructions --b=DIR|FILE [--a=DIR|FILE] [--servers=mcpware-node,mcpware-express]
 *                   [--b-servers=…] [--workloads=legacy-list,legacy-call,modern-list,modern-call] [--reps=1]
 *                   [--lanes=N]
 *     instructions per request of each server × workload, counted under valgrind as
 *     `npm run bench -- --instructions` counts them (bench/instructions.ts). A side given as a FILE is the
 *     `bench/.out/results-instructions.json` that command recorded in another checkout. `--b-servers` counts
 *     other servers on B, one for each of `--servers`, each compared with A's server in its place (e.g.
 *     `--servers=mcpware-node --b-servers=mcpware-node-otel-nosdk`: what mounting `otel()` costs). Writes
 *     bench/.out/ab-instructions.json.
 *
 * A source tree needs index.ts, lib/, core/, middleware/ and handlers/ in this checkout's layout, because the
 * servers under bench/servers/ import the library by path (e.g. `mkdir /tmp/x && cp -r index.ts lib core
 * middleware handlers /tmp/x`). A checkout of another layout is counted with its own bench/ and compared as a
 * FILE.
 *
 * @see bench/README.md
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CACHE, OUT, ROOT, build, missingImports } from './build.js';
import { compareCounts, incomparable, parseCounts, renameServers, renderComparison } from './compare.js';
import { INPROC_SERVERS } from './inproc.js';
import { countInstructions, type InstructionResults, valgrindVersion } from './instructions.js';
import { runLoad } from './load.js';
import { RunningServer, SERVERS, cpuMs } from './procs.js';
import { WORKLOADS, workloadById } from './workloads.js';

const arg = (name: string, dflt: string): string =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? dflt;

const positive = (name: string, dflt: string): number => {
  const n = Number(arg(name, dflt));
  if (!Number.isSafeInteger(n) || n <= 0) throw new Error(`--${name} must be a positive integer`);
  return n;
};

const say = (line: string): void => void process.stdout.write(`${line}\n`);

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

type Side = 'a' | 'b';

/**
 * Builds a source tree into its own directory (emptied first, so no file of another tree is left in it), after
 * checking it holds what the benchmark servers to run (their scripts' names) import.
 */
function buildTree(side: Side, tree: string, servers: readonly string[]): string {
  const missing = [...new Set(missingImports(tree, servers).map((m) => m.module))];
  if (missing.length > 0) {
    const shown = missing.slice(0, 3).join(', ') + (missing.length > 3 ? ', …' : '');
    throw new Error(
      `${tree} is not in this checkout's layout: it lacks ${missing.length} of the modules bench/servers/ ` +
        `imports (${shown}). Count it with its own bench/ (\`npm run bench -- --instructions\` there) and ` +
        'pass its bench/.out/results-instructions.json instead.',
    );
  }
  const dir = path.join(CACHE, `build-${side}`);
  fs.rmSync(dir, { recursive: true, force: true });
  build(tree, dir);
  return dir;
}

/** req/s, p50 and CPU time per answer of one server built from each tree, interleaved. */
async function timings(trees: Record<Side, string>): Promise<void> {
  const serverId = arg('server', 'mcpware-node');
  const spec = SERVERS.find((s) => s.id === serverId);
  if (!spec) throw new Error(`unknown server ${serverId}`);
  const w = workloadById(arg('workload', 'legacy-call'));
  const connections = positive('connections', '32');
  const durationS = positive('duration', '5');
  const reps = positive('reps', '5');
  const servers = {} as Record<Side, RunningServer>;
  for (const k of ['a', 'b'] as const) {
    servers[k] = new RunningServer(spec, [], buildTree(k, trees[k], [spec.script ?? spec.id]));
    await servers[k].ready();
  }
  const rps: Record<Side, number[]> = { a: [], b: [] };
  const cpu: Record<Side, number[]> = { a: [], b: [] };
  const p50: Record<Side, number[]> = { a: [], b: [] };
  try {
    for (const k of ['a', 'b'] as const)
      await runLoad(w, { port: servers[k].port, connections, durationS: 2 });
    for (let i = 0; i < reps; i++) {
      for (const k of ['a', 'b'] as const) {
        const s = servers[k];
        const c0 = cpuMs(s.pid);
        const r = await runLoad(w, { port: s.port, connections, durationS });
        if (r.non2xx + r.errors + r.mismatches > 0)
          throw new Error(`${k}: failed answers ${JSON.stringify(r)}`);
        rps[k].push(r.rps);
        cpu[k].push(((cpuMs(s.pid) - c0) * 1000) / r.total);
        p50[k].push(r.p50);
        say(
          `rep ${i + 1} ${k}: ${r.rps.toFixed(0)} req/s, p50 ${r.p50.toFixed(3)} ms, ` +
            `${cpu[k].at(-1)!.toFixed(1)} µs/req`,
        );
      }
    }
  } finally {
    await Promise.all(Object.values(servers).map((s) => s.stop()));
  }
  for (const k of ['a', 'b'] as const) {
    say(
      `${k} (${trees[k]}): median ${median(rps[k]).toFixed(0)} req/s, p50 ${median(p50[k]).toFixed(3)} ms, ` +
        `${median(cpu[k]).toFixed(1)} µs CPU/req`,
    );
  }
  say(
    `b/a: req/s ×${(median(rps.b) / median(rps.a)).toFixed(3)}, CPU/req ×${(median(cpu.b) / median(cpu.a)).toFixed(3)}`,
  );
  // The machine's speed drifts between repetitions; the difference within each A-B pair drifts less.
  say(
    `b − a, p50: ${((median(p50.b) - median(p50.a)) * 1000).toFixed(0)} µs of the medians, ` +
      `${(median(p50.b.map((x, i) => x - p50.a[i]!)) * 1000).toFixed(0)} µs median of the pairs`,
  );
}

/** Instructions per request of each server × workload on each side: counted from a tree, or read from a file. */
async function instructions(sources: Record<Side, string>): Promise<void> {
  const list = (name: string, dflt: readonly string[]): string[] =>
    arg(name, dflt.join(',')).split(',').filter(Boolean);
  const servers = list('servers', ['mcpware-node', 'mcpware-express']);
  const bServers = list('b-servers', servers);
  if (bServers.length !== servers.length)
    throw new Error(`--b-servers names ${bServers.length} servers for the ${servers.length} of --servers`);
  for (const s of [...servers, ...bServers]) {
    if (!(INPROC_SERVERS as readonly string[]).includes(s))
      throw new Error(`--servers: ${s} is not one of ${INPROC_SERVERS.join(', ')}`);
  }
  const sideServers: Record<Side, string[]> = { a: servers, b: bServers };
  const workloads = list(
    'workloads',
    WORKLOADS.map((w) => w.id),
  ).map((id) => workloadById(id).id);
  const reps = positive('reps', '1');
  const lanes = positive('lanes', String(os.availableParallelism()));
  const isFile = (p: string): boolean => {
    if (!fs.existsSync(p)) throw new Error(`${p} does not exist`);
    return fs.statSync(p).isFile();
  };
  if ((['a', 'b'] as const).some((k) => !isFile(sources[k])) && !(await valgrindVersion()))
    throw new Error('--instructions needs valgrind (apt-get install valgrind)');

  // Every side is read or built before anything is counted: a tree of another layout fails here, not later.
  const counted = {} as Record<Side, InstructionResults[]>;
  const builds: Partial<Record<Side, string>> = {};
  for (const k of ['a', 'b'] as const) {
    const source = sources[k];
    if (isFile(source)) {
      counted[k] = [parseCounts(fs.readFileSync(source, 'utf8'), source)];
      say(`${k}: counts recorded in ${source} (${counted[k][0]!.startedAt})`);
    } else builds[k] = buildTree(k, source, sideServers[k]);
  }
  for (const k of ['a', 'b'] as const) {
    const dir = builds[k];
    if (dir === undefined) continue;
    counted[k] = [];
    for (let i = 1; i <= reps; i++) {
      say(
        `${k}: counting ${sources[k]}${reps > 1 ? `, repetition ${i} of ${reps}` : ''} (minutes per server)…`,
      );
      counted[k].push(await countInstructions(dir, sideServers[k], workloads, (l) => say(`${k}${l}`), lanes));
    }
  }
  // B's servers under the names of A's in their places, so that each row compares the pair.
  counted.b = counted.b.map((c) => renameServers(c, bServers, servers));
  const rows = compareCounts(counted.a, counted.b, servers, workloads);
  fs.mkdirSync(OUT, { recursive: true });
  const json = path.join(OUT, 'ab-instructions.json');
  fs.writeFileSync(json, JSON.stringify({ sources, a: counted.a, b: counted.b, rows }, null, 2));
  say('');
  say(`Instructions per request: A = ${sources.a}, B = ${sources.b}`);
  const pairs = servers.flatMap((s, i) => (bServers[i] === s ? [] : [`${bServers[i]} in place of ${s}`]));
  if (pairs.length > 0) say(`B counts ${pairs.join(', ')}.`);
  say('');
  say(renderComparison(rows));
  for (const warning of incomparable(counted.a, counted.b)) say(`Warning: ${warning}.`);
  say(`(all counts in ${path.relative(ROOT, json)})`);
}

async function main(): Promise<void> {
  const b = arg('b', '');
  if (!b)
    throw new Error('--b=<source tree with the change, or with --instructions recorded counts> is required');
  const sources = { a: path.resolve(arg('a', ROOT)), b: path.resolve(b) };
  if (process.argv.includes('--instructions')) await instructions(sources);
  else await timings(sources);
}

main().catch((e: unknown) => {
  process.stderr.write(`ab failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
