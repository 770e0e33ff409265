/**
 * The member scan's working memory kept by the caller (docs/performance.md#scan-memory): the parse step hands
 * every scan the same array. Scans in any order over one memory answer as scans that each make their own; what
 * the memory holds between scans is positions only (numbers, never the request's text) and stays bounded; over
 * HTTP, a message read after a large one or a refused one is judged on its own.
 */
import http from 'node:http';
import fc from 'fast-check';
import { scanMembers } from '../../lib/jsonrpc-scan';
import { parse } from '../../middleware/parse/index';
import { close, listen } from '../support/dispatch-harness';
import { makeServer } from '../support/servers';

/** Member names that exercise the folding roles, escapes, the forbidden names and the case folds. */
const NAMES = [
  'params',
  'Params',
  'par\\u0061ms',
  '_meta',
  '_META',
  '_m\\u0065ta',
  'constructor',
  'constructo\\u0072',
  '__proto__',
  '__pr\\u006fto__',
  'a',
  'A',
  'k',
  '\u212a',
  's',
  '\u017f',
  'S',
  '\u0130',
  'i\u0307',
  'id',
  'ID',
  'x\\"y',
  'é',
  'É',
  'jsonrpc',
  'method',
];
const name = fc.oneof(
  fc.constantFrom(...NAMES),
  fc.string({ maxLength: 4 }).map((s) => JSON.stringify(s).slice(1, -1)),
);

/** JSON text with objects of up to 20 members (past the scan's Set threshold), duplicates likely. */
const value: fc.Memo<string> = fc.memo((n) =>
  n <= 1
    ? fc.constantFrom('1', '"v"', 'null', '"a\\\\b"', '{}', '[]')
    : fc.oneof(
        fc.constantFrom('1', '"v"'),
        fc
          .array(fc.tuple(name, value(n - 1)), { maxLength: 20 })
          .map((ms) => `{${ms.map(([k, v]) => `"${k}":${v}`).join(',')}}`),
        fc.array(value(n - 1), { maxLength: 4 }).map((vs) => `[${vs.join(',')}]`),
      ),
);
const json = value(5).filter((text) => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
});

describe('scanMembers with a working memory kept between scans', () => {
  test('a run of scans over one memory answers as scans with a memory each', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(json, fc.integer({ min: 1, max: 6 })), { maxLength: 8 }), (scans) => {
        const memory: number[] = [];
        for (const [text, depth] of scans) {
          expect(scanMembers(text, depth, memory)).toEqual(scanMembers(text, depth));
          expect(memory.every((slot) => typeof slot === 'number')).toBe(true);
        }
      }),
      { numRuns: 2000 },
    );
  });

  test('past its bound the memory is emptied when the scan ends; the next scan starts afresh', () => {
    const memory: number[] = [];
    // 60 levels of 16 members and a child each: far more positions than the memory keeps between scans.
    const siblings = Array.from({ length: 16 }, (_, i) => `"a${i}":1`).join(',');
    const deep = `${`{${siblings},"x":`.repeat(60)}1${'}'.repeat(60)}`;
    expect(scanMembers(deep, 64, memory)).toBeUndefined();
    expect(memory).toHaveLength(0);
    expect(scanMembers(`{"a":1,"b":{"a":2},"A":3,"a":4}`, 64, memory)).toMatchObject({
      reason: 'duplicate_member',
    });
    expect(memory.length).toBeGreaterThan(0);
    expect(memory.length).toBeLessThanOrEqual(1024);
    expect(scanMembers(deep.replace('"a3":1', '"a3":1,"a3":2'), 64, memory)).toMatchObject({
      reason: 'duplicate_member',
    });
  });
});

function post(base: string, body: string): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${base}/mcp`,
      { method: 'POST', headers: { 'Content-Type': 'application/json' } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () =>
          resolve({ status: res.statusCode!, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('parse() over HTTP: each message is judged on its own', () => {
  let server: http.Server;
  let base: string;
  beforeAll(async () => {
    server = makeServer('node:http', [parse()]);
    base = await listen(server);
  });
  afterAll(() => close(server));

  const small = (params: string): string =>
    `{"jsonrpc":"2.0","id":7,"method":"tools/list","params":${params}}`;
  const many = Array.from({ length: 40 }, (_, i) => `"p${i}":{"q${i}":[{"r":1}]}`).join(',');

  test.each([
    ['a large message, then a small one', [small(`{${many}}`), small('{"cursor":"c"}')]],
    [
      'a refused duplicate, then a message with the same names once',
      [small('{"a":1,"a":2}'), small('{"a":1}')],
    ],
    ['a refused nesting, then a flat message', [small(`${'['.repeat(70)}${']'.repeat(70)}`), small('{}')]],
  ])('%s: the second passes', async (_, [first, second]) => {
    await post(base, first!);
    const res = await post(base, second!);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ passed: true, method: 'tools/list', id: 7 });
  });

  test('a small message with a duplicate after a large one is refused', async () => {
    expect((await post(base, small(`{${many}}`))).status).toBe(200);
    const res = await post(base, small('{"cursor":"a","Cursor":"b"}'));
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ jsonrpc: '2.0', id: 7, error: { code: -32600 } });
  });
});
