/**
 * The body reader on its own (core/body.ts), over real HTTP: one read shared by every waiter, handed on in the
 * turn of the stream's `end`, the limit as declared and as the body arrives, a content coding decoded under the
 * limit, and the bytes let go of once released.
 */
import http from 'node:http';
import net from 'node:net';
import zlib from 'node:zlib';
import type { Refusal } from '../../lib/errors';
import { bodyStarted, parseByteSize, readBody, releaseBody, stateIfAny } from '../../core/body';

type Outcome = Buffer | Refusal;

/** A server whose handler runs `onRequest` for each request (`done` answers it) while `send` talks to it. */
async function withServer(
  onRequest: (req: http.IncomingMessage, done: () => void) => void,
  send: (port: number) => Promise<void>,
): Promise<void> {
  const server = http.createServer((req, res) => onRequest(req, () => res.end('ok')));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    await send((server.address() as net.AddressInfo).port);
  } finally {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  }
}

function post(port: number, body: Buffer | string, headers: http.OutgoingHttpHeaders = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const rq = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/', headers }, (r) => {
      r.resume();
      r.on('end', () => resolve(r.statusCode!));
    });
    rq.on('error', reject);
    rq.end(body);
  });
}

const refusalOf = (v: Outcome | undefined): string | undefined =>
  v === undefined || Buffer.isBuffer(v) ? undefined : v.reason;

describe('readBody()', () => {
  test('one read for every waiter, handed on in the turn of the stream end, before any microtask', async () => {
    const seen: string[] = [];
    let dataListeners = 0;
    await withServer(
      (req, done) => {
        req.on('end', () => queueMicrotask(() => seen.push('microtask')));
        readBody(req, 1024, (raw, r) => {
          seen.push(`first:${(raw as Buffer).toString()}:${r === req}`);
        });
        readBody(req, 1024, (raw) => seen.push(`second:${(raw as Buffer).toString()}`));
        dataListeners = req.listenerCount('data');
        req.on('end', () =>
          // Once read, a late waiter is answered at once from the recorded bytes.
          readBody(req, 1024, (raw) => {
            seen.push(`late:${(raw as Buffer).toString()}`);
            done();
          }),
        );
      },
      async (port) => {
        expect(await post(port, '{"a":1}', { 'Content-Type': 'application/json' })).toBe(200);
      },
    );
    expect(dataListeners).toBe(1);
    expect(seen).toEqual(['first:{"a":1}:true', 'second:{"a":1}', 'late:{"a":1}', 'microtask']);
  });

  test('a declared Content-Length over the limit is refused before anything is read', async () => {
    let out: Outcome | undefined;
    let listeners = -1;
    await withServer(
      (req, done) => {
        readBody(req, 8, (raw) => (out = raw));
        listeners = req.listenerCount('data');
        done();
      },
      async (port) => {
        await post(port, 'x'.repeat(9));
      },
    );
    expect(refusalOf(out)).toBe('body_too_large');
    expect(listeners).toBe(0);
  });

  test('a chunked body is refused once its running size passes the limit', async () => {
    let out: Outcome | undefined;
    await withServer(
      (req, done) => readBody(req, 64, (raw) => ((out = raw), done())),
      (port) =>
        new Promise<void>((resolve, reject) => {
          const rq = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/' }, (r) => {
            r.resume();
            resolve();
          });
          rq.on('error', reject);
          rq.write('x'.repeat(40));
          setImmediate(() => rq.end('y'.repeat(40)));
        }),
    );
    expect(refusalOf(out)).toBe('body_too_large');
    expect((out as Refusal).message).toBe('Request body exceeds 64 bytes');
  });

  test('a gzip body is decoded under the limit; one that inflates past it is refused', async () => {
    const outs: Outcome[] = [];
    await withServer(
      (req, done) => readBody(req, 100, (raw) => (outs.push(raw), done())),
      async (port) => {
        await post(port, zlib.gzipSync('{"ok":true}'), { 'Content-Encoding': 'gzip' });
        await post(port, zlib.gzipSync('x'.repeat(10_000)), { 'Content-Encoding': 'gzip' });
        await post(port, 'not gzip', { 'Content-Encoding': 'gzip' });
        await post(port, '{}', { 'Content-Encoding': 'zstd' });
      },
    );
    expect((outs[0] as Buffer).toString()).toBe('{"ok":true}');
    expect(outs.slice(1).map(refusalOf)).toEqual(['body_too_large', 'parse_error', 'unsupported_encoding']);
  });

  test('a body another consumer drained is body_unreadable', async () => {
    let out: Outcome | undefined;
    await withServer(
      (req, done) => {
        req.resume();
        req.on('end', () => readBody(req, 1024, (raw) => ((out = raw), done())));
      },
      async (port) => {
        await post(port, '{}');
      },
    );
    expect(refusalOf(out)).toBe('body_unreadable');
  });

  test('released: the bytes are let go of, and a late waiter gets an empty body', async () => {
    let late: Outcome | undefined;
    const started: boolean[] = [];
    await withServer(
      (req, done) => {
        started.push(stateIfAny(req) !== undefined && bodyStarted(stateIfAny(req)!));
        readBody(req, 1024, () => {
          releaseBody(stateIfAny(req)!);
          readBody(req, 1024, (raw) => (late = raw));
          started.push(bodyStarted(stateIfAny(req)!));
          done();
        });
        started.push(bodyStarted(stateIfAny(req)!));
      },
      async (port) => {
        await post(port, '{"big":"body"}');
      },
    );
    expect(started).toEqual([false, true, true]);
    expect(Buffer.isBuffer(late) && late.length).toBe(0);
  });
});

describe('parseByteSize()', () => {
  test.each([
    [1, 1],
    ['512kb', 512 * 1024],
    ['4MB', 4 * 1024 * 1024],
    ['1.5 kb', 1536],
    [0, undefined],
    [-1, undefined],
    [1.5, undefined],
    ['0b', undefined],
    ['4 tb', undefined],
    ['toString', undefined],
  ])('%j → %j', (v, n) => {
    expect(parseByteSize(v)).toBe(n);
  });
});
