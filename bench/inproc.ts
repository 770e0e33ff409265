/**
 * The in-process harness: a benchmark server's own request handler (bench/servers/*, the same code the servers
 * run) driven with real `IncomingMessage`/`ServerResponse` objects over a socket that throws its writes away, 32
 * requests in flight. No HTTP parser, no kernel, no load generator: what is left is the JavaScript a request
 * costs, and under valgrind (bench/instructions.ts) its count of instructions, which a shared machine's load
 * does not change.
 *
 *   node <build>/bench/inproc.js <server> <workload> <requests>
 *
 * Runs `WARMUP_REQUESTS` requests (warm-up), then `requests` more, and prints one JSON line. Every answer must
 * be a 200 whose body carries the request's id, or the run fails. With `BENCH_INPROC_HANDSHAKE=1` it says
 * `warm` and `counted` around the requests after the warm-up and waits for a line on stdin after each, for the
 * counter to turn callgrind's instrumentation on and off (bench/instructions.ts).
 */
import fs from 'node:fs';
import { IncomingMessage, type RequestListener, ServerResponse } from 'node:http';
import { Duplex } from 'node:stream';
import { type Workload, workloadById } from './workloads.js';

/** The servers the harness can drive: those whose handler runs in this process. */
export const INPROC_SERVERS = [
  'bare',
  'express',
  'mcpware-express',
  'mcpware-node',
  'mcpware-node-otel-nosdk',
  'mcpware-minimal',
] as const;
export type InprocServer = (typeof INPROC_SERVERS)[number];

/**
 * Enough for V8 to have compiled the hot paths with its optimizing compiler before anything is counted, small
 * functions called once per request included: they reach the compiler's budget last (bench/README.md).
 */
export const WARMUP_REQUESTS = Number(process.env.BENCH_INPROC_WARMUP ?? 40000);
export const IN_FLIGHT = 32;

/** A socket that accepts every write and never reads: the response goes through node's whole outgoing path. */
class NullSocket extends Duplex {
  written = '';
  override _read(): void {}
  override _write(chunk: Buffer, _e: unknown, cb: () => void): void {
    this.written += chunk.toString('latin1');
    cb();
  }
  override _writev(chunks: { chunk: Buffer }[], cb: () => void): void {
    for (const c of chunks) this.written += c.chunk.toString('latin1');
    cb();
  }
}

function load(server: InprocServer): RequestListener {
  // The server modules listen only when run as a program; required, they hand over their handler.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const mod = require(`./servers/${server}.js`) as { handler?: RequestListener; app?: RequestListener };
  const h = mod.handler ?? mod.app;
  if (typeof h !== 'function') throw new Error(`bench/servers/${server} exports no handler`);
  return h;
}

/** What one drive of the harness saw: answers that were not a 200 carrying the request's id. */
export interface DriveResult {
  failed: number;
  firstFailure: string;
}

/**
 * Drives `handler` with `n` requests of workload `w`, IN_FLIGHT at a time and at most one per connection per turn
 * of the event loop, as a server with IN_FLIGHT connections gets them from each poll; setImmediate work (the
 * audit's uncork) runs between turns. `onFinished` is told, after each answer, how many have finished. Longer turns would let the audit logger, corked for a turn, hold more
 * records than a real server's turn does; they would outlive scavenges and be promoted, and the old-generation
 * collections that follow, which a real server does not run, would be counted against audit. One setImmediate
 * per turn, not per request, so that the harness's own work stays small.
 */
