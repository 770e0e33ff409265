/**
 * What `tsx bench/ab.ts --instructions` rests on: recorded counts are read back or refused, the two sides are
 * matched by server × workload and the table's differences and ratios are the ones the counts give, counts of
 * another node, valgrind or harness are flagged, and a source tree of another layout is recognized before
 * anything is built or counted.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { missingImports, ROOT } from '../build';
import { compareCounts, incomparable, parseCounts, renameServers, renderComparison } from '../compare';
import type { InstructionResults } from '../instructions';

function counts(rows: Record<string, number>, over: Partial<InstructionResults> = {}): InstructionResults {
  return {
    startedAt: '2026-12-01T00:00:00Z',
    finishedAt: '2026-12-01T00:10:00Z',
    valgrind: 'valgrind-3.19.0',
    node: 'v20.20.2',
    requests: 8000,
    rows: Object.entries(rows).map(([key, perRequest]) => {
      const [server, workload] = key.split(' ') as [InstructionResults['rows'][number]['server'], string];
      return { server, workload, perRequest, total: 0 };
    }),
    ...over,
  };
}

/** The table row of `server` × `workload`, as cells. */
function row(md: string, server: string, workload: string): string[] {
  const line = md.split('\n').find((l) => l.startsWith(`| ${server} | ${workload} |`));
  if (!line) throw new Error(`no row ${server} ${workload}`);
  return line
    .split('|')
    .slice(1, -1)
    .map((c) => c.trim());
}

describe('bench ab --instructions: comparing counts', () => {
  test('each row gives both counts, B − A and B / A; the last line names the largest change', () => {
    const a = [counts({ 'mcpware-node legacy-list': 134_300, 'mcpware-express modern-call': 823_700 })];
    const b = [counts({ 'mcpware-node legacy-list': 131_000, 'mcpware-express modern-call': 848_411 })];
    const md = renderComparison(
      compareCounts(a, b, ['mcpware-node', 'mcpware-express'], ['legacy-list', 'modern-call']),
    );
    expect(row(md, 'mcpware-node', 'legacy-list')).toEqual([
      'mcpware-node',
      'legacy-list',
      '134.3 k',
      '131.0 k',
      '−3.3 k',
      '0.975',
    ]);
    expect(row(md, 'mcpware-express', 'modern-call').slice(4)).toEqual(['+24.7 k', '1.030']);
    // −2.5 % on one row, +3.0 % on the other: the larger in size is named, with its sign.
    expect(md.split('\n').at(-1)).toBe('Largest change: +3.0 % (mcpware-express, modern-call).');
  });

  test('a server × workload missing on one side is shown and left out of the largest change', () => {
    const a = [counts({ 'mcpware-node legacy-list': 100_000, 'mcpware-node modern-call': 100_000 })];
    const b = [counts({ 'mcpware-node legacy-list': 101_000 })];
    const md = renderComparison(compareCounts(a, b, ['mcpware-node'], ['legacy-list', 'modern-call']));
    expect(row(md, 'mcpware-node', 'modern-call')).toEqual([
      'mcpware-node',
      'modern-call',
      '100.0 k',
      '—',
      '—',
      '—',
    ]);
    expect(md.split('\n').at(-1)).toBe('Largest change: +1.0 % (mcpware-node, legacy-list).');
    expect(renderComparison(compareCounts(a, [counts({})], ['mcpware-node'], ['legacy-list']))).toContain(
      'No server × workload was counted on both sides.',
    );
  });

  test('repeated counts: the median, with the range', () => {
    const a = [100_000, 104_000, 101_000].map((n) => counts({ 'mcpware-node modern-call': n }));
    const b = [counts({ 'mcpware-node modern-call': 102_010 })];
    const md = renderComparison(compareCounts(a, b, ['mcpware-node'], ['modern-call']));
    expect(row(md, 'mcpware-node', 'modern-call').slice(2)).toEqual([
      '101.0 k (100.0 k–104.0 k)',
      '102.0 k',
      '+1.0 k',
      '1.010',
    ]);
  });

  test('counts of another node, valgrind, number of requests or warm-up are flagged', () => {
    const a = [counts({})];
    expect(incomparable(a, [counts({})])).toEqual([]);
    expect(
      incomparable(a, [counts({}, { node: 'v22.0.0', valgrind: 'valgrind-3.22.0', requests: [2000, 8000] })]),
    ).toEqual([
      'node differs: A "v20.20.2", B "v22.0.0"',
      'valgrind differs: A "valgrind-3.19.0", B "valgrind-3.22.0"',
      'requests counted differs: A 8000, B [2000,8000]',
    ]);
    // Counts recorded before the warm-up was kept say so rather than pass for the same warm-up.
    expect(incomparable([counts({}, { warmup: 20000 })], [counts({})])).toEqual([
      'warm-up differs: A 20000, B "not recorded"',
    ]);
    expect(incomparable([counts({}, { warmup: 20000 })], [counts({}, { warmup: 20000 })])).toEqual([]);
  });

  test("--b-servers: B counted another server in place of A's, compared in its row", () => {
    const a = [counts({ 'mcpware-node modern-call': 100_000 })];
    const b = [counts({ 'mcpware-node-otel-nosdk modern-call': 101_500, 'bare modern-call': 9_000 })];
    const renamed = b.map((c) => renameServers(c, ['mcpware-node-otel-nosdk'], ['mcpware-node']));
    expect(renamed[0]!.rows.map((r) => r.server)).toEqual(['mcpware-node', 'bare']);
    const md = renderComparison(compareCounts(a, renamed, ['mcpware-node'], ['modern-call']));
    expect(row(md, 'mcpware-node', 'modern-call').slice(2)).toEqual([
      '100.0 k',
      '101.5 k',
      '+1.5 k',
      '1.015',
    ]);
  });

  test('recorded counts are read back; a file of another kind is refused, naming it', () => {
    const c = counts({ 'mcpware-node legacy-list': 134_300 });
    expect(parseCounts(JSON.stringify(c), 'x.json')).toEqual(c);
    expect(() => parseCounts(JSON.stringify({ kind: 'full', runs: [] }), 'results-full.json')).toThrow(
      /results-full\.json holds no instruction counts/,
    );
    expect(() =>
      parseCounts(JSON.stringify({ ...c, rows: [{ server: 'bare', workload: 'legacy-list' }] }), 'y.json'),
    ).toThrow(/y\.json/);
  });
});

