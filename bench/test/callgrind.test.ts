/**
 * bench/callgrind.ts: reading callgrind_annotate's output and V8's perf map into instructions per request by
 * function (bench/functions.ts). Fixtures are trimmed from real outputs of callgrind 3.19 and node 20.
 */
import {
  callgrindPid,
  difference,
  jitName,
  nameJit,
  parseAnnotated,
  parsePerfMap,
  perRequest,
} from '../callgrind';

const ANNOTATED = `--------------------------------------------------------------------------------
Profile data file 'cg.8000' (creator: callgrind-3.19.0)
--------------------------------------------------------------------------------
Profiled target:  node --hash-seed=1 bench/inproc.js mcpware-node modern-call 8000 (PID 20633, part 1)
Events recorded:  Ir
--------------------------------------------------------------------------------
Ir
--------------------------------------------------------------------------------
6,615,610,115 (100.0%)  PROGRAM TOTALS

--------------------------------------------------------------------------------
Ir                    file:function
--------------------------------------------------------------------------------
200,363,200 ( 3.03%)  ???:v8::internal::JsonStringifier::SerializeString(v8::internal::Handle<v8::internal::String>) [/usr/bin/node]
 90,657,404 ( 1.37%)  ???:0x000000000d147740 [???]
 61,439,094 ( 0.93%)  ./malloc/./malloc/malloc.c:_int_free [/usr/lib/x86_64-linux-gnu/libc.so.6]
     12,000 ( 0.00%)  ???:0x000000000d147800 [???]
        500 ( 0.00%)  ???:0x0000000000000010 [???]
`;

describe('parseAnnotated', () => {
  it('reads each function with its count, the object file dropped, and the total', () => {
    const m = parseAnnotated(ANNOTATED);
    expect(m.get('PROGRAM TOTALS')).toBe(6_615_610_115);
    expect(
      m.get('???:v8::internal::JsonStringifier::SerializeString(v8::internal::Handle<v8::internal::String>)'),
    ).toBe(200_363_200);
    expect(m.get('./malloc/./malloc/malloc.c:_int_free')).toBe(61_439_094);
    expect(m.get('???:0x000000000d147740')).toBe(90_657_404);
    expect(m.size).toBe(6);
  });

  it('adds up a name that appears twice and ignores lines that are not counts', () => {
    const m = parseAnnotated('  10 ( 1.00%)  a:f [x]\n  5 ( 0.50%)  a:f [y]\nIr file:function\n\n');
    expect([...m]).toEqual([['a:f', 15]]);
  });
});

describe('callgrindPid', () => {
  it("reads the profile's pid line", () => {
    expect(
      callgrindPid('# callgrind format\nversion: 1\ncreator: callgrind-3.19.0\npid: 20633\ncmd: node\n'),
    ).toBe(20633);
    expect(callgrindPid('version: 1\n')).toBeUndefined();
  });
});

const MAP = `d147740 b0 JS:*scanText /work/main/lib/jsonrpc.js:195:18
d100000 40 Builtin:ArgumentsAdaptorTrampoline
d200000 10 JS:*_write /work/main/node_modules/.cache/build/lib/x.js:1:2
d147800 20 RegExp:^[a-z]+$
garbage line
`;

describe('parsePerfMap and jitName', () => {
  const map = parsePerfMap(MAP, '/work/main/node_modules/.cache/build', '/work/main');

  it('sorts by address and shortens paths under the first root that holds them', () => {
    expect(map.map((e) => e.name)).toEqual([
      'Builtin:ArgumentsAdaptorTrampoline',
      'JS:*scanText lib/jsonrpc.js:195:18',
      'RegExp:^[a-z]+$',
      'JS:*_write lib/x.js:1:2',
    ]);
    expect(map[1]).toMatchObject({ start: 0xd147740, size: 0xb0 });
  });

  it('names an address inside an entry, and nothing at its end or between entries', () => {
    expect(jitName(map, 0xd147740)).toBe('JS:*scanText lib/jsonrpc.js:195:18');
    expect(jitName(map, 0xd147740 + 0xaf)).toBe('JS:*scanText lib/jsonrpc.js:195:18');
    expect(jitName(map, 0xd147740 + 0xb0)).toBeUndefined();
    expect(jitName(map, 0xd147800 + 0x1f)).toBe('RegExp:^[a-z]+$');
    expect(jitName(map, 0xd100000 - 1)).toBeUndefined();
    expect(jitName([], 0xd147740)).toBeUndefined();
  });

  it('renames the counts of JIT addresses, keeps what it cannot name', () => {
    const m = nameJit(parseAnnotated(ANNOTATED), map);
    expect(m.get('JIT JS:*scanText lib/jsonrpc.js:195:18')).toBe(90_657_404);
    expect(m.get('JIT RegExp:^[a-z]+$')).toBe(12_000);
    expect(m.get('???:0x0000000000000010')).toBe(500);
    expect(m.has('???:0x000000000d147740')).toBe(false);
  });
});

describe('perRequest and difference', () => {
  const counts = new Map([
    ['PROGRAM TOTALS', 600_000],
    ['g', 60_000],
    ['f', 400_000],
    ['h', 60_000],
  ]);

  it("divides one run's counts by the requests it counted, largest first, ties by name", () => {
    expect(perRequest(counts, 100)).toEqual([
      { name: 'PROGRAM TOTALS', perRequest: 6000 },
      { name: 'f', perRequest: 4000 },
      { name: 'g', perRequest: 600 },
      { name: 'h', perRequest: 600 },
    ]);
    expect(() => perRequest(counts, 0)).toThrow(RangeError);
  });

  it('compares two servers function by function, what only one has included', () => {
    const a = [
      { name: 'f', perRequest: 4000 },
      { name: 'g', perRequest: 600 },
    ];
    const b = [
      { name: 'f', perRequest: 1000 },
      { name: 'h', perRequest: 50 },
    ];
    expect(difference(a, b)).toEqual([
      { name: 'f', perRequest: 3000 },
      { name: 'g', perRequest: 600 },
      { name: 'h', perRequest: -50 },
    ]);
  });
});
