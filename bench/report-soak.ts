/**
 * The soak's part of the report: whether RSS stayed flat across the soak, and the soak's section.
 */
import { fmtInt, fmtMb, median, table } from './markdown.js';
import type { SoakResults } from './report.js';

/** RSS may grow by at most this much between the first and the last 10 s of the soak to count as flat. */
export const FLAT_TOLERANCE_MB = 5;

/** "young generation size / old space used" in MB from a server's `/__bench/stats` (V8's heap spaces), or n/a. */
function heapSpaces(stats: Record<string, unknown>): string {
  const sp = stats.heapSpaces as Record<string, { size: number; used: number }> | undefined;
  const young = sp?.new_space?.size;
  const old = sp?.old_space?.used;
  if (young === undefined || old === undefined) return 'n/a';
  return `${(young / 2 ** 20).toFixed(1)} / ${(old / 2 ** 20).toFixed(1)} MB`;
}

/** RSS growth from the first to the last 10 s (flat or not), and the least-squares slope, in MB per minute. */
export function soakVerdict(s: SoakResults['servers'][number]): {
  growthMb: number;
  flat: boolean;
  slope: number;
} {
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

/** The soak, when one is recorded. */
export function renderSoak(soak: SoakResults | undefined): string[] {
  const out: string[] = [];
  if (!soak) return out;
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
  return out;
}
