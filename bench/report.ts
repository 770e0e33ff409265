/**
 * Render bench/results/RESULTS.md from a run's results (and the latest soak and instruction counts, when there are
 * some). Everything in the file is generated from the JSON the runner wrote; how to read it: bench/README.md.
 */
import type { InstructionResults } from './instructions.js';
import type { LoadResult } from './load.js';
import type { MicroResult } from './micro.js';

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

/** RSS may grow by at most this much between the first and the last 10 s of the soak to count as flat. */
export const FLAT_TOLERANCE_MB = 5;
export const RSS_LIMIT_MB = 100;

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  if (n === 0) return NaN;
  return n % 2 === 1 ? s[(n - 1) / 2]! : (s[n / 2 - 1]! + s[n / 2]!) / 2;
};
const fmtInt = (x: number): string => (Number.isFinite(x) ? Math.round(x).toLocaleString('en') : 'n/a');
const fmtMs = (x: number): string => (Number.isFinite(x) ? x.toFixed(2) : 'n/a');
const fmtMb = (kb: number): string => (kb / 1024).toFixed(1);
const fmtRatio = (x: number): string => (Number.isFinite(x) ? x.toFixed(2) : 'n/a');

const WORKLOAD_LABEL: Record<string, string> = {
  'legacy-list': 'legacy tools/list',
  'legacy-call': 'legacy tools/call',
  'modern-list': 'modern tools/list',
  'modern-call': 'modern tools/call',
};

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

function spread(values: number[], fmt: (x: number) => string): string {
  if (values.length === 0) return 'n/a';
  if (values.length === 1) return fmt(values[0]!);
  return `${fmt(median(values))} (${fmt(Math.min(...values))}–${fmt(Math.max(...values))})`;
}