export async function drive(
  handler: RequestListener,
  w: Workload,
  n: number,
  onFinished?: (finished: number) => void,
): Promise<DriveResult> {
  const body = Buffer.from(w.body);
  const headers: Record<string, string> = { host: '127.0.0.1:1', 'content-length': String(body.length) };
  for (const [k, v] of Object.entries(w.headers)) headers[k.toLowerCase()] = v;
  const idText = `"id":${JSON.stringify((JSON.parse(w.body) as { id: unknown }).id)}`;

  const result: DriveResult = { failed: 0, firstFailure: '' };
  const one = (): Promise<void> =>
    new Promise((resolve) => {
      const sock = new NullSocket();
      const req = new IncomingMessage(sock as never);
      req.method = 'POST';
      req.url = '/mcp';
      req.headers = { ...headers };
      req.httpVersionMajor = 1;
      req.httpVersionMinor = 1;
      req.httpVersion = '1.1';
      const res = new ServerResponse(req);
      res.assignSocket(sock as never);
      res.on('finish', () => {
        if (res.statusCode !== 200 || !sock.written.includes(idText)) {
          result.failed++;
          result.firstFailure ||= sock.written.slice(0, 300);
        }
        res.detachSocket(sock as never);
        resolve();
      });
      handler(req, res);
      req.push(body);
      req.push(null);
      req.complete = true;
    });

  let started = 0;
  let inFlight = 0;
  let finished = 0;
  // BENCH_INPROC_WARMUP=0 asks for no warm-up at all.
  if (n <= 0) return result;
  await new Promise<void>((resolve) => {
    const done = (): void => {
      inFlight--;
      finished++;
      onFinished?.(finished);
      if (finished === n) resolve();
    };
    // One turn: a request on every free connection, then on to the next turn (setImmediate work runs between).
    const turn = (): void => {
      while (inFlight < IN_FLIGHT && started < n) {
        started++;
        inFlight++;
        void one().then(done);
      }
      if (finished < n) setImmediate(turn);
    };
    turn();
  });
  return result;
}

/**
 * With `BENCH_INPROC_HANDSHAKE=1`, says `line` on stdout and waits for a line on stdin. Synchronous, through the
 * file descriptors: stream objects made here would reach code the requests share (streams, events) with shapes
 * of their own, and the recompiling that follows would be counted.
 */
function handshake(line: string): void {
  if (process.env.BENCH_INPROC_HANDSHAKE !== '1') return;
  fs.writeSync(1, line + '\n');
  const answer = Buffer.alloc(16);
  for (;;) {
    try {
      if (fs.readSync(0, answer) > 0) return;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EAGAIN') throw e;
    }
  }
}

async function main(): Promise<void> {
  const [server, workloadId, countArg] = process.argv.slice(2);
  if (!INPROC_SERVERS.includes(server as InprocServer)) {
    throw new Error(`server must be one of ${INPROC_SERVERS.join(', ')}`);
  }
  const count = Number(countArg);
  if (!Number.isSafeInteger(count) || count <= 0) throw new Error('requests must be a positive integer');
  const w = workloadById(workloadId ?? '');
  const handler = load(server as InprocServer);

  // One drive for the warm-up and the counted requests: a second drive's first turns would compile its own
  // closures, and that work would be counted.
  let cpu = process.cpuUsage();
  const warm = (finished: number): void => {
    if (finished !== WARMUP_REQUESTS) return;
    handshake('warm');
    cpu = process.cpuUsage();
  };
  warm(0);
  const { failed, firstFailure } = await drive(handler, w, WARMUP_REQUESTS + count, warm);
  const used = process.cpuUsage(cpu);
  handshake('counted');
  const out = {
    server,
    workload: w.id,
    requests: count,
    failed,
    cpuUsPerRequest: (used.user + used.system) / count,
  };
  process.stdout.write(JSON.stringify(out) + '\n');
  if (failed > 0) {
    process.stderr.write(
      `${failed} answers were not a 200 carrying the request's id; first: ${firstFailure}\n`,
    );
    process.exitCode = 1;
  }
  // Timers of the stacks (limiter windows, metrics) must not keep a finished run alive.
  setImmediate(() => process.exit());
}

if (require.main === module) {
  main().catch((e: unknown) => {
    process.stderr.write(`inproc failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  });
}
