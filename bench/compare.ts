/**
 * Comparing instruction counts of two sides of an A/B (`tsx bench/ab.ts --instructions`): recorded counts read
 * back, matched by server × workload, and rendered as a table. Pure: bench/ab.ts counts and prints.
 */
import type { InstructionResults } from './instructions.js';

/** Recorded counts (`results-instructions.json` of `npm run bench -- --instructions`), checked for shape. */
export function parseCounts(text: string, source: string): InstructionResults {
  const v = JSON.parse(text) as Partial<InstructionResults>;
  const ok =
    Array.isArray(v.rows) &&
    v.rows.every(
      (r) => typeof r?.server === 'string' && typeof r.workload === 'string' && Number.isFinite(r.perRequest),
    ) &&
    (typeof v.requests === 'number' || Array.isArray(v.requests)) &&
    typeof v.node === 'string';
  if (!ok)
    throw new Error(`${source} holds no instruction counts (results-instructions.json of --instructions)`);
  return v as InstructionResults;
}

/** One server × workload of an A/B of counts: the counts per request of each side, one per repetition. */
export interface CountComparison {
  server: string;
  workload: string;
  a: number[];
  b: number[];
}

/** The counts of each side for every server × workload asked for (a side without a row has none). */
export function compareCounts(
  a: readonly InstructionResults[],
  b: readonly InstructionResults[],
  servers: readonly string[],
  workloads: readonly string[],
): CountComparison[] {
  const values = (side: readonly InstructionResults[], server: string, workload: string): number[] =>
    side
      .flatMap((r) => r.rows.filter((x) => x.server === server && x.workload === workload))
      .map((x) => x.perRequest);
  return servers.flatMap((server) =>
    workloads.map((workload) => ({
      server,
      workload,
      a: values(a, server, workload),
      b: values(b, server, workload),
    })),
  );
}

/**
 * Counts with each server of `from` named as the server of `to` in its place (other rows as they are): the side
 * of an A/B that counted another server in place of A's (`ab.ts --b-servers`).
 */
export function renameServers(
  counts: InstructionResults,
  from: readonly string[],
  to: readonly string[],
): InstructionResults {
  const rows = counts.rows.map((r) => {
    const i = from.indexOf(r.server);
    return i < 0 || to[i] === undefined ? r : { ...r, server: to[i] as typeof r.server };
  });
  return { ...counts, rows };
}

/** Why two sides' counts may not be comparable: another node, valgrind, number of requests counted or warm-up. */
export function incomparable(a: readonly InstructionResults[], b: readonly InstructionResults[]): string[] {
  const out: string[] = [];
  const one = (side: readonly InstructionResults[], pick: (r: InstructionResults) => unknown): string =>
    [...new Set(side.map((r) => JSON.stringify(pick(r))))].join(', ');
  for (const [what, pick] of [
    ['node', (r: InstructionResults) => r.node],
    ['valgrind', (r: InstructionResults) => r.valgrind],
    ['requests counted', (r: InstructionResults) => r.requests],
    ['warm-up', (r: InstructionResults) => r.warmup ?? 'not recorded'],
  ] as const) {
    const x = one(a, pick);
    const y = one(b, pick);
    if (x !== y) out.push(`${what} differs: A ${x}, B ${y}`);
  }
  return out;
}

const middle = (xs: readonly number[]): number => {
  const s = [...xs].sort((p, q) => p - q);
  const n = s.length;
  return n % 2 === 1 ? s[(n - 1) / 2]! : (s[n / 2 - 1]! + s[n / 2]!) / 2;
};

/**
 * The comparison as a Markdown table (medians, with the range when a side was counted more than once; B − A and
 * B / A), and a last line naming the largest change.
 */
export function renderComparison(rows: readonly CountComparison[]): string {
  const k = (n: number): string => `${(n / 1000).toFixed(1)} k`;
  const cell = (xs: readonly number[]): string =>
    xs.length === 0
      ? '—'
      : xs.length === 1
        ? k(xs[0]!)
        : `${k(middle(xs))} (${k(Math.min(...xs))}–${k(Math.max(...xs))})`;
  const signed = (n: number, text: string): string => (n > 0 ? `+${text}` : n < 0 ? `−${text}` : text);
  const lines = ['| server | workload | A | B | B − A | B / A |', '| --- | --- | --- | --- | --- | --- |'];
  let largest: { change: number; row: CountComparison } | undefined;
  for (const row of rows) {
    const both = row.a.length > 0 && row.b.length > 0;
    const a = both ? middle(row.a) : NaN;
    const b = both ? middle(row.b) : NaN;
    const diff = b - a;
    lines.push(
      `| ${row.server} | ${row.workload} | ${cell(row.a)} | ${cell(row.b)} | ` +
        `${both ? signed(diff, k(Math.abs(diff))) : '—'} | ${both ? (b / a).toFixed(3) : '—'} |`,
    );
    if (both && (!largest || Math.abs(b / a - 1) > Math.abs(largest.change)))
      largest = { change: b / a - 1, row };
  }
  lines.push('');
  lines.push(
    largest
      ? `Largest change: ${signed(largest.change, `${Math.abs(largest.change * 100).toFixed(1)} %`)} ` +
          `(${largest.row.server}, ${largest.row.workload}).`
      : 'No server × workload was counted on both sides.',
  );
  return lines.join('\n');
}
