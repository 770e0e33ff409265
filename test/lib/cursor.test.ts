import fc from 'fast-check';
import { MAX_CURSOR_LENGTH, decodeCursor, encodeCursor, paginate } from '../../lib/cursor';

const id = (s: string): string => s;
const ITEMS = ['a', 'b', 'c', 'd', 'e'];

function cursorFor(key: string, list?: string): string {
  const c = encodeCursor(key, list);
  if (c === undefined) throw new Error('unencodable');
  return c;
}

describe('encodeCursor / decodeCursor', () => {
  test.each([
    ['ascii', 'docs://getting-started.md', 'resources'],
    ['empty key', '', 'prompts'],
    ['unicode', 'naïve ☃ 𝄞', undefined],
    ['quotes and backslashes', 'a"b\\c\n', 'tools'],
  ])('round trip: %s', (_label, key, list) => {
    const c = cursorFor(key, list);
    expect(c).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(c).not.toContain('=');
    expect(decodeCursor(c, list)).toEqual({ ok: true, list, key });
  });

  test('property: every string key round-trips through the cursor of its list', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), fc.constantFrom('resources', 'prompts'), (key, list) => {
        expect(decodeCursor(cursorFor(key, list), list)).toEqual({ ok: true, list, key });
      }),
    );
  });

  const b64 = (s: string): string => Buffer.from(s).toString('base64url');
  test.each([
    ['not base64url', '!!!!', 'cursor_malformed'],
    ['padded standard base64', 'YWFhYQ==', 'cursor_malformed'],
    ['standard alphabet +/', 'ab+/', 'cursor_malformed'],
    ['impossible length', 'abcde', 'cursor_malformed'],
    ['not JSON', b64('hello'), 'cursor_malformed'],
    ['JSON array', b64('[1,2]'), 'cursor_malformed'],
    ['JSON null', b64('null'), 'cursor_malformed'],
    ['wrong version', b64('{"v":2,"k":"a"}'), 'cursor_malformed'],
    ['key not a string', b64('{"v":1,"k":5}'), 'cursor_malformed'],
    ['extra member', b64('{"v":1,"k":"a","x":1}'), 'cursor_malformed'],
    ['list not a string', b64('{"v":1,"k":"a","l":3}'), 'cursor_malformed'],
    ['invalid UTF-8 inside', Buffer.from([0x7b, 0xff, 0xfe, 0x7d]).toString('base64url'), 'cursor_malformed'],
    ['too long', 'A'.repeat(MAX_CURSOR_LENGTH + 1), 'cursor_too_long'],
  ])('garbage is refused: %s', (_label, cursor, reason) => {
    const r = decodeCursor(cursor);
    expect(r).toMatchObject({ ok: false, reason });
    if (!r.ok) expect(r.message).not.toContain(cursor.slice(0, 8));
  });

  test('non-canonical trailing bits are refused (a hand-edited last character)', () => {
    // A payload whose byte length is not a multiple of 3 leaves unused low bits in the last character.
    const c = ['a', 'ab', 'abc'].map((k) => cursorFor(k, 'resources')).find((x) => x.length % 4 !== 0)!;
    expect(c.length % 4).not.toBe(0);
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const last = alphabet.indexOf(c[c.length - 1]!);
    const tampered = c.slice(0, -1) + alphabet[last ^ 1]!;
    expect(Buffer.from(tampered, 'base64url').equals(Buffer.from(c, 'base64url'))).toBe(true);
    expect(decodeCursor(tampered)).toMatchObject({ ok: false, reason: 'cursor_malformed' });
  });

  test('property: a tampered cursor never decodes to a different key silently unless it is valid JSON of our shape', () => {
    const c = cursorFor('docs://security.md', 'resources');
    fc.assert(
      fc.property(fc.nat(c.length - 1), fc.constantFrom(...'ABCxyz019-_'.split('')), (i, ch) => {
        const t = c.slice(0, i) + ch + c.slice(i + 1);
        const r = decodeCursor(t, 'resources');
        if (t === c) expect(r).toMatchObject({ ok: true, key: 'docs://security.md' });
        else if (r.ok) expect(r.key).not.toBe('docs://security.md');
        else expect(['cursor_malformed', 'cursor_wrong_list']).toContain(r.reason);
      }),
    );
  });

  test('a cursor of another list is refused', () => {
    expect(decodeCursor(cursorFor('a', 'prompts'), 'resources')).toMatchObject({
      ok: false,
      reason: 'cursor_wrong_list',
    });
  });

  test('a key too long for a cursor cannot be encoded', () => {
    expect(encodeCursor('k'.repeat(4000))).toBeUndefined();
  });
});

