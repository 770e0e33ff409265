/**
 * One measured load run with autocannon (in the runner's process, never in a server's). Latency percentiles
 * are computed here from autocannon's per-response times (microsecond resolution): autocannon's own latency
 * histogram rounds to whole milliseconds, which hides every difference at one connection.
 */
import autocannon from 'autocannon';
import type { Workload } from './workloads.js';

export interface LoadResult {
  /** Mean of autocannon's per-second request counts. */
  rps: number;
  /** Responses received (all statuses). */
  total: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  /** Answers that failed the workload's check (a JSON-RPC error in a 200 body, a tool error, a wrong result). */
  mismatches: number;
  durationS: number;
  /** CPU time the server used per answer, in µs (from /proc; set by the runner). */
  cpuUsPerReq?: number;
}

export interface LoadOptions {
  port: number;
  connections: number;
  durationS: number;
  /** Send these requests in turn on each connection (soak); default: the workload's one request. */
  rotate?: readonly Workload[];
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i]!;
}

export function runLoad(w: Workload, o: LoadOptions): Promise<LoadResult> {
  const list = o.rotate ?? [w];
  const verify = list.length === 1 ? w.verify : (b: string): boolean => list.some((x) => x.verify(b));
  let times = new Float64Array(1 << 16);
  let n = 0;
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: `http://127.0.0.1:${o.port}/mcp`,
        connections: o.connections,
        pipelining: 1,
        duration: o.durationS,
        timeout: 10,
        verifyBody: verify,
        requests: list.map((x) => ({
          method: 'POST' as const,
          path: '/mcp',
          // autocannon adds content-length itself (a second one makes the request invalid).
          headers: x.headers,
          body: x.body,
        })),
      },
      (err: Error | null, r: autocannon.Result) => {
        if (err) return reject(err);
        const sorted = times.subarray(0, n).sort();
        resolve({
          rps: r.requests.average,
          total: r.requests.total,
          p50: percentile(sorted, 50),
          p99: percentile(sorted, 99),
          non2xx: r.non2xx,
          errors: r.errors,
          timeouts: r.timeouts,
          mismatches: r.mismatches,
          durationS: r.duration,
        });
      },
    );
    instance.on('response', (_client: unknown, _status: number, _bytes: number, ms: number) => {
      if (n === times.length) {
        const bigger = new Float64Array(times.length * 2);
        bigger.set(times);
        times = bigger;
      }
      times[n++] = ms;
    });
  });
}