function table(header: string[], rows: string[][]): string {
  const line = (cols: string[]): string => `| ${cols.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
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

/** "young generation size / old space used" in MB from a server's `/__bench/stats` (V8's heap spaces), or n/a. */
function heapSpaces(stats: Record<string, unknown>): string {
  const sp = stats.heapSpaces as Record<string, { size: number; used: number }> | undefined;
  const young = sp?.new_space?.size;
  const old = sp?.old_space?.used;
  if (young === undefined || old === undefined) return 'n/a';
  return `${(young / 2 ** 20).toFixed(1)} / ${(old / 2 ** 20).toFixed(1)} MB`;
}

function soakVerdict(s: SoakResults['servers'][number]): { growthMb: number; flat: boolean; slope: number } {
  const samples = s.samples;
  const first = samples.filter((x) => x.t <= 10).map((x) => x.rssKb);
  const last = samples.filter((x) => x.t > samples[samples.length - 1]!.t - 10).map((x) => x.rssKb);
  const growthMb = (median(last) - median(first)) / 1024;
  // Least-squares slope over the whole soak, in MB per minute.
  const n = samples.length;
  const mt = samples.reduce((a, x) => a + x.t, 0) / n;
  const mr = samples.reduce((a, x) => a + x.rssKb, 0) / n;
  let num = 0;
  let den = 0;
  for (const x of samples) {
    num += (x.t - mt) * (x.rssKb - mr);
    den += (x.t - mt) ** 2;
  }
  const slope = den > 0 ? ((num / den) * 60) / 1024 : 0;
  return { growthMb, flat: growthMb <= FLAT_TOLERANCE_MB, slope };
}

export function renderResults(r: Results, soak?: SoakResults, instr?: InstructionResults): string {
  const out: string[] = [];
  const present = new Set(r.runs.map((x) => x.server));
  const servers = r.servers.filter((s) => present.has(s.id));
  /** A table with a row per server and a column per workload. */
  const byWorkload = (cell: (s: (typeof servers)[number], w: string) => string): string =>
    table(
      ['server', ...r.workloads.map((w) => WORKLOAD_LABEL[w] ?? w)],
      servers.map((s) => [s.label, ...r.workloads.map((w) => cell(s, w))]),
    );
  const conns = r.settings.connections;
  const mainConn = conns.includes(32) ? 32 : conns[0]!;
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

  // Targets.
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

  // Throughput and latency.
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

  // Correctness and memory.
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

  if (r.micro.length > 0) {
    out.push('## Micro-benchmarks');
    out.push('');
    out.push(
      'Plain loops over the library functions, timed with `process.hrtime.bigint()`; median of the rounds.',
    );
    out.push('');
    out.push(
      table(
        ['hot path', 'what runs', 'ops/s', 'µs/op'],
        r.micro.map((m) => [m.name, m.what, fmtInt(m.opsPerSec), (m.nsPerOp / 1000).toFixed(2)]),
      ),
    );
    out.push('');
  }

  if (soak) {
    out.push(`## Soak: RSS across ${soak.soakS} s`);
    out.push('');
    out.push(
      `Run on ${soak.startedAt} (load average before ${soak.loadBefore.map((x) => x.toFixed(2)).join(' / ')}). ` +
        'Mixed load: every connection sends the four workloads in turn, 32 connections, after a ' +
        `${soak.soakWarmupS ?? 3} s warm-up of the same load (under saturation V8 sizes its young generation ` +
        'over the first ~30 s). RSS ' +
        `sampled every second; flat means the median of the last 10 s is at most ${FLAT_TOLERANCE_MB} MB above ` +
        'the median of the first 10 s. The counters come from the server itself (`/__bench/stats`): limiter ' +
        'slot keys still held, metric series, the audit backlog (records queued in the winston logger / ' +
        "bytes waiting in its file streams), and V8's heap: the young generation's size (its two semi-spaces; V8 " +
        'grows them with the bytes that survive its collections, up to 16 MB each) and what the old space holds ' +
        '(live data and garbage not yet collected), at the start and at the end of the soak.',
    );
    out.push('');
    out.push(
      table(
        [
          'server',
          'req/s',
          'failed answers',
          'RSS first 10 s → last 10 s',
          'slope',
          'VmHWM',
          'limiter slot keys',
          'metric series',
          'audit backlog (records / bytes)',
          'V8 young generation / old space used',
        ],
        soak.servers.map((s) => {
          const v = soakVerdict(s);
          const first = median(s.samples.filter((x) => x.t <= 10).map((x) => x.rssKb));
          const lastT = s.samples[s.samples.length - 1]!.t;
          const last = median(s.samples.filter((x) => x.t > lastT - 10).map((x) => x.rssKb));
          const st = (o: Record<string, unknown>, k: string): string => {
            const v2 =
              k === 'slots' ? (o.limits as { memorySlotKeys?: number } | undefined)?.memorySlotKeys : o[k];
            return v2 === undefined ? 'n/a' : String(v2);
          };
          return [
            s.server,
            fmtInt(s.load.rps),
            String(s.load.non2xx + s.load.errors + s.load.timeouts + s.load.mismatches),
            `${fmtMb(first)} → ${fmtMb(last)} MB`,
            `${v.slope >= 0 ? '+' : ''}${v.slope.toFixed(2)} MB/min`,
            `${fmtMb(s.hwmKb)} MB`,
            `${st(s.statsBefore, 'slots')} → ${st(s.statsAfter, 'slots')}`,
            `${st(s.statsBefore, 'metricSeries')} → ${st(s.statsAfter, 'metricSeries')}`,
            `${st(s.statsBefore, 'auditQueued')} / ${st(s.statsBefore, 'auditBytes')} → ` +
              `${st(s.statsAfter, 'auditQueued')} / ${st(s.statsAfter, 'auditBytes')}`,
            `${heapSpaces(s.statsBefore)} → ${heapSpaces(s.statsAfter)}`,
          ];
        }),
      ),
    );
    out.push('');
    out.push('RSS every 5 s (MB):');
    out.push('');
    const times = soak.servers[0]?.samples.filter((_, i) => i % 5 === 4).map((x) => x.t) ?? [];
    out.push(
      table(
        ['server', ...times.map((t) => `${Math.round(t)} s`)],
        soak.servers.map((s) => [
          s.server,
          ...s.samples.filter((_, i) => i % 5 === 4).map((x) => fmtMb(x.rssKb)),
        ]),
      ),
    );
    out.push('');
  }

  if (instr && instr.rows.length > 0) out.push(...renderInstructions(r, instr));

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

  return out.join('\n');
}

