/**
 * The `--instructions` part of the report: counts per request of each in-process server, and over its baseline.
 */
import type { InstructionResults } from './instructions.js';
import { table, WORKLOAD_LABEL } from './markdown.js';
import type { Results } from './report.js';

/** The `--instructions` section: counts per request, and each server's count over its baseline's. */
export function renderInstructions(r: Results, instr: InstructionResults): string[] {
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
    // What mounting otel() costs without an SDK (the 2 % rule of docs/performance.md).
    'mcpware-node-otel-nosdk': 'mcpware-node',
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
      `its lines. Per request: the instructions of ${String(instr.requests)} requests after a warm-up of ` +
      `${instr.warmup ?? 'unrecorded'} (callgrind's instrumentation is off until the warm-up ends), over their number, with the garbage collector and the ` +
      "compiler on the main thread (`--single-threaded`) and V8's predictable garbage collection schedule " +
      '(`--predictable-gc-schedule`: a fixed 4 MB young generation, fixed heap growing, no memory reducer), so ' +
      "that the collector's schedule does not depend on how fast valgrind runs, and a fixed hash seed " +
      "(`--hash-seed=1`), so that V8's hash tables lay out the same in every count. Not counted: the HTTP parser, " +
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