describe('bench ab: a source tree of another layout', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpware-ab-test-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('this checkout holds every module the benchmark servers import', () => {
    expect(missingImports(ROOT)).toEqual([]);
  });

  test('a tree without the one-folder-per-subpath layout lacks them, named with their importer', () => {
    const missing = missingImports(dir);
    expect(missing).toContainEqual({
      from: 'bench/servers/stack.ts',
      module: 'middleware/dispatch/index.ts',
    });
    expect(missing).toContainEqual({ from: 'bench/servers/stack.ts', module: 'handlers/tools/index.ts' });
    expect(missing).toContainEqual({
      from: 'bench/servers/mcpware-node.ts',
      module: 'middleware/compose/index.ts',
    });
  });

  test('for the servers named, only what they load: a tree without otel() runs mcpware-node, not its otel variant', () => {
    // This checkout without middleware/otel/: a tree of before the OpenTelemetry servers.
    for (const f of ['index.ts', 'lib', 'core', 'middleware', 'handlers'])
      fs.cpSync(path.join(ROOT, f), path.join(dir, f), {
        recursive: true,
        filter: (p) => !p.includes(`${path.sep}middleware${path.sep}otel`),
      });
    expect(missingImports(dir, ['mcpware-node'])).toEqual([]);
    expect(missingImports(dir, ['mcpware-node-otel-nosdk'])).toEqual([
      { from: 'bench/servers/otel.ts', module: 'middleware/otel/index.ts' },
    ]);
    // All servers: the otel variants' module is missing, named by the helper that imports it.
    expect(new Set(missingImports(dir).map((x) => x.module))).toEqual(new Set(['middleware/otel/index.ts']));
  });

  test('a tree that lacks one module is told exactly that one', () => {
    for (const m of new Set(missingImports(dir).map((x) => x.module))) {
      if (m === 'middleware/limits/index.ts') continue;
      fs.mkdirSync(path.join(dir, path.dirname(m)), { recursive: true });
      fs.writeFileSync(path.join(dir, m), '');
    }
    // Only that module is named, by each file that imports it.
    const missing = missingImports(dir);
    expect(new Set(missing.map((x) => x.module))).toEqual(new Set(['middleware/limits/index.ts']));
    expect(missing).toEqual(
      expect.arrayContaining([
        { from: 'bench/servers/stack.ts', module: 'middleware/limits/index.ts' },
        { from: 'bench/servers/redis.ts', module: 'middleware/limits/index.ts' },
      ]),
    );
  });
});
