/**
 * bench/report.ts turns a run's JSON into bench/results/RESULTS.md: the targets' ratios and verdicts must be the
 * ones the numbers give (ratio of the median req/s, per-repetition range, `met` only at or above the target), and
 * so must the memory verdicts (peak RSS ≤ 100 MB; flat = the last 10 s at most 5 MB above the first 10 s). The
 * file holds generated results only.
 */
import fs from 'node:fs';
import path from 'node:path';
import { RESULTS_FILE, ROOT } from '../build';
import { renderResults, type Results, type SoakResults } from '../report';
import type { LoadResult } from '../load';

const MACHINE: Results['machine'] = {
  cpu: 'test CPU',
  cores: 2,
  memoryGiB: 4,
  node: 'v20.0.0',
  kernel: 'test',
  autocannon: '8.0.0',
};

function load(rps: number, cpuUsPerReq = 100): LoadResult {
  return {
    rps,
    total: rps * 10,
    p50: 1,
    p99: 2,
    non2xx: 0,
    errors: 0,
    timeouts: 0,
    mismatches: 0,
    durationS: 10,
    cpuUsPerReq,
  };
}

/** One workload, 32 connections, three repetitions per server with the given req/s. */
function results(rps: Record<string, number[]>, hwmKb: Record<string, number> = {}): Results {
  const runs: Results['runs'] = [];
  for (const [server, values] of Object.entries(rps)) {
    values.forEach((v, rep) =>
      runs.push({ server, workload: 'modern-call', connections: 32, rep, load: load(v), peakRssKb: 90_000 }),
    );
  }
  return {
    kind: 'full',
    startedAt: '2026-11-30T00:00:00Z',
    finishedAt: '2026-11-30T00:30:00Z',
    machine: MACHINE,
    versions: {},
    loadBefore: [0, 0, 0],
    loadAfter: [0, 0, 0],
    settings: { durationS: 10, warmupS: 3, reps: 3, connections: [32] },
    servers: Object.keys(rps).map((id) => ({ id, label: id, modern: true })),
    workloads: ['modern-call'],
    probes: [],
    runs,
    hwmKb,
    statsAfter: {},
    micro: [],
  };
}

/** The Markdown row of the targets table whose first cell starts with `name`. */
function targetRow(md: string, name: string): string[] {
  const line = md.split('\n').find((l) => l.startsWith(`| ${name}`));
  if (!line) throw new Error(`no target row ${name}`);
  return line
    .split('|')
    .slice(1, -1)
    .map((c) => c.trim());
}

describe('bench report: target verdicts', () => {
  test('the ratio is that of the medians, with the per-repetition range; 0.50 meets a 0.5 target', () => {
    // Medians 5,500 and 11,000: exactly 0.5. Per repetition: 0.55, 0.50, 0.4545…
    const md = renderResults(
      results({ bare: [10_000, 12_000, 11_000], 'mcpware-node': [5_500, 6_000, 5_000] }),
    );
    const row = targetRow(md, 'full stack on node:http ≥ 0.5');
    expect(row[1]).toBe('modern tools/call');
    expect(row[2]).toBe('0.50 (per rep 0.45–0.55)');
    expect(row[4]).toBe('met');
  });

  test('just under the target is missed, and says so', () => {
    const md = renderResults(
      results({ bare: [10_000, 10_000, 10_000], 'mcpware-minimal': [6_990, 7_500, 6_000] }),
    );
    const row = targetRow(md, 'minimal on node:http ≥ 0.7');
    expect(row[2]).toBe('0.70 (per rep 0.60–0.75)');
    // 6,990 / 10,000 rounds to 0.70 but is below 0.7.
    expect(row[4]).toBe('**missed**');
  });

  test('a target whose baseline did not run is left out, not reported as met', () => {
    const md = renderResults(results({ 'mcpware-node': [5_000, 5_000, 5_000] }));
    expect(md).not.toContain('full stack on node:http ≥ 0.5');
  });

  test('the legacy-only SDK v1 target is not computed for a modern workload', () => {
    const md = renderResults(
      results({
        'mcpware-express': [3_000, 3_000, 3_000],
        'sdk-v1': [1_000, 1_000, 1_000],
        'sdk-v2': [1_000, 1_000, 1_000],
      }),
    );
    expect(md).not.toContain('≥ 4.5 × SDK v1');
    expect(targetRow(md, 'full stack in Express ≥ 4.5 × SDK v2')[2]).toBe('3.00 (per rep 3.00–3.00)');
  });

  test('the ceiling: the Express targets for bare handler in Express, within reach or not', () => {
    const md = renderResults(
      results({
        express: [4_000, 4_000, 4_000],
        'express-floor': [5_000, 6_000, 5_500],
        'mcpware-express': [3_000, 3_000, 3_000],
        'sdk-v2': [1_250, 1_250, 1_250],
      }),
    );
    // 5,500 / 1,250 = 4.4: no stack mounted in Express reaches 4.5 × here; 5,500 / 4,000 clears 0.9.
    expect(targetRow(md, 'bare handler in Express ≥ 4.5 × SDK v2')).toEqual([
      'bare handler in Express ≥ 4.5 × SDK v2',
      'modern tools/call',
      '4.40 (per rep 4.00–4.80)',
      '1.00',
      '**no**',
    ]);
    expect(targetRow(md, 'bare handler in Express ≥ 0.9 × Express')[4]).toBe('yes');
    // The targets themselves are still the full stack's.
    expect(targetRow(md, 'full stack in Express ≥ 4.5 × SDK v2')[4]).toBe('**missed**');
    // Its peak RSS, when recorded, against the 100 MB target.
    const withRss = renderResults(
      results({ express: [1], 'express-floor': [1] }, { 'express-floor': 117.4 * 1024 }),
    );
    expect(targetRow(withRss, 'bare handler in Express: peak RSS')).toEqual([
      'bare handler in Express: peak RSS ≤ 100 MB',
      'whole run (VmHWM)',
      '117.4 MB',
      '',
      '**no**',
    ]);
    // Without the floor server, no ceiling table.
    expect(renderResults(results({ express: [1], 'mcpware-express': [1] }))).not.toContain('| ceiling |');
  });

  test('peak RSS: 100.0 MB meets the 100 MB target, 100.1 MB misses it', () => {
    const at = (kb: number): string[] =>
      targetRow(renderResults(results({ bare: [1] }, { 'mcpware-node': kb })), 'peak RSS of the full stack');
    expect(at(100 * 1024)).toEqual([
      'peak RSS of the full stack ≤ 100 MB (mcpware-node)',
      'whole run (VmHWM)',
      '100.0 MB',
      '',
      'met',
    ]);
    expect(at(100.1 * 1024)[4]).toBe('**missed**');
  });
});

