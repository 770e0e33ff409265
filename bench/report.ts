/**
 * Render bench/results/RESULTS.md from a run's results (and the latest soak and instruction counts, when there are
 * some). Everything in the file is generated from the JSON the runner wrote; how to read it: bench/README.md.
 * One function per section; the soak's and the instruction counts' are in report-soak.ts and
 * report-instructions.ts.
 */
import type { InstructionResults } from './instructions.js';
import type { LoadResult } from './load.js';
import type { MicroResult } from './micro.js';
import { fmtInt, fmtMb, fmtMs, fmtRatio, median, spread, table, WORKLOAD_LABEL } from './markdown.js';
import { renderInstructions } from './report-instructions.js';
import { renderSoak, soakVerdict } from './report-soak.js';

export interface Results {
  kind: 'full' | 'quick' | 'soak' | 'ablate';
  startedAt: string;
  finishedAt: string;
  machine: {
    cpu: string;
    cores: number;
    memoryGiB: number;
    node: string;
    kernel: string;
    autocannon: string;
  };
  versions: Record<string, string>;
  loadBefore: number[];
  loadAfter: number[];
  settings: { durationS: number; warmupS: number; reps: number; connections: number[] };
  servers: { id: string; label: string; modern: boolean }[];
  workloads: string[];
  probes: {
    server: string;
    workload: string;
    status: number;
    contentType: string;
    bytes: number;
    ok: boolean;
  }[];
  runs: {
    server: string;
    workload: string;
    connections: number;
    rep: number;
    load: LoadResult;
    peakRssKb: number;
  }[];
  hwmKb: Record<string, number>;
  statsAfter: Record<string, unknown>;
  micro: MicroResult[];
}

export interface SoakResults {
  startedAt: string;
  machine: Results['machine'];
  loadBefore: number[];
  loadAfter: number[];
  soakS: number;
  soakWarmupS?: number;
  servers: {
    server: string;
    load: LoadResult;
    samples: { t: number; rssKb: number }[];
    hwmKb: number;
    statsBefore: Record<string, unknown>;
    statsAfter: Record<string, unknown>;
  }[];
}

export const RSS_LIMIT_MB = 100;

interface Cell {
  values: number[];
}

function cells(r: Results, pick: (l: LoadResult) => number, connections: number): Map<string, Cell> {
  const m = new Map<string, Cell>();
  for (const run of r.runs) {
    if (run.connections !== connections) continue;
    const key = `${run.server} ${run.workload}`;
    let c = m.get(key);
    if (!c) m.set(key, (c = { values: [] }));
    c.values.push(pick(run.load));
  }
  return m;
}

/** Per-repetition ratios of A over B (same workload, same connections), and the ratio of the medians. */
function ratio(
  r: Results,
  a: string,
  b: string,
  workload: string,
  connections: number,
): { value: number; reps: number[] } {
  const rps = (server: string): Map<number, number> => {
    const m = new Map<number, number>();
    for (const run of r.runs) {
      if (run.server === server && run.workload === workload && run.connections === connections)
        m.set(run.rep, run.load.rps);
    }
    return m;
  };
  const ra = rps(a);
  const rb = rps(b);
  const reps: number[] = [];
  for (const [rep, x] of ra) {
    const y = rb.get(rep);
    if (y !== undefined && y > 0) reps.push(x / y);
  }
  const value = median([...ra.values()]) / median([...rb.values()]);
  return { value, reps };
}

/** CPU time per answer of B over A (medians): >1 means A needs less CPU per answer. */
function cpuRatio(r: Results, a: string, b: string, workload: string, connections: number): number {
  const cpu = (server: string): number =>
    median(
      r.runs
        .filter((x) => x.server === server && x.workload === workload && x.connections === connections)
        .map((x) => x.load.cpuUsPerReq ?? NaN),
    );
  return cpu(b) / cpu(a);
}

interface Target {
  name: string;
  a: string;
  b: string;
  min: number;
  legacyOnly?: boolean;
}

