/**
 * Summarize a V8 CPU profile (`node --cpu-prof`, written by `npm run bench -- --profile`): self time per
 * function and per file, and total (inclusive) time of the functions named on the command line, as a share of
 * the busy time (idle excluded).
 *
 *   tsx bench/profile.ts bench/.out/profiles/mcpware-express.cpuprofile [--top=30] [--inclusive=name,name]
 */
import fs from 'node:fs';
import path from 'node:path';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
  hitCount?: number;
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
}

function shortUrl(url: string): string {
  if (!url) return '(native)';
  const u = url.replace(/^file:\/\//, '');
  const b = u.indexOf('/mcpware-bench/');
  if (b >= 0) return u.slice(u.indexOf('/', b + '/mcpware-bench/'.length) + 1);
  const nm = u.lastIndexOf('node_modules/');
  if (nm >= 0) return u.slice(nm + 'node_modules/'.length);
  return path.basename(u);
}

export function summarize(file: string, top = 30, inclusive: string[] = [], requests = 0): string {
  const p = JSON.parse(fs.readFileSync(file, 'utf8')) as Profile;
  const byId = new Map<number, Node>();
  for (const n of p.nodes) byId.set(n.id, n);
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  // Time per node from the samples (timeDeltas[i] is the time before sample i).
  const time = new Map<number, number>();
  for (let i = 0; i < p.samples.length; i++) {
    const id = p.samples[i]!;
    time.set(id, (time.get(id) ?? 0) + (p.timeDeltas[i + 1] ?? p.timeDeltas[i] ?? 0));
  }
  let total = 0;
  let idle = 0;
  const selfFn = new Map<string, number>();
  const selfFile = new Map<string, number>();
  const incl = new Map<string, number>();
  // Owner: the innermost frame in mcpware's own code (lib/, core/, middleware/, index) on the sampled stack, so that
  // time spent in a dependency (winston, prom-client, ajv, node:crypto) is charged to the mcpware code that
  // called it. Samples with no such frame are charged to the innermost frame's file.
  const owner = new Map<string, number>();
  const ownUrl = (url: string): boolean =>
    /\/mcpware-bench\/build[^/]*\/(lib|core|middleware|index)/.test(url);
  for (const [id, t] of time) {
    const n = byId.get(id)!;
    const fn = n.callFrame.functionName || '(anonymous)';
    if (fn === '(idle)') {
      idle += t;
      continue;
    }
    total += t;
    const key = `${shortUrl(n.callFrame.url)}:${fn}:${n.callFrame.lineNumber + 1}`;
    selfFn.set(key, (selfFn.get(key) ?? 0) + t);
    const f = shortUrl(n.callFrame.url);
    selfFile.set(f, (selfFile.get(f) ?? 0) + t);
    let own: string | undefined;
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const cf = byId.get(cur)!.callFrame;
      // audit() wraps res.write/res.end to count bytes: the socket write under them is not audit's work.
      if (ownUrl(cf.url) && cf.functionName !== 'res.end' && cf.functionName !== 'res.write') {
        own = `${shortUrl(cf.url)}:${cf.functionName || '(anonymous)'}`;
        break;
      }
    }
    own ??= `[${f}]`;
    owner.set(own, (owner.get(own) ?? 0) + t);
    // Inclusive time: walk up once per sampled node, counting each named function once per stack.
    if (inclusive.length > 0) {
      const seen = new Set<string>();
      for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
        const name = byId.get(cur)!.callFrame.functionName;
        if (inclusive.includes(name) && !seen.has(name)) {
          seen.add(name);
          incl.set(name, (incl.get(name) ?? 0) + t);
        }
      }
    }
  }
  // With the number of requests served, also show microseconds per request.
  const pct = (t: number): string =>
    ((100 * t) / total).toFixed(1).padStart(5) +
    ' %' +
    (requests > 0 ? `${(t / requests).toFixed(1).padStart(7)} µs/req` : '');
  const lines: string[] = [];
  lines.push(
    `${path.basename(file)}: busy ${(total / 1e6).toFixed(2)} s, idle ${(idle / 1e6).toFixed(2)} s` +
      (requests > 0 ? `, ${(total / requests).toFixed(1)} µs busy per request` : ''),
  );
  lines.push('', 'self time by function:');
  for (const [k, t] of [...selfFn].sort((a, b) => b[1] - a[1]).slice(0, top)) lines.push(`  ${pct(t)}  ${k}`);
  lines.push('', 'time by owner (innermost mcpware function on the stack; [file] when none):');
  for (const [k, t] of [...owner].sort((a, b) => b[1] - a[1]).slice(0, top)) lines.push(`  ${pct(t)}  ${k}`);
  const ownerFile = new Map<string, number>();
  for (const [k, t] of owner) {
    const file = k.startsWith('[')
      ? 'outside mcpware (node, GC, deps called from callbacks)'
      : k.split(':')[0]!;
    ownerFile.set(file, (ownerFile.get(file) ?? 0) + t);
  }
  lines.push('', 'time by owning mcpware file:');
  for (const [k, t] of [...ownerFile].sort((a, b) => b[1] - a[1])) lines.push(`  ${pct(t)}  ${k}`);
  lines.push('', 'self time by file:');
  for (const [k, t] of [...selfFile].sort((a, b) => b[1] - a[1]).slice(0, top))
    lines.push(`  ${pct(t)}  ${k}`);
  if (inclusive.length > 0) {
    lines.push('', 'inclusive time:');
    for (const name of inclusive) lines.push(`  ${pct(incl.get(name) ?? 0)}  ${name}`);
  }
  return lines.join('\n');
}

if (require.main === module) {
  const args = process.argv.slice(2);
  const files = args.filter((a) => !a.startsWith('--'));
  const top = Number(args.find((a) => a.startsWith('--top='))?.slice(6) ?? 30);
  const inclusive =
    args
      .find((a) => a.startsWith('--inclusive='))
      ?.slice(12)
      .split(',') ?? [];
  const requests = Number(args.find((a) => a.startsWith('--requests='))?.slice(11) ?? 0);
  for (const f of files) process.stdout.write(summarize(f, top, inclusive, requests) + '\n\n');
}