describe('bench report: soak flatness', () => {
  /** V8's heap spaces as `/__bench/stats` reports them, sizes in MB. */
  const spaces = (youngMb: number, oldUsedMb: number): Record<string, { size: number; used: number }> => ({
    new_space: { size: youngMb * 2 ** 20, used: 0 },
    old_space: { size: 2 * oldUsedMb * 2 ** 20, used: oldUsedMb * 2 ** 20 },
  });
  /** 60 one-second samples: `start` MB for the first 10 s, rising linearly to `end` MB in the last 10 s. */
  function soak(startMb: number, endMb: number): SoakResults {
    const samples = Array.from({ length: 60 }, (_, i) => {
      const t = i + 1;
      const mb = t <= 10 ? startMb : t > 50 ? endMb : startMb + ((endMb - startMb) * (t - 10)) / 40;
      return { t, rssKb: mb * 1024 };
    });
    return {
      startedAt: '2026-11-30T00:00:00Z',
      machine: MACHINE,
      loadBefore: [0, 0, 0],
      loadAfter: [0, 0, 0],
      soakS: 60,
      servers: [
        {
          server: 'mcpware-node',
          load: load(5_000),
          samples,
          hwmKb: endMb * 1024,
          statsBefore: { limits: { memorySlotKeys: 0 }, metricSeries: 93, heapSpaces: spaces(4, 12) },
          statsAfter: { limits: { memorySlotKeys: 0 }, metricSeries: 93, heapSpaces: spaces(16, 12.5) },
        },
      ],
    };
  }
  const verdict = (s: SoakResults): string[] =>
    targetRow(renderResults(results({ bare: [1] }), s), 'RSS flat across a 60 s run');

  test('growth of 5.0 MB is flat; 5.2 MB is not', () => {
    expect(verdict(soak(95, 100))).toEqual([
      'RSS flat across a 60 s run (mcpware-node)',
      'mixed, 32 connections (soak)',
      '+5.0 MB first→last 10 s',
      '',
      'met',
    ]);
    expect(verdict(soak(95, 100.2))[4]).toBe('**missed**');
  });

  test('the soak table reports the server counters before → after', () => {
    const md = renderResults(results({ bare: [1] }), soak(95, 96));
    const line = md.split('\n').find((l) => l.startsWith('| mcpware-node | 5,000'));
    expect(line).toContain('| 0 → 0 | 93 → 93 |');
    expect(line).toContain('| 4.0 / 12.0 MB → 16.0 / 12.5 MB |');
  });
});

describe('bench report: generated results only', () => {
  /** The sections the renderer writes, in its order (the run's connection counts give the per-count ones). */
  const SECTIONS = [
    /^## Machine$/,
    /^## Targets \(\d+ connections, ratios of median req\/s from this run\)$/,
    /^## \d+ connections?$/,
    /^## Answers checked, and memory$/,
    /^## Micro-benchmarks$/,
    /^## Soak: RSS across \d+ s$/,
    /^## Instructions per request \(valgrind\)$/,
    /^## How the servers are built$/,
  ];
  const headings = (md: string): string[] => md.split('\n').filter((l) => l.startsWith('## '));

  test('the report is the generated sections and nothing after them', () => {
    const md = renderResults(results({ bare: [1], 'mcpware-node': [1] }));
    expect(headings(md)).toEqual([
      '## Machine',
      '## Targets (32 connections, ratios of median req/s from this run)',
      '## 32 connections',
      '## Answers checked, and memory',
      '## How the servers are built',
    ]);
    expect(md).not.toContain('NOTES.md');
    expect(md.endsWith('Minimal: parse, classifyRevision, dispatch.\n')).toBe(true);
  });

  test('the committed RESULTS.md is where the runner writes, and holds only sections the renderer makes', () => {
    expect(path.relative(ROOT, RESULTS_FILE)).toBe(path.join('bench', 'results', 'RESULTS.md'));
    const md = fs.readFileSync(RESULTS_FILE, 'utf8');
    expect(md.startsWith('# Benchmark results\n')).toBe(true);
    const unknown = headings(md).filter((h) => !SECTIONS.some((re) => re.test(h)));
    expect(unknown).toEqual([]);
    expect(md).not.toMatch(/^#{3,} /m);
  });
});
