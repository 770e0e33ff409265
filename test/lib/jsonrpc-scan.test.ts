/**
 * The member scan (duplicate and forbidden members, depth) against an independent reference written here (one
 * frame object with a Set per container, char-by-char strings): every verdict must be the same, on texts built
 * to hit duplicates (exact and case-folded), escapes, `__proto__`, `constructor` and depth limits, and on calls
 * that follow a refused one (no state may carry over from one call to the next).
 */
import fc from 'fast-check';
import { parseMessage } from '../../lib/jsonrpc';

function foldKey(k: string): string {
  return k
    .toLowerCase()
    .replace(/\u017f/g, 's')
    .replace(/\u212a/g, 'k');
}

function referenceScan(text: string, maxDepth: number): { reason: string; message: string } | undefined {
  interface Frame {
    obj: boolean;
    names: Set<string>;
    role: number;
    lastKey?: string;
  }
  const clip = (s: string): string => (s.length > 64 ? s.slice(0, 64) + '…' : s);
  const stack: Frame[] = [];
  let i = 0;
  let expectKey = false;
  while (i < text.length) {
    const c = text[i];
    if (c === '"') {
      let j = i + 1;
      let escaped = false;
      while (j < text.length) {
        if (text[j] === '\\') {
          escaped = true;
          j += 2;
          continue;
        }
        if (text[j] === '"') break;
        j++;
      }
      const top = stack[stack.length - 1];
      if (expectKey && top && top.obj) {
        const key = escaped ? (JSON.parse(text.slice(i, j + 1)) as string) : text.slice(i + 1, j);
        if (key === '__proto__')
          return { reason: 'forbidden_member', message: 'Member "__proto__" is not allowed' };
        const name = top.role > 0 ? foldKey(key) : key;
        if (top.names.has(name))
          return { reason: 'duplicate_member', message: `Member "${clip(key)}" is named twice` };
        top.names.add(name);
        top.lastKey = key;
        expectKey = false;
      }
      i = j + 1;
      continue;
    }
    if (c === '{' || c === '[') {
      const parent = stack[stack.length - 1];
      let role = 0;
      if (c === '{') {
        if (!parent) role = 1;
        else if (parent.obj && parent.role === 1 && parent.lastKey === 'params') role = 2;
        else if (parent.obj && parent.role === 2 && parent.lastKey === '_meta') role = 3;
        if (parent && parent.obj && parent.lastKey === 'constructor')
          return { reason: 'forbidden_member', message: 'Member "constructor" may not hold an object' };
      }
      stack.push({ obj: c === '{', names: new Set(), role });
      if (stack.length > maxDepth)
        return { reason: 'too_deep', message: `Request nesting exceeds ${maxDepth} levels` };
      expectKey = c === '{';
      i++;
      continue;
    }
    if (c === '}' || c === ']') {
      stack.pop();
      expectKey = false;
    } else if (c === ',') {
      const top = stack[stack.length - 1];
      expectKey = !!top && top.obj;
    }
    i++;
  }
  return undefined;
}

/** Keys chosen to collide: exact and folded duplicates, the envelope's names, forbidden names, escapes. */
const key = fc.constantFrom(
  'id',
  'ID',
  'Id',
  'method',
  'Method',
  'params',
  '_meta',
  '_META',
  'a',
  'A',
  'ſ',
  'S',
  's',
  'K',
  'k',
  'K',
  '__proto__',
  'constructor',
  'arguments',
  'x"y',
  'back\\slash',
  'tab\t',
  'é',
  'É',
);

/** A member name as JSON text; with `escape`, its first lower-case letter written as a `\u00XX` escape. */
function quoteKey(k: string, escape: boolean): string {
  const quoted = JSON.stringify(k);
  return escape ? quoted.replace(/[a-z]/, (ch) => `\\u00${ch.charCodeAt(0).toString(16)}`) : quoted;
}

/** JSON text of a value whose objects may repeat keys (which JSON.stringify cannot produce). */
const text: fc.Arbitrary<string> = fc.letrec<{ value: string; obj: string; arr: string }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom('1', '"s"', 'null', 'true', '"a\\"b"', '"\\u0041"', '-2.5e3', '"x,{[}]:"'),
    tie('obj'),
    tie('arr'),
  ),
  obj: fc
    .array(fc.tuple(fc.oneof(key, fc.string({ maxLength: 4 })), tie('value'), fc.boolean()), { maxLength: 5 })
    .map(
      (members) => '{' + members.map(([k, v, escape]) => `${quoteKey(k, escape)} : ${v}`).join(' ,') + '}',
    ),
  arr: fc.array(tie('value'), { maxLength: 4 }).map((xs) => '[' + xs.join(',') + ']'),
})).obj;

/** An envelope around generated params, so that the folding roles (envelope, params, _meta) are exercised. */
const envelope = fc
  .tuple(text, text, fc.boolean())
  .map(
    ([params, meta, dup]) =>
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":${params.replace(/^\{/, `{"_meta":${meta}${params === '{}' ? '' : ','}`)}${dup ? ',"ID":2' : ''}}`,
  );

function verdict(t: string, maxDepth: number): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(t);
  } catch {
    return 'invalid';
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return 'skip';
  const p = referenceScan(t, maxDepth);
  return p ? `${p.reason}: ${p.message}` : 'clean';
}

function actual(t: string, maxDepth: number): string {
  const r = parseMessage(t, { maxDepth });
  if (
    !r.ok &&
    (r.reason === 'duplicate_member' || r.reason === 'forbidden_member' || r.reason === 'too_deep')
  )
    return `${r.reason}: ${r.message}`;
  return 'clean';
}