const TARGETS: Target[] = [
  {
    name: 'full stack in Express ≥ 0.9 × Express + express.json',
    a: 'mcpware-express',
    b: 'express',
    min: 0.9,
  },
  {
    name: 'full stack in Express ≥ 4.5 × SDK v1',
    a: 'mcpware-express',
    b: 'sdk-v1',
    min: 4.5,
    legacyOnly: true,
  },
  { name: 'full stack in Express ≥ 4.5 × SDK v2', a: 'mcpware-express', b: 'sdk-v2', min: 4.5 },
  { name: 'full stack on node:http ≥ 0.5 × bare node:http', a: 'mcpware-node', b: 'bare', min: 0.5 },
  { name: 'minimal on node:http ≥ 0.7 × bare node:http', a: 'mcpware-minimal', b: 'bare', min: 0.7 },
  {
    name: 'full stack, limits in Redis ≥ 0.85 × limits in memory',
    a: 'mcpware-node-redis',
    b: 'mcpware-node',
    min: 0.85,
  },
];

/**
 * The Express targets again, for bare node:http's handler mounted in Express as mcpware is (express-floor): what
 * Express alone lets any mounted handler reach on this machine. A target above that is out of reach of any stack
 * mounted in Express, whatever the stack does.
 */
const CEILINGS: Target[] = TARGETS.filter((t) => t.a === 'mcpware-express').map((t) => ({
  ...t,
  name: t.name.replace('full stack in Express', 'bare handler in Express'),
  a: 'express-floor',
}));

/**
 * A row per target and workload both of whose servers ran: the ratio of the medians with the per-repetition
 * range, the CPU-time ratio, and `verdict[0]` at or above the target, `verdict[1]` below it.
 */
function ratioRows(
  r: Results,
  targets: readonly Target[],
  conn: number,
  verdict: readonly [string, string],
): string[][] {
  const present = new Set(r.runs.map((x) => x.server));
  const rows: string[][] = [];
  for (const t of targets) {
    if (!present.has(t.a) || !present.has(t.b)) continue;
    for (const w of r.workloads) {
      if (t.legacyOnly && w.startsWith('modern')) continue;
      const q = ratio(r, t.a, t.b, w, conn);
      if (!Number.isFinite(q.value)) continue;
      const reps =
        q.reps.length > 1
          ? ` (per rep ${fmtRatio(Math.min(...q.reps))}–${fmtRatio(Math.max(...q.reps))})`
          : '';
      rows.push([
        t.name,
        WORKLOAD_LABEL[w] ?? w,
        `${fmtRatio(q.value)}${reps}`,
        fmtRatio(cpuRatio(r, t.a, t.b, w, conn)),
        q.value >= t.min ? verdict[0] : verdict[1],
      ]);
    }
  }
  return rows;
}

type Server = Results['servers'][number];

/** What the sections share: the servers that ran, and a table with a row per server and a column per workload. */
interface View {
  r: Results;
  servers: Server[];
  byWorkload(cell: (s: Server, w: string) => string): string;
}

function view(r: Results): View {
  const present = new Set(r.runs.map((x) => x.server));
  const servers = r.servers.filter((s) => present.has(s.id));
  const byWorkload = (cell: (s: Server, w: string) => string): string =>
    table(
      ['server', ...r.workloads.map((w) => WORKLOAD_LABEL[w] ?? w)],
      servers.map((s) => [s.label, ...r.workloads.map((w) => cell(s, w))]),
    );
  return { r, servers, byWorkload };
}

/** The report: every section the recorded runs have data for, in a fixed order. */
export function renderResults(r: Results, soak?: SoakResults, instr?: InstructionResults): string {
  const conns = r.settings.connections;
  const mainConn = conns.includes(32) ? 32 : conns[0]!;
  const v = view(r);
  return [
    ...renderHeader(r),
    ...renderTargets(r, mainConn, soak),
    ...renderLoad(v),
    ...renderAnswers(v),
    ...renderMicro(r),
    ...renderSoak(soak),
    ...(instr && instr.rows.length > 0 ? renderInstructions(r, instr) : []),
    ...renderServersBuilt(),
  ].join('\n');
}

