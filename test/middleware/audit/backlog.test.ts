/**
 * audit()'s backlog bound (`maxBacklog`): with real winston, a logger whose transport stops taking records
 * queues them in the Logger stream; past `maxBacklog` queued records audit drops new ones (counted in
 * `stats()`, reported once a second to `onError`) and the answers are not affected. Once the transport drains,
 * records are written again.
 */
import http, { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import request from 'supertest';
import winston from 'winston';
import type TransportStream from 'winston-transport';
import { audit } from '../../../middleware/audit/index';
import { parse } from '../../../middleware/parse/index';
import {
  type Platform,
  PLATFORMS,
  finalHandler,
  modern,
  modernHeaders,
  listenLoopback,
  serve,
} from '../../support/observe-harness';

const MESSAGE = Symbol.for('message');
// winston exports its Transport base class as `Transport` (its typings call it `transport`).
const Transport = (winston as unknown as { Transport: typeof TransportStream }).Transport;

/**
 * A real winston transport that holds every record (and so the Logger's pipe) until released: what a
 * destination that stopped accepting writes looks like to winston.
 */
class HeldTransport extends Transport {
  readonly written: Record<string, unknown>[] = [];
  private held: (() => void)[] = [];
  private holding = true;

  override log(info: Record<string | symbol, unknown>, callback: () => void): void {
    const done = (): void => {
      this.written.push(JSON.parse(info[MESSAGE] as string) as Record<string, unknown>);
      callback();
    };
    if (this.holding) this.held.push(done);
    else done();
  }

  release(): void {
    this.holding = false;
    for (const done of this.held.splice(0)) done();
  }
}

const fixtures = { tools: { lookup: () => ({ content: [{ type: 'text', text: 'ok' }] }) } };

async function until(what: string, cond: () => boolean): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (cond()) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`timed out waiting for ${what}`);
}

function call(base: string | http.Server, id: number) {
  return request(base)
    .post('/mcp')
    .set(modernHeaders('tools/call', 'lookup'))
    .send(modern('tools/call', { name: 'lookup', arguments: { n: id } }, id));
}

describe.each(PLATFORMS)(
  'audit() maxBacklog on %s with a winston transport that stops',
  (platform: Platform) => {
    test('past maxBacklog queued records new ones are dropped, counted and reported once; answers are unaffected; after the drain records are written again', async () => {
      const transport = new HeldTransport();
      const logger = winston.createLogger({ format: winston.format.json(), transports: [transport] });
      const errors: unknown[] = [];
      const maxBacklog = 5;
      const mw = audit({ logger, maxBacklog, onError: (e) => errors.push(e) });
      const server = serve(platform, [mw, parse(), finalHandler(fixtures)]);
      const base = `http://127.0.0.1:${await listenLoopback(server)}`;
      try {
        // The transport's buffer and the Logger's readable buffer fill first (then the pipe stops), then
        // `maxBacklog` records queue in the Logger's writable side; every later record is dropped.
        const n = transport.writableHighWaterMark + logger.readableHighWaterMark + maxBacklog + 25;
        const started = Date.now();
        for (let i = 1; i <= n; i++) expect((await call(base, i)).status).toBe(200);
        const elapsed = Date.now() - started;
        const downstream = (): number => logger.readableLength + transport.writableLength;
        await until('every record queued or dropped', () => {
          return logger.writableLength + downstream() + mw.stats().dropped === n;
        });

        expect(logger.writableLength).toBe(maxBacklog);
        const fit = downstream() + maxBacklog;
        expect(fit).toBeGreaterThanOrEqual(transport.writableHighWaterMark + logger.readableHighWaterMark);
        expect(mw.stats()).toEqual({ dropped: n - fit });
        expect(transport.written).toHaveLength(0);
        // At most once a second while dropping (all of it normally takes well under a second).
        if (elapsed < 1000) expect(errors).toHaveLength(1);
        else expect(errors.length).toBeLessThanOrEqual(1 + Math.ceil(elapsed / 1000));
        const err = errors[0] as Error & { code?: unknown };
        expect(err).toBeInstanceOf(Error);
        expect(err.code).toBe('AUDIT_BACKLOG');
        expect(err.message).toMatch(/dropped/);
        expect(err.message).toContain(`${maxBacklog} or more records behind`);

        // The destination takes records again: everything queued is written, in order, and new records follow.
        transport.release();
        await until('the queue drained', () => transport.written.length === fit);
        expect(transport.written.map((r) => r.rpc_id)).toEqual(
          Array.from({ length: fit }, (_, i) => String(i + 1)),
        );
        expect(logger.writableLength).toBe(0);
        expect((await call(base, 1000)).status).toBe(200);
        await until('the new record', () => transport.written.length === fit + 1);
        expect(transport.written[fit]).toMatchObject({ rpc_id: '1000', status: 200, outcome: 'ok' });
        expect(mw.stats()).toEqual({ dropped: n - fit });
      } finally {
        server.closeAllConnections();
        await new Promise((r) => server.close(r));
      }
    });
  },
);

