import fc from 'fast-check';
import { placeholders, renderTemplate } from '../../lib/render';

describe('renderTemplate', () => {
  test.each<[string, string, Record<string, string>, string[], string]>([
    ['one placeholder', 'Summarize {{topic}}.', { topic: 'caching' }, [], 'Summarize caching.'],
    ['spaces inside the braces', 'A {{ topic }} B {{  topic}}', { topic: 'x' }, [], 'A x B x'],
    ['repeated', '{{a}}{{a}}{{a}}', { a: 'ab' }, [], 'ababab'],
    [
      'declared but not given → empty',
      'Look at {{svc}} since {{since}}.',
      { svc: 'api' },
      ['svc', 'since'],
      'Look at api since .',
    ],
    ['undeclared and not given → left literal', 'Use {{example}} here', {}, [], 'Use {{example}} here'],
    [
      'names with dots and dashes',
      '{{a.b}}-{{c-d}}-{{_e}}',
      { 'a.b': '1', 'c-d': '2', _e: '3' },
      [],
      '1-2-3',
    ],
    ['not a placeholder: space in name', '{{a b}}', { a: 'x' }, [], '{{a b}}'],
    ['not a placeholder: single braces', '{a} {{a}', { a: 'x' }, [], '{a} {{a}'],
    ['triple braces keep the outer ones', '{{{a}}}', { a: 'x' }, [], '{x}'],
    ['empty template', '', { a: 'x' }, [], ''],
    ['value with dollar patterns stays literal', '{{a}}', { a: "$& $1 $$ $'" }, [], "$& $1 $$ $'"],
    ['multiline', 'line1\n{{a}}\nline3', { a: 'two\nlines' }, [], 'line1\ntwo\nlines\nline3'],
  ])('%s', (_label, template, values, declared, expected) => {
    expect(renderTemplate(template, values, { declared })).toEqual({ ok: true, text: expected });
  });

  test('no double evaluation: a value containing a placeholder stays literal', () => {
    const r = renderTemplate('{{a}} and {{b}}', { a: '{{b}}', b: 'SECRET' });
    expect(r).toEqual({ ok: true, text: '{{b}} and SECRET' });
  });

  test('prototype names are not read from Object.prototype', () => {
    expect(renderTemplate('{{constructor}}{{toString}}{{__proto__}}', {})).toEqual({
      ok: true,
      text: '{{constructor}}{{toString}}{{__proto__}}',
    });
  });

  test('output bound: a template repeating a large value is refused', () => {
    const r = renderTemplate('{{a}}'.repeat(100), { a: 'x'.repeat(1000) }, { maxLength: 50_000 });
    expect(r).toMatchObject({ ok: false, reason: 'too_large' });
    expect(renderTemplate('{{a}}'.repeat(50), { a: 'x'.repeat(1000) }, { maxLength: 50_000 })).toMatchObject({
      ok: true,
    });
  });

  test('property: rendering with values free of braces leaves no given placeholder behind', () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 30 }).filter((s) => !s.includes('{') && !s.includes('}')),
        fc.string({ maxLength: 30 }),
        (v, prose) => {
          const t = `${prose.replace(/[{}]/g, '')}{{x}}${prose.replace(/[{}]/g, '')}`;
          const r = renderTemplate(t, { x: v });
          expect(r.ok && r.text).toBe(t.replace('{{x}}', () => v));
        },
      ),
    );
  });

  test('a long run of braces renders in linear time (bounded regex)', () => {
    const nasty = '{{'.repeat(100_000) + ' '.repeat(100_000);
    expect(renderTemplate(nasty, { a: 'x' })).toMatchObject({ ok: true });
  });
});

describe('placeholders', () => {
  test('distinct names in first-seen order', () => {
    expect(placeholders('{{b}} {{a}} {{ b }} {{c d}}')).toEqual(['b', 'a']);
  });
});