/** Title, provenance, the machine and the load settings. */
function renderHeader(r: Results): string[] {
  const out: string[] = [];
  out.push('# Benchmark results');
  out.push('');
  out.push(
    `Generated by \`npm run bench${r.kind === 'quick' ? ' -- --quick' : ''}\` (bench/run.ts) from the run of ` +
      `${r.startedAt} to ${r.finishedAt}. Do not edit by hand: rerun the benchmark. How to read it: bench/README.md.`,
  );
  if (r.kind !== 'full') out.push('', `**This is a ${r.kind} run: short runs, for development only.**`);
  out.push('');
  out.push('## Machine');
  out.push('');
  out.push(
    table(
      ['CPU', 'cores', 'memory', 'Node.js', 'kernel', 'load average before → after (1/5/15 min)'],
      [
        [
          r.machine.cpu,
          String(r.machine.cores),
          `${r.machine.memoryGiB} GiB`,
          r.machine.node,
          r.machine.kernel,
          `${r.loadBefore.map((x) => x.toFixed(2)).join(' / ')} → ${r.loadAfter.map((x) => x.toFixed(2)).join(' / ')}`,
        ],
      ],
    ),
  );
  out.push('');
  out.push(
    `Load: autocannon ${r.machine.autocannon}, one process, pipelining 1, on 127.0.0.1, sharing the two cores with ` +
      `the server under test (same for every server). ${r.settings.reps} repetition(s) of ${r.settings.durationS} s per ` +
      `server × workload × connection count, after a ${r.settings.warmupS} s warm-up of each server × workload; runs ` +
      `interleaved (every server in turn for each workload). Cells: median (min–max) over the repetitions. ` +
      `Versions: ${Object.entries(r.versions)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')}.`,
  );
  out.push('');
  return out;
}

/** The targets' verdicts, and the Express ceiling's. */
function renderTargets(r: Results, mainConn: number, soak: SoakResults | undefined): string[] {
  const out: string[] = [];
  out.push(`## Targets (${mainConn} connections, ratios of median req/s from this run)`);
  out.push('');
  const rows = ratioRows(r, TARGETS, mainConn, ['met', '**missed**']);
  for (const id of ['mcpware-express', 'mcpware-node', 'mcpware-node-small-heap']) {
    const kb = r.hwmKb[id];
    if (kb === undefined) continue;
    rows.push([
      `peak RSS of the full stack ≤ ${RSS_LIMIT_MB} MB (${id})`,
      'whole run (VmHWM)',
      `${fmtMb(kb)} MB`,
      '',
      kb / 1024 <= RSS_LIMIT_MB ? 'met' : '**missed**',
    ]);
  }
  if (soak) {
    for (const s of soak.servers) {
      const v = soakVerdict(s);
      rows.push([
        `RSS flat across a ${soak.soakS} s run (${s.server})`,
        'mixed, 32 connections (soak)',
        `${v.growthMb >= 0 ? '+' : ''}${v.growthMb.toFixed(1)} MB first→last 10 s`,
        '',
        v.flat ? 'met' : '**missed**',
      ]);
    }
  } else
    rows.push(['RSS flat across a 60 s run', '—', 'not measured yet (`npm run bench -- --soak`)', '', '—']);
  out.push(table(['target', 'workload', 'measured (req/s ratio)', 'CPU-time ratio', 'verdict'], rows));
  out.push('');
  out.push(
    '"CPU-time ratio" is the baseline\'s server CPU time per answer divided by mcpware\'s: the throughput ratio ' +
      'the two would have if the server alone were the bottleneck (the load generator shares the two cores; ' +
      'for bare node:http it is the bottleneck). Verdicts use the req/s ratio.',
  );
  out.push('');
  const ceilingRows = ratioRows(r, CEILINGS, mainConn, ['yes', '**no**']);
  const floorKb = r.hwmKb['express-floor'];
  if (floorKb !== undefined) {
    ceilingRows.push([
      `bare handler in Express: peak RSS ≤ ${RSS_LIMIT_MB} MB`,
      'whole run (VmHWM)',
      `${fmtMb(floorKb)} MB`,
      '',
      floorKb / 1024 <= RSS_LIMIT_MB ? 'yes' : '**no**',
    ]);
  }
  if (ceilingRows.length > 0) {
    out.push(
      "What this machine allows a stack mounted in Express: the same ratios for bare node:http's handler (a " +
        'JSON.parse and a fixed answer, no checks) mounted in Express 5 as one layer, as mcpware is ' +
        '(bench/servers/express-floor.ts). Where it does not reach a target, no stack mounted in Express can.',
    );
    out.push('');
    out.push(
      table(
        ['ceiling', 'workload', 'measured (req/s ratio)', 'CPU-time ratio', 'target within reach'],
        ceilingRows,
      ),
    );
    out.push('');
  }
  return out;
}