describe('paginate', () => {
  test('paging off (size 0) returns everything with no cursor', () => {
    expect(paginate(ITEMS, id, undefined, 0)).toEqual({ ok: true, page: ITEMS });
  });

  test('walks a..e by 2: [a,b] [c,d] [e], with no cursor on the last page', () => {
    const p1 = paginate(ITEMS, id, undefined, 2, 'x');
    expect(p1).toMatchObject({ ok: true, page: ['a', 'b'] });
    if (!p1.ok) throw new Error();
    expect(decodeCursor(p1.nextCursor!)).toMatchObject({ key: 'b' });
    const p2 = paginate(ITEMS, id, p1.nextCursor, 2, 'x');
    expect(p2).toMatchObject({ ok: true, page: ['c', 'd'] });
    if (!p2.ok) throw new Error();
    const p3 = paginate(ITEMS, id, p2.nextCursor, 2, 'x');
    expect(p3).toEqual({ ok: true, page: ['e'] });
  });

  test.each([
    ['b', 2, ['c', 'd'], 'd'],
    ['c', 2, ['d', 'e'], undefined],
    ['e', 2, [], undefined],
    ['a', 0, ['b', 'c', 'd', 'e'], undefined],
  ])('cursor(%s) size %d → %j, next %s', (key, size, page, next) => {
    const r = paginate(ITEMS, id, cursorFor(key), size);
    expect(r).toMatchObject({ ok: true, page });
    if (r.ok)
      expect(r.nextCursor === undefined ? undefined : decodeCursor(r.nextCursor)).toEqual(
        next === undefined ? undefined : { ok: true, list: undefined, key: next },
      );
  });

  test('a final full page carries no cursor', () => {
    expect(paginate(['a', 'b', 'c', 'd'], id, undefined, 4)).toEqual({
      ok: true,
      page: ['a', 'b', 'c', 'd'],
    });
    expect(paginate(['a', 'b', 'c', 'd'], id, cursorFor('b'), 2)).toEqual({ ok: true, page: ['c', 'd'] });
  });

  test('stale cursor: the entry it names is gone → cursor_stale', () => {
    const r = paginate(['a', 'c', 'd'], id, cursorFor('b'), 2);
    expect(r).toMatchObject({ ok: false, reason: 'cursor_stale' });
  });

  test('an entry inserted ahead of the cursor is served; one behind it is never seen', () => {
    const c = cursorFor('b');
    expect(paginate(['a', '0', 'b', 'bb', 'c'], id, c, 10)).toEqual({ ok: true, page: ['bb', 'c'] });
  });

  test('duplicate keys resume after the last occurrence (no loop)', () => {
    expect(paginate(['a', 'x', 'b', 'x', 'c'], id, cursorFor('x'), 10)).toEqual({ ok: true, page: ['c'] });
  });

  test('absent, null and empty cursors mean the first page; non-strings are refused', () => {
    for (const c of [undefined, null, ''])
      expect(paginate(ITEMS, id, c, 2)).toMatchObject({ ok: true, page: ['a', 'b'] });
    for (const c of [5, {}, [], true])
      expect(paginate(ITEMS, id, c, 2)).toMatchObject({ ok: false, reason: 'cursor_malformed' });
  });

  test('an absurd page size does not crash', () => {
    expect(paginate(ITEMS, id, undefined, Number.MAX_SAFE_INTEGER)).toEqual({ ok: true, page: ITEMS });
    expect(paginate(ITEMS, id, undefined, Infinity)).toEqual({ ok: true, page: ITEMS });
  });

  test('an entry whose key cannot be named extends the page to the next nameable one', () => {
    const long = 'k'.repeat(4000);
    const r = paginate(['a', long, 'b', 'c'], id, undefined, 2);
    expect(r).toMatchObject({ ok: true, page: ['a', long, 'b'] });
    if (r.ok) expect(decodeCursor(r.nextCursor!)).toMatchObject({ key: 'b' });
  });

  test('property: walking with any page size visits every entry exactly once, in order', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.string({ maxLength: 12 }), { maxLength: 40 }),
        fc.integer({ min: 1, max: 45 }),
        (items, size) => {
          const seen: string[] = [];
          let cursor: string | undefined;
          let pages = 0;
          do {
            const r = paginate(items, id, cursor, size, 'l');
            if (!r.ok) throw new Error(r.reason);
            expect(r.page.length).toBeLessThanOrEqual(size);
            if (r.nextCursor !== undefined) expect(r.nextCursor).not.toBe('');
            seen.push(...r.page);
            cursor = r.nextCursor;
            pages++;
          } while (cursor !== undefined && pages < 100);
          expect(seen).toEqual(items);
        },
      ),
    );
  });
});
