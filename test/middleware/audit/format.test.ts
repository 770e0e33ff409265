/**
 * auditJsonFormat(): the audit logger's winston format. Through a real winston File transport, every record is
 * one JSON line with the record's keys in their fixed order (then `level`, `message`), and the same values as
 * winston's own `format.json()` gives for the same requests. An unserializable record (from another caller of
 * the same logger) becomes a line that says so instead of an exception inside the logger.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import winston from 'winston';
import { AUDIT_KEYS, audit, auditJsonFormat } from '../../../middleware/audit/index';
import { classifyRevision } from '../../../middleware/classify-revision/index';
import { parse } from '../../../middleware/parse/index';
import { PLATFORMS, finalHandler, modern, modernHeaders, serve } from '../../support/observe-harness';

const dir = mkdtempSync(join(tmpdir(), 'mcpware-audit-format-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let seq = 0;

function fileLogger(format: winston.Logform.Format) {
  const file = join(dir, `audit-${++seq}.log`);
  const logger = winston.createLogger({
    level: 'info',
    format,
    transports: [new winston.transports.File({ filename: file })],
  });
  const lines = async (n: number): Promise<string[]> => {
    for (let i = 0; i < 400; i++) {
      const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
      const ls = text.split('\n').slice(0, -1);
      if (ls.length >= n) return ls;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`fewer than ${n} lines in ${file}`);
  };
  return { logger, lines };
}

describe.each(PLATFORMS)('auditJsonFormat() on %s', (platform) => {
  test('one JSON line per record, fixed key order, the same values as format.json()', async () => {
    const fast = fileLogger(auditJsonFormat());
    const json = fileLogger(winston.format.json());
    // Both loggers see the very same records: one audit() instance writes to both.
    const both = {
      log(level: string, message: string, meta: Record<string, unknown>) {
        fast.logger.log(level, message, meta);
        json.logger.log(level, message, meta);
      },
    };
    const server = serve(platform, [audit({ logger: both }), parse(), classifyRevision(), finalHandler({})]);
    const body = modern('tools/call', { name: 'lookup', arguments: { who: 'a\u2028b' } });
    await request(server).post('/mcp').set(modernHeaders('tools/call', 'lookup')).send(JSON.stringify(body));
    await request(server).post('/mcp').set('Content-Type', 'text/plain').send('x');
    await request(server).get('/mcp');
    const a = await fast.lines(3);
    const b = await json.lines(3);
    expect(a).toHaveLength(3);
    for (let i = 0; i < 3; i++) {
      const rec = JSON.parse(a[i]!) as Record<string, unknown>;
      expect(Object.keys(rec)).toEqual([...AUDIT_KEYS, 'level', 'message']);
      expect(rec).toEqual(JSON.parse(b[i]!));
      // One line each: a line separator in a value is escaped by JSON.stringify, never a raw break.
      expect(a[i]).not.toMatch(/[\n\r\u2028\u2029]/);
    }
    expect(JSON.parse(a[1]!).status).toBe(415);
  });

  test('an unserializable record becomes a line that says so', async () => {
    const fast = fileLogger(auditJsonFormat());
    const cyclic: Record<string, unknown> = { n: 1n };
    fast.logger.log('info', 'other', cyclic);
    const [line] = await fast.lines(1);
    expect(JSON.parse(line!)).toEqual({
      level: 'info',
      message: 'other',
      error: 'unserializable log record',
    });
  });
});

test('combines with other winston formats', async () => {
  const f = winston.format.combine(winston.format.timestamp(), auditJsonFormat());
  const l = fileLogger(f);
  l.logger.log('info', 'audit', { event: 'audit' });
  const [line] = await l.lines(1);
  expect(JSON.parse(line!)).toEqual({
    event: 'audit',
    level: 'info',
    message: 'audit',
    timestamp: expect.any(String),
  });
});

describe.each(PLATFORMS)('records reach a winston Logger as one info object on %s', (platform) => {
  const VOLATILE = ['time', 'request_id', 'duration_ms'];
  async function linesThrough(
    logger: { log: (...a: never[]) => unknown },
    lines: (n: number) => Promise<string[]>,
  ) {
    const server = serve(platform, [
      audit({ logger: logger as never }),
      parse(),
      classifyRevision(),
      finalHandler({}),
    ]);
    const body = modern('tools/call', { name: 'lookup', arguments: { who: 'x' } });
    await request(server).post('/mcp').set(modernHeaders('tools/call', 'lookup')).send(JSON.stringify(body));
    await request(server).post('/mcp').set('Content-Type', 'text/plain').send('x');
    return (await lines(2)).map((l) => {
      const rec = JSON.parse(l) as Record<string, unknown>;
      for (const k of VOLATILE) rec[k] = '…';
      return { keys: Object.keys(rec), rec };
    });
  }

  test.each([
    ['auditJsonFormat()', () => auditJsonFormat()],
    ['format.json()', () => winston.format.json()],
  ])('the same lines as through log(level, message, meta), with %s', async (_name, format) => {
    const direct = fileLogger(format());
    const wrapped = fileLogger(format());
    // Not a winston Logger to audit(): called with (level, message, meta), as any AuditLogger.
    const plain = {
      log: (l: string, m: string, meta: Record<string, unknown>) => wrapped.logger.log(l, m, meta),
    };
    const spy = jest.spyOn(direct.logger, 'log');
    const a = await linesThrough(direct.logger, direct.lines);
    const b = await linesThrough(plain, wrapped.lines);
    expect(a).toEqual(b);
    // The winston Logger was called with one info object per record.
    expect(spy.mock.calls.map((c) => c.length)).toEqual([1, 1]);
    expect(a[0]!.rec).toEqual(
      expect.objectContaining({ event: 'audit', level: 'info', message: 'mcp call', status: 200 }),
    );
  });

  test("with defaultMeta the record's keys still win, and defaultMeta's other keys are added", async () => {
    const l = fileLogger(auditJsonFormat());
    l.logger.defaultMeta = { event: 'overridden?', service: 'svc' };
    const [first] = await linesThrough(l.logger, l.lines);
    expect(first!.rec.event).toBe('audit');
    expect(first!.rec.service).toBe('svc');
  });
});
