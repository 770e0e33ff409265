/**
 * The benchmark's own machinery, so that `npm run bench` keeps measuring what it says as the library changes:
 * every benchmark server, compiled from this checkout as bench/build.ts compiles it and started as the runner
 * starts it, answers every workload it supports with an answer the runner's checks accept; the baselines and the
 * mcpware stacks answer with the same JSON; the load generator's per-answer check counts wrong answers instead of
 * passing them. No timing is asserted here: speed is measured by `npm run bench`, never in tests.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { build, CACHE, ROOT } from '../build';
import { type LoadResult, runLoad } from '../load';
import { messageOf, RunningServer, SERVERS, sendOnce, supports } from '../procs';
import { WORKLOADS, workloadById } from '../workloads';

const BUILD = path.join(CACHE, `test-build-${process.pid}`);
let outDir: string;
const running = new Map<string, RunningServer>();

beforeAll(async () => {
  build(ROOT, BUILD);
  outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpware-bench-test-'));
  // Every server at once (start-up dominates); the audit logs go to a scratch directory.
  await Promise.all(
    SERVERS.map(async (spec) => {
      // OTEL_BSP_SCHEDULE_DELAY: the OpenTelemetry variant's span batches leave soon after the requests.
      const env = { ...spec.env, BENCH_OUT: outDir, OTEL_BSP_SCHEDULE_DELAY: '50' };
      const s = new RunningServer({ ...spec, env }, [], BUILD);
      running.set(spec.id, s);
      await s.ready();
    }),
  );
}, 120_000);

afterAll(async () => {
  await Promise.all([...running.values()].map((s) => s.stop()));
  fs.rmSync(BUILD, { recursive: true, force: true });
  if (outDir) fs.rmSync(outDir, { recursive: true, force: true });
}, 30_000);

function server(id: string): RunningServer {
  const s = running.get(id);
  if (!s) throw new Error(`server ${id} did not start`);
  return s;
}

const CASES = SERVERS.flatMap((spec) =>
  WORKLOADS.filter((w) => supports(spec, w)).map((w) => [spec.id, w.id] as const),
);

describe('every benchmark server answers every workload it supports', () => {
  test('the list covers the seven compared servers, the Express ceiling, the Redis, OpenTelemetry and heap-capped variants', () => {
    expect(SERVERS.map((s) => s.id)).toEqual([
      'bare',
      'express',
      'express-floor',
      'sdk-v1',
      'sdk-v2',
      'mcpware-express',
      'mcpware-node',
      'mcpware-node-otel',
      'mcpware-node-otel-nosdk',
      'mcpware-node-redis',
      'mcpware-minimal',
      'mcpware-proxy',
      'mcpware-node-small-heap',
    ]);
    // SDK v1 speaks only the legacy revision; every other server both.
    expect(CASES).toHaveLength(13 * 4 - 2);
  });

  test.each(CASES)(
    '%s answers %s: HTTP 200, the thorough check and the per-answer check',
    async (id, wid) => {
      const w = workloadById(wid);
      const r = await sendOnce(server(id).port, w);
      expect(r.status).toBe(200);
      expect(w.inspect(messageOf(r.body, r.contentType))).toBeUndefined();
      expect(w.verify(r.body)).toBe(true);
    },
  );

  test.each(WORKLOADS.map((w) => w.id))(
    '%s: the baselines and the mcpware stacks answer with the same JSON',
    async (wid) => {
      const w = workloadById(wid);
      const ids = [
        'bare',
        'express',
        'express-floor',
        'mcpware-express',
        'mcpware-node',
        'mcpware-node-otel',
        'mcpware-node-otel-nosdk',
        'mcpware-minimal',
        'mcpware-node-small-heap',
      ];
      const answers = await Promise.all(
        ids.map(async (id) => {
          const r = await sendOnce(server(id).port, w);
          return messageOf(r.body, r.contentType);
        }),
      );
      for (let i = 1; i < answers.length; i++)
        expect({ [ids[i]!]: answers[i] }).toEqual({ [ids[i]!]: answers[0] });
    },
  );

  test('the full stack serves its counters to the soak (limiter slots, metric series, audit backlog, V8 heap)', async () => {
    const stats = await server('mcpware-node').stats();
    expect(stats).toMatchObject({
      limits: { memorySlotKeys: expect.any(Number) },
      metricSeries: expect.any(Number),
      auditQueued: expect.any(Number),
      auditBytes: expect.any(Number),
      heapSpaces: {
        new_space: { size: expect.any(Number), used: expect.any(Number) },
        old_space: { size: expect.any(Number), used: expect.any(Number) },
      },
    });
  });

  test('the OpenTelemetry variant exports its spans to the loopback sink; the one without an SDK exports nothing', async () => {
    const w = workloadById('modern-call');
    for (const id of ['mcpware-node-otel', 'mcpware-node-otel-nosdk'])
      expect((await sendOnce(server(id).port, w)).status).toBe(200);
    // Polled, not timed: the batch leaves after OTEL_BSP_SCHEDULE_DELAY; the sink's answer counts it.
    let otel: { spansExported: number; spansFailed: number } | undefined;
    for (let i = 0; i < 200 && !(otel && otel.spansExported > 0); i++) {
      otel = (await server('mcpware-node-otel').stats()).otel as typeof otel;
      if (!(otel && otel.spansExported > 0)) await new Promise((r) => setTimeout(r, 50));
    }
    expect(otel).toEqual({ spansExported: expect.any(Number), spansFailed: 0 });
    expect(otel!.spansExported).toBeGreaterThan(0);
    expect((await server('mcpware-node-otel-nosdk').stats()).otel).toBeUndefined();
  });

  test('the full stack refuses a request without the API key (its auth is really on)', async () => {
    const w = workloadById('modern-call');
    const { authorization: _drop, ...headers } = w.headers;
    const r = await sendOnce(server('mcpware-node').port, { ...w, headers });
    expect(r.status).toBe(401);
  });
});

describe('the load generator checks every answer', () => {
  test.each(['bare', 'mcpware-node'])('%s under a short load: answers, none failed', async (id) => {
    const r = await runLoad(workloadById('modern-call'), {
      port: server(id).port,
      connections: 4,
      durationS: 1,
    });
    expect(r.total).toBeGreaterThan(0);
    expect({ non2xx: r.non2xx, errors: r.errors, timeouts: r.timeouts, mismatches: r.mismatches }).toEqual({
      non2xx: 0,
      errors: 0,
      timeouts: 0,
      mismatches: 0,
    });
    expect(r.p50).toBeGreaterThan(0);
    expect(r.p99).toBeGreaterThanOrEqual(r.p50);
  });

  /** One second of load on a server answering every request with `status` and `body`. */
  async function loadAgainst(status: number, body: string): Promise<LoadResult> {
    const s = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.statusCode = status;
        res.setHeader('content-type', 'application/json');
        res.end(body);
      });
    });
    await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
    try {
      return await runLoad(workloadById('modern-call'), {
        port: (s.address() as AddressInfo).port,
        connections: 2,
        durationS: 1,
      });
    } finally {
      await new Promise((resolve) => s.close(resolve));
    }
  }

  test.each([
    ['a JSON-RPC error in a 200 body', 200, '{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"x"}}'],
    [
      'a tool error result',
      200,
      '{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"hello from the bench"}],"isError":true}}',
    ],
    ['a result without the echoed text', 200, '{"jsonrpc":"2.0","id":2,"result":{"content":[]}}'],
  ])('%s counts as a mismatch on every answer', async (_name, status, body) => {
    const r = await loadAgainst(status, body);
    expect(r.total).toBeGreaterThan(0);
    expect(r.mismatches).toBe(r.total);
  });

  test('an HTTP error status counts as non-2xx', async () => {
    const r = await loadAgainst(
      500,
      '{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"hello from the bench"}]}}',
    );
    expect(r.total).toBeGreaterThan(0);
    expect(r.non2xx).toBe(r.total);
  });
});

