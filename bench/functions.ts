/**
 * Where a request's instructions go, by function: the in-process harness under callgrind, as
 * `npm run bench -- --instructions` counts it, with the JavaScript V8 compiled named from its perf map.
 *
 *   npx tsx bench/functions.ts --server=mcpware-node --workload=modern-call [--without=audit,metrics]
 *                              [--against=mcpware-minimal[:<without>]] [--rows=40]
 *
 * One server: its functions, largest first. With `--against`: both, and what the first costs over the second,
 * sorted by that difference (`--against=mcpware-node:audit` compares the full stack with itself without audit).
 * Counts are those of `COUNTED` requests after the warm-up, as bench/instructions.ts counts them (how far they
 * repeat: bench/README.md). Needs valgrind.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { build, BUILD, ROOT } from './build.js';
import {
  callgrindPid,
  difference,
  type FunctionCost,
  nameJit,
  parseAnnotated,
  parsePerfMap,
  perRequest,
} from './callgrind.js';
import { INPROC_SERVERS, type InprocServer } from './inproc.js';
import { count, COUNTED, run, valgrindVersion } from './instructions.js';
import { workloadById } from './workloads.js';

const arg = (name: string): string | undefined =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);

/** A server to count, and the middlewares of its full stack left out (`BENCH_WITHOUT`). */
interface Variant {
  server: InprocServer;
  without: string;
}

function variant(spec: string, without = ''): Variant {
  const [server, w] = spec.split(':');
  if (!INPROC_SERVERS.includes(server as InprocServer))
    throw new Error(`unknown server ${server}; one of ${INPROC_SERVERS.join(', ')}`);
  return { server: server as InprocServer, without: w ?? without };
}

const label = (v: Variant): string => (v.without ? `${v.server} without ${v.without}` : v.server);

/** One run's counts by function, JIT code named. Its profile and V8's perf map are removed afterwards. */
async function profile(
  v: Variant,
  workload: string,
  requests: number,
  dir: string,
): Promise<Map<string, number>> {
  const outFile = path.join(dir, `${v.server}.${requests}.${process.hrtime.bigint()}.cg`);
  // In `dir`, which goes when the run is over: V8 leaves an isolate log in its working directory.
  await count(BUILD, v.server, workload, requests, { outFile, perfMap: true, without: v.without, cwd: dir });
  let mapFile: string | undefined;
  try {
    const pid = callgrindPid(fs.readFileSync(outFile, 'utf8').slice(0, 4096));
    if (pid === undefined) throw new Error(`${outFile}: no pid line`);
    // V8 writes its perf map to /tmp whatever TMPDIR says.
    mapFile = `/tmp/perf-${pid}.map`;
    const annotated = await run('callgrind_annotate', ['--threshold=100', outFile], process.env);
    if (annotated.code !== 0) throw new Error(`callgrind_annotate failed:\n${annotated.out.slice(-2000)}`);
    const map = fs.existsSync(mapFile) ? parsePerfMap(fs.readFileSync(mapFile, 'utf8'), BUILD, ROOT) : [];
    return nameJit(parseAnnotated(annotated.out), map);
  } finally {
    fs.rmSync(outFile, { force: true });
    if (mapFile) fs.rmSync(mapFile, { force: true });
  }
}

/** Instructions per request by function. */
async function costs(v: Variant, workload: string, dir: string): Promise<FunctionCost[]> {
  return perRequest(await profile(v, workload, COUNTED, dir), COUNTED);
}

const fmt = (n: number): string => Math.round(n).toLocaleString('en').padStart(9);

async function main(): Promise<void> {
  if (!(await valgrindVersion())) throw new Error('needs valgrind (apt-get install valgrind)');
  const workload = workloadById(arg('workload') ?? 'modern-call').id;
  const a = variant(arg('server') ?? 'mcpware-node', arg('without'));
  const againstSpec = arg('against');
  const b = againstSpec === undefined ? undefined : variant(againstSpec);
  const rows = Number(arg('rows') ?? 40);
  if (!Number.isSafeInteger(rows) || rows < 1)
    throw new Error(`--rows must be a positive integer, got ${rows}`);
  process.stderr.write(`compiling: ${build()} files\n`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpware-functions-'));
  try {
    process.stderr.write(
      `counting ${label(a)}${b ? ` and ${label(b)}` : ''}, ${workload} (a few minutes each)…\n`,
    );
    // Side by side: one valgrind per core.
    const [ca, cb] = await Promise.all([costs(a, workload, dir), b && costs(b, workload, dir)]);
    if (!b || !cb) {
      process.stdout.write(`instructions per request, ${label(a)}, ${workload}\n`);
      for (const c of ca.slice(0, rows)) process.stdout.write(`${fmt(c.perRequest)}  ${c.name}\n`);
      return;
    }
    const other = new Map(cb.map((c) => [c.name, c.perRequest]));
    const own = new Map(ca.map((c) => [c.name, c.perRequest]));
    process.stdout.write(
      `instructions per request, ${workload}: A = ${label(a)}, B = ${label(b)}\n${'A − B'.padStart(9)}${'A'.padStart(11)}${'B'.padStart(11)}  function\n`,
    );
    for (const c of difference(ca, cb).slice(0, rows))
      process.stdout.write(
        `${fmt(c.perRequest)}  ${fmt(own.get(c.name) ?? 0)}  ${fmt(other.get(c.name) ?? 0)}  ${c.name}\n`,
      );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`functions failed: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
