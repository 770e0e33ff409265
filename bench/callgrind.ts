/**
 * Reading callgrind's per-function counts (bench/functions.ts): `callgrind_annotate` output into counts by
 * function, V8's `--perf-basic-prof` map into names for the JavaScript that V8 compiled (which callgrind only
 * knows as addresses), and a run's counts into instructions per request by function. Pure: the CLI does the I/O.
 */

/** One line of `callgrind_annotate`: `  1,234 ( 0.01%)  file:function [object]`. */
const ANNOTATED = /^\s*([\d,]+) \(\s*[\d.]+%\)\s+(\S.*)$/;

/** Counts by function of one `callgrind_annotate` output, with its `PROGRAM TOTALS` under that name. */
export function parseAnnotated(text: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = ANNOTATED.exec(line);
    if (!m) continue;
    let name = m[2]!.trimEnd();
    // The object the code is in (`[/usr/bin/node]`, `[???]` for generated code) names nothing the function does not.
    const object = name.lastIndexOf(' [');
    if (object > 0 && name.endsWith(']')) name = name.slice(0, object);
    counts.set(name, (counts.get(name) ?? 0) + Number(m[1]!.replaceAll(',', '')));
  }
  return counts;
}

/** The process id callgrind recorded (its output file's `pid:` line), which names V8's perf map. */
export function callgrindPid(text: string): number | undefined {
  const m = /^pid:\s*(\d+)$/m.exec(text);
  return m ? Number(m[1]) : undefined;
}

/** One entry of V8's perf map: code at [start, start + size) is `name`. */
export interface JitEntry {
  start: number;
  size: number;
  name: string;
}

/**
 * V8's `/tmp/perf-<pid>.map` (`<start hex> <size hex> <name>` per line), sorted by address. Paths under one of
 * `roots` (the first that matches) are shown relative to it.
 */
export function parsePerfMap(text: string, ...roots: string[]): JitEntry[] {
  const prefixes = roots.map((r) => (r.endsWith('/') ? r : `${r}/`));
  const out: JitEntry[] = [];
  for (const line of text.split('\n')) {
    const a = line.indexOf(' ');
    const b = line.indexOf(' ', a + 1);
    if (a <= 0 || b <= a) continue;
    const start = parseInt(line.slice(0, a), 16);
    const size = parseInt(line.slice(a + 1, b), 16);
    if (!Number.isFinite(start) || !Number.isFinite(size)) continue;
    let name = line.slice(b + 1);
    const prefix = prefixes.find((p) => name.includes(p));
    if (prefix !== undefined) name = name.replaceAll(prefix, '');
    out.push({ start, size, name });
  }
  return out.sort((x, y) => x.start - y.start);
}

/** The name of the code at `address`, or undefined when the map has none there. */
export function jitName(map: readonly JitEntry[], address: number): string | undefined {
  let lo = 0;
  let hi = map.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (map[mid]!.start <= address) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  const e = found >= 0 ? map[found]! : undefined;
  return e && address < e.start + e.size ? e.name : undefined;
}

/** Counts by function with callgrind's bare addresses (`???:0x…`) replaced by the JIT code's names. */
export function nameJit(counts: ReadonlyMap<string, number>, map: readonly JitEntry[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const [name, n] of counts) {
    const m = /^\?\?\?:0x([0-9a-f]{1,16})$/.exec(name);
    const named = m ? jitName(map, parseInt(m[1]!, 16)) : undefined;
    const key = named === undefined ? name : `JIT ${named}`;
    out.set(key, (out.get(key) ?? 0) + n);
  }
  return out;
}

/** A function's instructions per request. */
export interface FunctionCost {
  name: string;
  perRequest: number;
}

/** Instructions per request by function: one run's counts over the requests it counted. Largest first;
 * `PROGRAM TOTALS` is the total. */
export function perRequest(counts: ReadonlyMap<string, number>, requests: number): FunctionCost[] {
  if (!(requests > 0)) throw new RangeError(`requests must be positive, got ${requests}`);
  return [...counts]
    .map(([name, n]) => ({ name, perRequest: n / requests }))
    .sort((x, y) => y.perRequest - x.perRequest || (x.name < y.name ? -1 : 1));
}

/** `a` minus `b` by function (two servers or variants compared), largest first. */
export function difference(a: readonly FunctionCost[], b: readonly FunctionCost[]): FunctionCost[] {
  const m = new Map<string, number>();
  for (const c of a) m.set(c.name, c.perRequest);
  for (const c of b) m.set(c.name, (m.get(c.name) ?? 0) - c.perRequest);
  return [...m]
    .map(([name, perRequest]) => ({ name, perRequest }))
    .sort((x, y) => y.perRequest - x.perRequest || (x.name < y.name ? -1 : 1));
}
