/**
 * A/B: measure a change to the library before making it. Builds two source trees (default A: this checkout)
 * into node_modules/.cache/mcpware-bench/build-a and build-b, runs the same server from each, interleaved (A B A B …), and prints the
 * medians of req/s and of the server's CPU time per answer.
 *
 *   tsx bench/ab.ts --b=/tmp/copy-with-change [--a=DIR] [--server=mcpware-node] [--workload=legacy-call]
 *                   [--connections=32] [--duration=5] [--reps=5]
 *
 * The copy needs index.ts, lib/, middleware/ and handlers/ (e.g. `mkdir /tmp/x && cp -r index.ts lib middleware handlers /tmp/x`).
 */
import path from 'node:path';
import { CACHE, ROOT, build } from './build.js';
import { runLoad } from './load.js';
import { RunningServer, SERVERS, cpuMs } from './procs.js';
import { workloadById } from './workloads.js';

const arg = (name: string, dflt: string): string =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? dflt;

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

async function main(): Promise<void> {
  const b = arg('b', '');
  if (!b) throw new Error('--b=<source tree with the change> is required');
  const trees = { a: path.resolve(arg('a', ROOT)), b: path.resolve(b) };
  const serverId = arg('server', 'mcpware-node');
  const spec = SERVERS.find((s) => s.id === serverId);
  if (!spec) throw new Error(`unknown server ${serverId}`);
  const w = workloadById(arg('workload', 'legacy-call'));
  const connections = Number(arg('connections', '32'));
  const durationS = Number(arg('duration', '5'));
  const reps = Number(arg('reps', '5'));
  const servers: Record<'a' | 'b', RunningServer> = {} as Record<'a' | 'b', RunningServer>;
  for (const k of ['a', 'b'] as const) {
    const dir = path.join(CACHE, `build-${k}`);
    build(trees[k], dir);
    servers[k] = new RunningServer(spec, [], dir);
    await servers[k].ready();
  }
  const rps: Record<'a' | 'b', number[]> = { a: [], b: [] };
  const cpu: Record<'a' | 'b', number[]> = { a: [], b: [] };
  try {
    for (const k of ['a', 'b'] as const)
      await runLoad(w, { port: servers[k].port, connections, durationS: 2 });
    for (let i = 0; i < reps; i++) {
      for (const k of ['a', 'b'] as const) {
        const s = servers[k];
        const c0 = cpuMs(s.pid);
        const r = await runLoad(w, { port: s.port, connections, durationS });
        if (r.non2xx + r.errors + r.mismatches > 0)
          throw new Error(`${k}: failed answers ${JSON.stringify(r)}`);
        rps[k].push(r.rps);
        cpu[k].push(((cpuMs(s.pid) - c0) * 1000) / r.total);
        process.stdout.write(
          `rep ${i + 1} ${k}: ${r.rps.toFixed(0)} req/s, ${cpu[k].at(-1)!.toFixed(1)} µs/req\n`,
        );
      }
    }
  } finally {
    await Promise.all(Object.values(servers).map((s) => s.stop()));
  }
  for (const k of ['a', 'b'] as const) {
    process.stdout.write(
      `${k} (${trees[k]}): median ${median(rps[k]).toFixed(0)} req/s, ${median(cpu[k]).toFixed(1)} µs CPU/req\n`,
    );
  }
  process.stdout.write(
    `b/a: req/s ×${(median(rps.b) / median(rps.a)).toFixed(3)}, CPU/req ×${(median(cpu.b) / median(cpu.a)).toFixed(3)}\n`,
  );
}

main().catch((e: unknown) => {
  process.stderr.write(`ab failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
