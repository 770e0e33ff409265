/**
 * The in-process harness (bench/inproc.ts) behind `npm run bench -- --instructions`: it must load a server the
 * way a server with IN_FLIGHT connections is loaded, at most one request per connection per turn of the event
 * loop. With longer turns the audit logger (corked for a turn) would hold more records than a real server's
 * turn, and the counts would include old-generation collections no real server does. No timing is asserted.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { drive, IN_FLIGHT } from '../inproc';
import { workloadById } from '../workloads';

const w = workloadById('modern-call');
const id = JSON.stringify((JSON.parse(w.body) as { id: unknown }).id);

/** Answers after reading the whole body, as every benchmark server does. */
function echoId(req: IncomingMessage, res: ServerResponse): void {
  req.on('data', () => {});
  req.on('end', () => {
    res.statusCode = 200;
    res.end(`{"jsonrpc":"2.0","id":${id},"result":{}}`);
  });
}

/** The most requests the handler saw between two consecutive check phases of the event loop. */
async function mostPerTurn(requests: number): Promise<{ most: number; failed: number; calls: number }> {
  let inTurn = 0;
  let most = 0;
  let calls = 0;
  let done = false;
  const tick = (): void => {
    inTurn = 0;
    if (!done) setImmediate(tick);
  };
  setImmediate(tick);
  const r = await drive(
    (req, res) => {
      calls++;
      most = Math.max(most, ++inTurn);
      echoId(req, res);
    },
    w,
    requests,
  );
  done = true;
  return { most, failed: r.failed, calls };
}

describe('bench/inproc drive()', () => {
  it('runs every request once and at most one per connection per event-loop turn', async () => {
    const { most, failed, calls } = await mostPerTurn(2000);
    expect(calls).toBe(2000);
    expect(failed).toBe(0);
    expect(most).toBeGreaterThan(1);
    expect(most).toBeLessThanOrEqual(IN_FLIGHT);
  });

  it('counts an answer without the request id, or not a 200, as failed', async () => {
    const r = await drive(
      (req, res) => {
        req.resume();
        req.on('end', () => {
          res.statusCode = 500;
          res.end(`{"jsonrpc":"2.0","id":${id},"error":{"code":-32603,"message":"x"}}`);
        });
      },
      w,
      40,
    );
    expect(r.failed).toBe(40);
    expect(r.firstFailure).toContain('500');
    const wrongId = await drive(
      (req, res) => {
        req.resume();
        req.on('end', () => res.end('{"jsonrpc":"2.0","id":"other","result":{}}'));
      },
      w,
      3,
    );
    expect(wrongId.failed).toBe(3);
  });

  it('tells onFinished after each answer how many have finished', async () => {
    const seen: number[] = [];
    const early: number[] = [];
    let answered = 0;
    await drive(
      (req, res) => {
        res.on('finish', () => answered++);
        echoId(req, res);
      },
      w,
      50,
      (finished) => {
        seen.push(finished);
        if (finished > answered) early.push(finished);
      },
    );
    expect(seen).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    // No call runs ahead of the answers sent.
    expect(early).toEqual([]);
  });

  it('returns at once for no requests (BENCH_INPROC_WARMUP=0)', async () => {
    let calls = 0;
    await expect(drive(() => calls++, w, 0)).resolves.toEqual({ failed: 0, firstFailure: '' });
    expect(calls).toBe(0);
  });
});