/** Throughput, CPU per answer and latency, per connection count. */
function renderLoad({ r, byWorkload }: View): string[] {
  const out: string[] = [];
  const conns = r.settings.connections;
  for (const c of conns) {
    out.push(`## ${c} connection${c === 1 ? '' : 's'}`);
    out.push('');
    const rps = cells(r, (l) => l.rps, c);
    const p50 = cells(r, (l) => l.p50, c);
    const p99 = cells(r, (l) => l.p99, c);
    out.push('Requests per second:');
    out.push('');
    out.push(byWorkload((s, w) => spread(rps.get(`${s.id} ${w}`)?.values ?? [], fmtInt)));
    out.push('');
    const cpu = cells(r, (l) => l.cpuUsPerReq ?? NaN, c);
    out.push(
      'Server CPU time per answer, µs (user + system from /proc, median over the repetitions; less sensitive ' +
        'to other load on the machine than req/s):',
    );
    out.push('');
    out.push(
      byWorkload((s, w) => {
        const v = cpu.get(`${s.id} ${w}`)?.values;
        return v ? fmtInt(median(v)) : 'n/a';
      }),
    );
    out.push('');
    out.push('Latency p50 / p99, ms (medians over the repetitions):');
    out.push('');
    out.push(
      byWorkload((s, w) => {
        const a = p50.get(`${s.id} ${w}`)?.values;
        const b = p99.get(`${s.id} ${w}`)?.values;
        return a && b ? `${fmtMs(median(a))} / ${fmtMs(median(b))}` : 'n/a';
      }),
    );
    out.push('');
  }
  return out;
}

/** Failed answers, memory and answer sizes. */
function renderAnswers({ r, servers, byWorkload }: View): string[] {
  const out: string[] = [];
  out.push('## Answers checked, and memory');
  out.push('');
  out.push(
    'Every answer of every run is checked in the load generator: HTTP 2xx, a JSON-RPC `result` (a JSON-RPC error ' +
      'in a 200 body, or a tool result with `isError`, counts as a mismatch) carrying the expected tool list or ' +
      'echoed text. Before the runs, one answer per server and workload is parsed and compared in full (id, tool ' +
      'name, description, input schema, content). "Peak RSS" is the highest VmRSS sampled every 100 ms during the ' +
      "server's runs; VmHWM is the kernel's peak over the server's whole life (start-up and warm-up included).",
  );
  out.push('');
  const tally = (id: string, f: (l: LoadResult) => number): number =>
    r.runs.filter((x) => x.server === id).reduce((n, x) => n + f(x.load), 0);
  out.push(
    table(
      ['server', 'answers', 'non-2xx', 'errors + timeouts', 'mismatched bodies', 'peak RSS (runs)', 'VmHWM'],
      servers.map((s) => [
        s.label,
        fmtInt(tally(s.id, (l) => l.total)),
        String(tally(s.id, (l) => l.non2xx)),
        String(tally(s.id, (l) => l.errors + l.timeouts)),
        String(tally(s.id, (l) => l.mismatches)),
        `${fmtMb(Math.max(...r.runs.filter((x) => x.server === s.id).map((x) => x.peakRssKb)))} MB`,
        r.hwmKb[s.id] === undefined ? 'n/a' : `${fmtMb(r.hwmKb[s.id]!)} MB`,
      ]),
    ),
  );
  out.push('');
  out.push('Answer sizes (bytes of the HTTP body; `sse` = an SSE stream carrying the JSON-RPC message):');
  out.push('');
  out.push(
    byWorkload((s, w) => {
      const p = r.probes.find((x) => x.server === s.id && x.workload === w);
      if (!p) return 'n/a';
      return `${p.bytes}${p.contentType === 'text/event-stream' ? ' sse' : ''}`;
    }),
  );
  out.push('');
  return out;
}