describe('the in-process harness waits for the counter around the counted requests', () => {
  test('says warm, waits, runs the counted requests, says counted, waits, then prints its result', async () => {
    const program = path.join(BUILD, 'bench', 'inproc.js');
    const child = spawn(process.execPath, [program, 'bare', 'legacy-call', '7'], {
      env: { ...process.env, BENCH_INPROC_WARMUP: '5', BENCH_INPROC_HANDSHAKE: '1' },
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    const lines: string[] = [];
    let waiter: (() => void) | undefined;
    let pending = '';
    child.stdout.on('data', (d: Buffer) => {
      pending += d.toString();
      for (let nl = pending.indexOf('\n'); nl >= 0; nl = pending.indexOf('\n')) {
        lines.push(pending.slice(0, nl));
        pending = pending.slice(nl + 1);
        waiter?.();
      }
    });
    /** The next line the program writes, or `undefined` when none comes within `ms`. */
    const nextLine = (ms: number): Promise<string | undefined> =>
      new Promise((resolve) => {
        const settle = (): void => {
          clearTimeout(timer);
          waiter = undefined;
          resolve(lines.shift());
        };
        const timer = setTimeout(settle, ms);
        waiter = settle;
        if (lines.length > 0) settle();
      });
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(await nextLine(20_000)).toBe('warm');
    // Nothing more until the counter answers.
    expect(await nextLine(500)).toBeUndefined();
    child.stdin.write('go\n');
    expect(await nextLine(20_000)).toBe('counted');
    expect(await nextLine(500)).toBeUndefined();
    child.stdin.write('go\n');
    const result = JSON.parse((await nextLine(20_000)) ?? 'null') as Record<string, unknown>;
    expect(result).toMatchObject({ server: 'bare', workload: 'legacy-call', requests: 7, failed: 0 });
    expect(await exited).toBe(0);
  }, 60_000);
});
