import fc from 'fast-check';
import { type SseItem, SseParser, encodeSseComment, encodeSseEvent } from '../../lib/sse';

/** Feed `text` to a fresh parser as bytes, split at `cuts`, and collect every item. */
function parseSplit(text: string, cuts: number[], max?: number): SseItem[] | string {
  const bytes = new TextEncoder().encode(text);
  const parser = new SseParser(max);
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const items: SseItem[] = [];
  let from = 0;
  for (const at of [...points, bytes.length]) {
    const r = parser.push(bytes.subarray(from, at));
    if (!r.ok) return r.reason;
    items.push(...r.items);
    from = at;
  }
  return items;
}

const lineText = fc.string({ unit: 'grapheme', maxLength: 20 }).filter((s) => !/[\r\n]/.test(s));
const eventArb = fc
  .record(
    {
      data: fc.array(lineText, { minLength: 1, maxLength: 4 }).map((lines) => lines.join('\n')),
      event: lineText,
      id: lineText.filter((s) => !s.includes('\0')),
      retry: fc.nat({ max: 100_000 }),
    },
    { requiredKeys: [] },
  )
  .filter((e) => Object.keys(e).length > 0)
  .map((e): SseItem => ({ type: 'event', ...e }));
const commentArb = lineText.map((text): SseItem => ({ type: 'comment', text }));

function encode(items: SseItem[]): string {
  return items.map((i) => (i.type === 'comment' ? encodeSseComment(i.text) : encodeSseEvent(i))).join('');
}

describe('lib/sse', () => {
  test('any event sequence, encoded and fed in arbitrary chunk splits, parses back the same', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(eventArb, commentArb), { maxLength: 8 }),
        fc.array(fc.nat(), { maxLength: 10 }),
        (items, cuts) => {
          expect(parseSplit(encode(items), cuts)).toEqual(items);
        },
      ),
      { numRuns: 300 },
    );
  });

  test('CR, LF and CRLF line ends, split anywhere, parse alike', () => {
    fc.assert(
      fc.property(fc.constantFrom('\n', '\r', '\r\n'), fc.array(fc.nat(), { maxLength: 6 }), (eol, cuts) => {
        const text = ['id: 7', 'event: message', 'data: a', 'data: b', ': ping', '', 'data: c', '', ''].join(
          eol,
        );
        expect(parseSplit(text, cuts)).toEqual([
          { type: 'comment', text: ' ping' },
          { type: 'event', id: '7', event: 'message', data: 'a\nb' },
          { type: 'event', data: 'c' },
        ]);
      }),
    );
  });

  test('a leading byte order mark is skipped; a field without a colon or an empty data line is data ""', () => {
    expect(parseSplit('\ufeffdata: x\n\ndata\n\n', [1, 2])).toEqual([
      { type: 'event', data: 'x' },
      { type: 'event', data: '' },
    ]);
  });

  test('unknown fields, a bad retry and an id with NUL are ignored; a trailing event without a blank line is not dispatched', () => {
    expect(parseSplit('foo: bar\nretry: 1x\nid: a\0b\ndata: y\n\ndata: z\n', [])).toEqual([
      { type: 'event', data: 'y' },
    ]);
  });

  test('bounded: a line or an event over the bound is a refusal, whatever the split', () => {
    fc.assert(
      fc.property(fc.array(fc.nat(), { maxLength: 6 }), (cuts) => {
        expect(parseSplit(`data: ${'x'.repeat(200)}\n\n`, cuts, 100)).toBe('event_too_large');
        expect(parseSplit(`${'data: 1234567890\n'.repeat(20)}\n`, cuts, 100)).toBe('event_too_large');
        expect(parseSplit(`data: ${'x'.repeat(200)}`, cuts, 100)).toBe('event_too_large');
      }),
    );
    const parser = new SseParser(100);
    expect(parser.push('x'.repeat(101)).ok).toBe(false);
    expect(parser.push('data: ok\n\n').ok).toBe(false);
  });

  test('the encoder refuses what would break the framing', () => {
    expect(() => encodeSseEvent({ id: 'a\nb' })).toThrow(TypeError);
    expect(() => encodeSseEvent({ event: 'a\rb' })).toThrow(TypeError);
    expect(() => encodeSseComment('a\nb')).toThrow(TypeError);
    expect(encodeSseEvent({ data: 'a\r\nb\rc' })).toBe('data: a\ndata: b\ndata: c\n\n');
  });
});