/** The micro-benchmarks, when they ran. */
function renderMicro(r: Results): string[] {
  if (r.micro.length === 0) return [];
  return [
    '## Micro-benchmarks',
    '',
    'Plain loops over the library functions, timed with `process.hrtime.bigint()`; median of the rounds.',
    '',
    table(
      ['hot path', 'what runs', 'ops/s', 'µs/op'],
      r.micro.map((m) => [m.name, m.what, fmtInt(m.opsPerSec), (m.nsPerOp / 1000).toFixed(2)]),
    ),
    '',
  ];
}

/** How the servers are built (fixed text). */
function renderServersBuilt(): string[] {
  const out: string[] = [];
  out.push('## How the servers are built');
  out.push('');
  out.push(
    [
      '- Every server is a child process of its own running plain JavaScript compiled from this checkout ' +
        "(bench/build.ts: TypeScript's transpiler, the same target as `dist/cjs`; no loader in the server), " +
        'listening on 127.0.0.1 with the same keep-alive settings.',
      '- Every server answers the same four requests (bench/workloads.ts), all carrying the same headers, ' +
        '`Authorization: Bearer <key>` included. Legacy requests are stateless 2025-11-25 requests (no ' +
        '`initialize` first); modern ones carry the 2026-07-28 `_meta` envelope and `Mcp-Method`/`Mcp-Name`.',
      '- bare node:http reads the body, `JSON.parse`s it and answers a pre-encoded result with the id echoed: ' +
        'the physical limit. Express 5: `express.json()` and one handler building the same result.',
      "- Bare handler in Express (the ceiling, a reference rather than a competitor): bare node:http's handler mounted " +
        "in Express 5 as one layer (`app.use('/mcp', handler)`), as the full stack in Express is mounted: the " +
        'most any handler mounted in Express can reach on this machine.',
      '- SDK v1: `createMcpExpressApp()` and, per request, a new `McpServer` + `StreamableHTTPServerTransport` ' +
        '(`sessionIdGenerator: undefined`, `enableJsonResponse: true`), as its stateless example does. It does ' +
        'not speak 2026-07-28: modern workloads are n/a.',
      '- SDK v2: `createMcpExpressApp()` + `createMcpHandler(factory)` (a new `McpServer` per request, its ' +
        'default stateless fallback for 2025-era requests), mounted through an adapter equivalent to ' +
        '`toNodeHandler` of `@modelcontextprotocol/node` (not a dependency here). Its legacy leg answers as an ' +
        'SSE stream (the fallback transport is built with only `sessionIdGenerator: undefined`); every other ' +
        'server answers one JSON body.',
      '- mcpware full stack: audit (winston File transport, rotated at 64 MB, its fs stream given a 1 MiB ' +
        'highWaterMark: with the default 16 KiB the audit backlog grows without bound under saturation, see ' +
        'bench/README.md), metrics (own prom-client ' +
        'Registry), guardOrigin, methodGuard, parse, rejectBatch, classifyRevision, checkHeaders (registry ' +
        'lookup), apiKeyAuth, limits (memory store, every limit at 2^40), redact (mask), dispatch (ToolRegistry); ' +
        "in Express with `app.use('/mcp', …)`, on node:http with `compose()`. Minimal: parse, " +
        'classifyRevision, dispatch.',
    ].join('\n'),
  );
  out.push('');
  return out;
}
