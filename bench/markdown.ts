/**
 * Markdown and number formatting shared by the benchmark's reports (bench/report.ts and its sections).
 */

export const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  if (n === 0) return NaN;
  return n % 2 === 1 ? s[(n - 1) / 2]! : (s[n / 2 - 1]! + s[n / 2]!) / 2;
};
export const fmtInt = (x: number): string =>
  Number.isFinite(x) ? Math.round(x).toLocaleString('en') : 'n/a';
export const fmtMs = (x: number): string => (Number.isFinite(x) ? x.toFixed(2) : 'n/a');
export const fmtMb = (kb: number): string => (kb / 1024).toFixed(1);
export const fmtRatio = (x: number): string => (Number.isFinite(x) ? x.toFixed(2) : 'n/a');

export const WORKLOAD_LABEL: Record<string, string> = {
  'legacy-list': 'legacy tools/list',
  'legacy-call': 'legacy tools/call',
  'modern-list': 'modern tools/list',
  'modern-call': 'modern tools/call',
};

export function spread(values: number[], fmt: (x: number) => string): string {
  if (values.length === 0) return 'n/a';
  if (values.length === 1) return fmt(values[0]!);
  return `${fmt(median(values))} (${fmt(Math.min(...values))}–${fmt(Math.max(...values))})`;
}

export function table(header: string[], rows: string[][]): string {
  const line = (cols: string[]): string => `| ${cols.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}