/** The `--instructions` section: counts per request, and each server's count over its baseline's. */
function renderInstructions(r: Results, instr: InstructionResults): string[] {
  const label = (id: string): string => r.servers.find((s) => s.id === id)?.label ?? id;
  const workloads = [...new Set(instr.rows.map((x) => x.workload))];
  const servers: string[] = [...new Set(instr.rows.map((x) => x.server))];
  const at = (server: string, w: string): number | undefined =>
    instr.rows.find((x) => x.server === server && x.workload === w)?.perRequest;
  const k = (n: number | undefined): string => (n === undefined ? '—' : `${(n / 1000).toFixed(1)} k`);
  const baseline: Record<string, string> = {
    express: 'bare',
    'mcpware-express': 'express',
    'mcpware-node': 'bare',
    'mcpware-minimal': 'bare',
  };
  const out: string[] = [];
  out.push('## Instructions per request (valgrind)');
  out.push('');
  out.push(
    `Counted from ${instr.startedAt} to ${instr.finishedAt} by \`npm run bench -- --instructions\` ` +
      `(${instr.valgrind}, node ${instr.node}). Each server's own handler (the code its process runs) is driven ` +
      'in process by bench/inproc.ts: real `IncomingMessage`/`ServerResponse` objects over a socket that drops ' +
      'what is written, 32 requests in flight and at most one per connection per turn of the event loop (as a ' +
      'server with 32 connections gets them), the audit log going through winston into a stream that drops ' +
      `its lines. Per request: the difference between runs of ${instr.requests[1]} and ${instr.requests[0]} ` +
      'requests after the same warm-up, over the difference in requests, with the garbage collector and the ' +
      "compiler on the main thread (`--single-threaded`) and V8's predictable garbage collection schedule " +
      '(`--predictable-gc-schedule`: a fixed 4 MB young generation, fixed heap growing, no memory reducer), so ' +
      "that the collector's schedule does not depend on how fast valgrind runs, and a fixed hash seed " +
      "(`--hash-seed=1`), so that V8's start-up work is the same in both runs. Not counted: the HTTP parser, " +
      'the kernel and the load generator, which the load tests include; and cache misses. Repeated counts of ' +
      'the minimal stack agree within ~1 % (bench/README.md).',
  );
  out.push('');
  out.push(
    table(
      ['server', ...workloads.map((w) => WORKLOAD_LABEL[w] ?? w)],
      servers.map((s) => [label(s), ...workloads.map((w) => k(at(s, w)))]),
    ),
  );
  out.push('');
  const ratios = servers.filter((s) => baseline[s] !== undefined && servers.includes(baseline[s]));
  if (ratios.length > 0) {
    out.push('Each server over its baseline (instructions per request, same workload):');
    out.push('');
    out.push(
      table(
        ['server', 'baseline', ...workloads.map((w) => WORKLOAD_LABEL[w] ?? w)],
        ratios.map((s) => [
          label(s),
          label(baseline[s]!),
          ...workloads.map((w) => {
            const a = at(s, w);
            const b = at(baseline[s]!, w);
            return a === undefined || b === undefined ? '—' : `${(a / b).toFixed(2)} ×`;
          }),
        ]),
      ),
    );
    out.push('');
  }
  return out;
}