describe('the member scan against the reference scanner', () => {
  test('same verdict on generated texts (duplicates, folds, escapes, forbidden members, depth)', () => {
    let problems = 0;
    fc.assert(
      fc.property(fc.oneof(text, envelope), fc.integer({ min: 2, max: 6 }), (t, maxDepth) => {
        const want = verdict(t, maxDepth);
        if (want === 'invalid' || want === 'skip') return;
        if (want !== 'clean') problems++;
        expect(actual(t, maxDepth)).toBe(want);
        // The same text scanned again (after whatever came before) gives the same verdict.
        expect(actual(t, maxDepth)).toBe(want);
      }),
      { numRuns: 4000 },
    );
    // The generator must actually produce refusals, or the comparison proves little.
    expect(problems).toBeGreaterThan(400);
  });

  test('a refused deep body leaves no state behind for the next one', () => {
    const deep = '{"a":'.repeat(10) + '{"x":1,"x":2}' + '}'.repeat(10);
    expect(actual(deep, 64)).toBe('duplicate_member: Member "x" is named twice');
    expect(actual('{"a":{"x":1},"b":{"x":2}}', 64)).toBe('clean');
    expect(actual('{"jsonrpc":"2.0","id":1,"method":"m","params":{"x":1}}', 64)).toBe('clean');
    expect(actual(deep, 5)).toBe('too_deep: Request nesting exceeds 5 levels');
    expect(actual('{"a":{"b":{"c":{"d":1}}},"a2":{"b":{"c":{"d":1}}}}', 64)).toBe('clean');
  });

  test('strings without any backslash may hold every structural character', () => {
    expect(actual('{"a":"{[,:}]\\"","a":1}', 64)).toBe('duplicate_member: Member "a" is named twice');
    expect(actual('{"a":"{[,:}]","b":"x\\"y","b":1}', 64)).toBe(
      'duplicate_member: Member "b" is named twice',
    );
    expect(actual('{"a":"{\\"b\\":1,\\"b\\":2}"}', 64)).toBe('clean');
    expect(actual('{"a":"{\'b\':1}","c":{"d":"}}}}","d":0}}', 64)).toBe(
      'duplicate_member: Member "d" is named twice',
    );
  });

  test('objects past 16 members (where a Set takes over) and names past ASCII give the same verdicts', () => {
    // Wide objects: up to 40 members drawn from a small pool, so that duplicates land before and after the
    // switch to the Set; in the envelope, in params and in _meta (folded roles) and below them (exact).
    const wideKey = fc.oneof(
      key,
      fc.constantFrom(
        'n1',
        'N1',
        'n2',
        'n3',
        'n4',
        'n5',
        'n6',
        'n7',
        'n8',
        'n9',
        'x',
        'X',
        'İ',
        'i̇',
        'ǅ',
        'ǆ',
      ),
      fc.string({ maxLength: 3 }),
    );
    const wide = fc
      .array(fc.tuple(wideKey, fc.boolean()), { minLength: 10, maxLength: 40 })
      .map((members) => '{' + members.map(([k, escape], i) => `${quoteKey(k, escape)}:${i}`).join(',') + '}');
    const placed = fc
      .tuple(wide, fc.constantFrom('envelope', 'params', 'meta', 'args'))
      .map(([obj, where]) => {
        const inner = obj.slice(1, -1);
        const sep = inner === '' ? '' : ',';
        switch (where) {
          case 'envelope':
            return `{"jsonrpc":"2.0","method":"m"${sep}${inner}}`;
          case 'params':
            return `{"jsonrpc":"2.0","method":"m","params":${obj}}`;
          case 'meta':
            return `{"jsonrpc":"2.0","method":"m","params":{"_meta":${obj}}}`;
          default:
            return `{"jsonrpc":"2.0","method":"m","params":{"arguments":${obj}}}`;
        }
      });
    let problems = 0;
    let clean = 0;
    fc.assert(
      fc.property(placed, (t) => {
        const want = verdict(t, 64);
        if (want === 'invalid' || want === 'skip') return;
        if (want === 'clean') clean++;
        else problems++;
        expect(actual(t, 64)).toBe(want);
        expect(actual(t, 64)).toBe(want);
      }),
      { numRuns: 3000 },
    );
    expect(problems).toBeGreaterThan(300);
    expect(clean).toBeGreaterThan(100);
  });

  test('case-folded names compare by their folded value, not their length', () => {
    // The Kelvin sign folds to an ASCII "k"; U+0130 lower-cases to two code units.
    expect(actual('{"jsonrpc":"2.0","method":"m","params":{"k":1,"\u212a":2}}', 64)).toBe(
      'duplicate_member: Member "K" is named twice',
    );
    expect(actual('{"jsonrpc":"2.0","method":"m","params":{"k":1,"K":2}}', 64)).toBe(
      'duplicate_member: Member "K" is named twice',
    );
    expect(actual('{"jsonrpc":"2.0","method":"m","params":{"İ":1,"i̇":2}}', 64)).toBe(
      'duplicate_member: Member "i̇" is named twice',
    );
    expect(actual('{"jsonrpc":"2.0","method":"m","params":{"arguments":{"k":1,"K":2}}}', 64)).toBe('clean');
    expect(actual('{"jsonrpc":"2.0","method":"m","params":{"Method":1,"METHOD":2}}', 64)).toBe(
      'duplicate_member: Member "METHOD" is named twice',
    );
    expect(actual('{"jsonrpc":"2.0","method":"m","params":{"arguments":{"A":1,"a":2}}}', 64)).toBe('clean');
    expect(actual('{"jsonrpc":"2.0","method":"m","params":{"arguments":{"A":1,"A":2}}}', 64)).toBe(
      'duplicate_member: Member "A" is named twice',
    );
  });
});
