/**
 * audit()'s counting of the answer's bytes: write() and end() with strings in several encodings, buffers,
 * callbacks in every position, and the caller's arguments passed through untouched. Real winston logger.
 */
import { Writable } from 'node:stream';
import request from 'supertest';
import winston from 'winston';
import { audit } from '../../../middleware/audit/index';
import type { Middleware } from '../../../core/types';
import { type Platform, PLATFORMS, serve } from '../../support/observe-harness';

function memoryLogger(): { logger: winston.Logger; records: Record<string, unknown>[] } {
  const records: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      records.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
      cb();
    },
  });
  const logger = winston.createLogger({
    format: winston.format.json(),
    transports: [new winston.transports.Stream({ stream: sink })],
  });
  return { logger, records };
}

async function until(what: string, cond: () => boolean): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (cond()) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe.each(PLATFORMS)('audit() bytes_out on %s', (platform: Platform) => {
  test('write() and end() in every form are counted exactly and reach the response unchanged', async () => {
    const { logger, records } = memoryLogger();
    const callbacks: string[] = [];
    const answer: Middleware = (_req, res) => {
      res.statusCode = 200;
      res.setHeader('Content-Type', 'text/plain; charset=utf-8');
      expect(res.write('héllo')).toBe(true); // 6 bytes in UTF-8
      res.write('20776f726c64', 'hex'); // " world": 6 bytes
      res.write(Buffer.from(' and'), () => callbacks.push('write')); // 4
      res.write(new Uint8Array([0x20, 0x6d]), 'utf8', () => callbacks.push('write enc')); // " m": 2
      res.write('\u00e9', 'latin1'); // 1 byte
      const ret = res.end('ore', 'utf8', () => callbacks.push('end')); // 3
      expect(ret).toBe(res);
    };
    const server = serve(platform, [audit({ logger }), answer]);
    const res = await request(server)
      .post('/mcp')
      .send('{}')
      .buffer(true)
      .parse((r, cb) => {
        const chunks: Buffer[] = [];
        r.on('data', (c: Buffer) => chunks.push(c));
        r.on('end', () => cb(null, Buffer.concat(chunks)));
      });
    expect(res.status).toBe(200);
    const expected = Buffer.concat([
      Buffer.from('héllo world and m', 'utf8'),
      Buffer.from([0xe9]),
      Buffer.from('ore'),
    ]);
    expect(res.body as Buffer).toEqual(expected);
    await until('the record', () => records.length === 1);
    expect(records[0]).toMatchObject({ status: 200, outcome: 'ok', bytes_out: expected.length });
    expect(expected.length).toBe(6 + 6 + 4 + 2 + 1 + 3);
    await until('the callbacks', () => callbacks.length === 3);
    expect(callbacks).toEqual(['write', 'write enc', 'end']);
  });

  test('end(callback) and end() count nothing more; a chain running audit twice records once', async () => {
    const { logger, records } = memoryLogger();
    const mw = audit({ logger });
    let ended = false;
    const answer: Middleware = (_req, res) => {
      res.statusCode = 202;
      res.write('abc');
      res.end(() => {
        ended = true;
      });
    };
    const server = serve(platform, [mw, mw, answer]);
    const res = await request(server).post('/mcp').send('{}');
    expect(res.status).toBe(202);
    expect(res.text).toBe('abc');
    await until('the record', () => records.length === 1);
    await new Promise((r) => setTimeout(r, 20));
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ status: 202, bytes_out: 3 });
    expect(ended).toBe(true);

    const empty: Middleware = (_req, res) => {
      res.statusCode = 204;
      res.end();
    };
    const server2 = serve(platform, [mw, empty]);
    expect((await request(server2).post('/mcp').send('{}')).status).toBe(204);
    await until('the second record', () => records.length === 2);
    expect(records[1]).toMatchObject({ status: 204, bytes_out: 0 });
  });
});