describe('audit() maxBacklog', () => {
  test('Infinity never drops, however far behind the logger is', async () => {
    const transport = new HeldTransport();
    const logger = winston.createLogger({ format: winston.format.json(), transports: [transport] });
    const errors: unknown[] = [];
    const mw = audit({ logger, maxBacklog: Infinity, onError: (e) => errors.push(e) });
    const server = serve('node:http', [mw, parse(), finalHandler(fixtures)]);
    const base = `http://127.0.0.1:${await listenLoopback(server)}`;
    try {
      const n = transport.writableHighWaterMark + logger.readableHighWaterMark + 10;
      for (let i = 1; i <= n; i++) expect((await call(base, i)).status).toBe(200);
      await until('every record queued', () => {
        return logger.writableLength + logger.readableLength + transport.writableLength === n;
      });
      expect(logger.writableLength).toBeGreaterThanOrEqual(9);
      expect(mw.stats()).toEqual({ dropped: 0 });
      transport.release();
      await until('the queue drained', () => transport.written.length === n);
      expect(errors).toEqual([]);
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });

  test('a logger that is not a stream is never bounded', async () => {
    const logged: unknown[] = [];
    const mw = audit({ logger: { log: (_l, _m, meta) => logged.push(meta) }, maxBacklog: 1 });
    const server = serve('node:http', [mw, parse(), finalHandler(fixtures)]);
    for (let i = 1; i <= 3; i++) expect((await call(server, i)).status).toBe(200);
    expect(logged).toHaveLength(3);
    expect(mw.stats()).toEqual({ dropped: 0 });
  });

  test('while dropping, onError hears about it at most once a second', () => {
    const transport = new HeldTransport();
    const logger = winston.createLogger({ format: winston.format.json(), transports: [transport] });
    const errors: unknown[] = [];
    const mw = audit({ logger, maxBacklog: 1, onError: (e) => errors.push(e) });
    let clock = 1_000_000;
    const now = jest.spyOn(Date, 'now').mockImplementation(() => clock);
    try {
      // One request finishing, driven by hand (real node:http objects, no socket traffic).
      const finishOne = (): void => {
        const req = new IncomingMessage(new Socket());
        req.method = 'POST';
        req.url = '/mcp';
        const res = new ServerResponse(req);
        mw(req, res, () => {});
        res.emit('finish');
      };
      // Fill the transport, the Logger's buffers and its queue of one until the first record is dropped.
      for (let i = 0; i < 1000 && mw.stats().dropped === 0; i++) finishOne();
      expect(mw.stats().dropped).toBe(1);
      expect(logger.writableLength).toBe(1);
      const at = (ms: number): number => {
        clock = 1_000_000 + ms;
        finishOne();
        return errors.length;
      };
      expect(errors).toHaveLength(1);
      expect([at(500), at(999), at(1000), at(1500), at(1999), at(2000), at(9000)]).toEqual([
        1, 1, 2, 2, 2, 3, 4,
      ]);
      expect(mw.stats().dropped).toBe(8);
      for (const e of errors) expect((e as { code?: unknown }).code).toBe('AUDIT_BACKLOG');
    } finally {
      now.mockRestore();
    }
  });

  test.each([
    [
      0,
      /option "maxBacklog" must be a whole number >= 1, or Infinity \(never drop\), got 0 \(see docs\/middleware\/audit\.md#options\)$/,
    ],
    [-1, /option "maxBacklog" must be .*, got -1 \(see docs\/middleware\/audit\.md#options\)$/],
    [NaN, /option "maxBacklog" must be .*, got NaN \(see docs\/middleware\/audit\.md#options\)$/],
    [1.5, /option "maxBacklog" must be .*, got 1\.5 \(see docs\/middleware\/audit\.md#options\)$/],
    [-Infinity, /option "maxBacklog" must be .*, got -Infinity \(see docs\/middleware\/audit\.md#options\)$/],
    ['10', /option "maxBacklog" must be .*, got "10" \(see docs\/middleware\/audit\.md#options\)$/],
  ])('maxBacklog %p is refused at construction', (value, message) => {
    expect(() => audit({ logger: { log() {} }, maxBacklog: value as never })).toThrow(TypeError);
    expect(() => audit({ logger: { log() {} }, maxBacklog: value as never })).toThrow(message);
  });

  test.each([1, 10_000, Infinity, undefined])('maxBacklog %p is accepted', (value) => {
    const mw = audit({ logger: { log() {} }, ...(value !== undefined ? { maxBacklog: value } : {}) });
    expect(typeof mw).toBe('function');
    expect(mw.stats()).toEqual({ dropped: 0 });
  });
});
