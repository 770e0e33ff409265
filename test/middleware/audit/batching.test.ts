/**
 * audit() hands records to a stream logger in batches, one per turn of the event loop: the logger is corked at a
 * turn's first record and uncorked on setImmediate, so its transports get the turn's records together. Checked
 * with real winston: corked right after a record, uncorked (and the record delivered) one turn later, and no
 * record left behind when many requests finish in the same turn.
 */
import type http from 'node:http';
import winston from 'winston';
import type TransportStream from 'winston-transport';
import { audit } from '../../../middleware/audit/index';
import { parse } from '../../../middleware/parse/index';
import type { Middleware } from '../../../core/types';
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
const Transport = (winston as unknown as { Transport: typeof TransportStream }).Transport;

/** A real winston transport that keeps what it receives and when (which batch) it received it. */
class Recorder extends Transport {
  readonly records: { rpc_id: string; batch: number }[] = [];
  batch = 0;
  override log(info: Record<string | symbol, unknown>, callback: () => void): void {
    const r = JSON.parse(info[MESSAGE] as string) as { rpc_id: string };
    this.records.push({ rpc_id: r.rpc_id, batch: this.batch });
    callback();
  }
}

/** How many cork() calls are pending on a winston Logger (readable-stream 3 has no `writableCorked`). */
const corkedOf = (logger: winston.Logger): number =>
  (logger as unknown as { _writableState: { corked: number } })._writableState.corked;

const fixtures = { tools: { lookup: () => ({ content: [{ type: 'text', text: 'ok' }] }) } };

async function post(port: number, id: number): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${port}/mcp`, {
    method: 'POST',
    headers: modernHeaders('tools/call', 'lookup'),
    body: JSON.stringify(modern('tools/call', { name: 'lookup', arguments: {} }, id)),
  });
  await res.arrayBuffer();
  return res.status;
}

describe.each(PLATFORMS)('audit() batches records per event-loop turn on %s', (platform: Platform) => {
  test('the logger is corked right after a record and uncorked one turn later, with the record delivered', async () => {
    const transport = new Recorder();
    const logger = winston.createLogger({ format: winston.format.json(), transports: [transport] });
    const seen: { corked: number; delivered: number }[] = [];
    const mw = audit({ logger });
    // Registered after audit's own listener (audit runs first), so it sees the state audit left.
    const probe: Middleware = (_req, res, next) => {
      res.on('finish', () => {
        seen.push({ corked: corkedOf(logger), delivered: transport.records.length });
        setImmediate(() => seen.push({ corked: corkedOf(logger), delivered: transport.records.length }));
      });
      next();
    };
    const server = serve(platform, [mw, probe, parse(), finalHandler(fixtures)]);
    const port = await listenLoopback(server);
    try {
      expect(await post(port, 1)).toBe(200);
      for (let i = 0; i < 200 && seen.length < 2; i++) await new Promise((r) => setTimeout(r, 5));
      expect(seen[0]).toEqual({ corked: 1, delivered: 0 });
      expect(seen[1]).toEqual({ corked: 0, delivered: 1 });
      expect(transport.records.map((r) => r.rpc_id)).toEqual(['1']);
    } finally {
      server.close();
    }
  });

  test('fifty concurrent requests: every record is delivered once, none left corked', async () => {
    const transport = new Recorder();
    const logger = winston.createLogger({ format: winston.format.json(), transports: [transport] });
    const server = serve(platform, [audit({ logger }), parse(), finalHandler(fixtures)]);
    const port = await listenLoopback(server);
    try {
      const ids = Array.from({ length: 50 }, (_, i) => i + 1);
      const statuses = await Promise.all(ids.map((id) => post(port, id)));
      expect(statuses.every((s) => s === 200)).toBe(true);
      for (let i = 0; i < 200 && transport.records.length < 50; i++)
        await new Promise((r) => setTimeout(r, 5));
      expect(transport.records.map((r) => Number(r.rpc_id)).sort((a, b) => a - b)).toEqual(ids);
      expect(corkedOf(logger)).toBe(0);
    } finally {
      server.close();
    }
  });

  test('a logger that is not a stream gets every record at once', async () => {
    const got: unknown[] = [];
    const logger = { log: (_l: string, _m: string, meta: Record<string, unknown>) => void got.push(meta) };
    const seen: number[] = [];
    const probe = (_req: http.IncomingMessage, res: http.ServerResponse, next: () => void): void => {
      res.on('finish', () => seen.push(got.length));
      next();
    };
    const server = serve(platform, [audit({ logger }), probe, parse(), finalHandler(fixtures)]);
    const port = await listenLoopback(server);
    try {
      expect(await post(port, 7)).toBe(200);
      for (let i = 0; i < 200 && seen.length < 1; i++) await new Promise((r) => setTimeout(r, 5));
      expect(seen).toEqual([1]);
    } finally {
      server.close();
    }
  });
});
