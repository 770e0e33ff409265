import {
  decodeUtf8,
  isTextualMime,
  isWellFormedText,
  mimeEssence,
  mimeForPath,
  toResourceContents,
} from '../../lib/content';

describe('isTextualMime', () => {
  test.each([
    [undefined, true],
    ['', true],
    ['text/plain', true],
    ['TEXT/Markdown; charset=utf-8', true],
    ['application/json', true],
    ['application/vnd.api+json', true],
    ['image/svg+xml', true],
    ['application/openapi+yaml', true],
    ['application/yaml', true],
    ['application/toml', true],
    ['application/javascript', true],
    ['application/x-sh', true],
    ['image/png', false],
    ['application/octet-stream', false],
    ['application/pdf', false],
    ['audio/wav', false],
    ['application/jsonx', false],
  ])('%s → %s', (mime, expected) => {
    expect(isTextualMime(mime)).toBe(expected);
  });

  test('mimeEssence strips parameters and case', () => {
    expect(mimeEssence(' Text/HTML ; charset=UTF-8')).toBe('text/html');
  });
});

describe('UTF-8 vs blob', () => {
  const uri = 'mem://x';
  test.each<[string, { text?: string; bytes?: Uint8Array; mimeType?: string }, object]>([
    [
      'UTF-8 bytes, text/plain → text',
      { bytes: Buffer.from('héllo ☃'), mimeType: 'text/plain' },
      { uri, mimeType: 'text/plain', text: 'héllo ☃' },
    ],
    [
      'Latin-1 bytes, text/plain → blob (not mangled)',
      { bytes: Buffer.from([0x68, 0xe9, 0x6c]), mimeType: 'text/plain' },
      { uri, mimeType: 'text/plain', blob: 'aOls' },
    ],
    [
      'UTF-8 bytes, image/png → blob',
      { bytes: Buffer.from('abc'), mimeType: 'image/png' },
      { uri, mimeType: 'image/png', blob: 'YWJj' },
    ],
    ['no MIME type, UTF-8 → text', { bytes: Buffer.from('abc') }, { uri, text: 'abc' }],
    [
      'string, textual → text',
      { text: '# Title', mimeType: 'text/markdown' },
      { uri, mimeType: 'text/markdown', text: '# Title' },
    ],
    [
      'string, not textual → blob of its UTF-8',
      { text: 'é', mimeType: 'application/octet-stream' },
      { uri, mimeType: 'application/octet-stream', blob: 'w6k=' },
    ],
    [
      'string with a lone surrogate → blob',
      { text: 'a\uD800b', mimeType: 'text/plain' },
      { uri, mimeType: 'text/plain', blob: Buffer.from('a\uD800b').toString('base64') },
    ],
    ['empty body → empty text, never missing', {}, { uri, text: '' }],
    [
      'empty bytes, textual → empty text',
      { bytes: new Uint8Array(0), mimeType: 'text/plain' },
      { uri, mimeType: 'text/plain', text: '' },
    ],
    ['a BOM is kept', { bytes: Buffer.from([0xef, 0xbb, 0xbf, 0x61]) }, { uri, text: '\uFEFFa' }],
    [
      'overlong encoding is not UTF-8',
      { bytes: Buffer.from([0xc0, 0xaf]), mimeType: 'text/plain' },
      { uri, mimeType: 'text/plain', blob: 'wK8=' },
    ],
  ])('%s', (_label, body, expected) => {
    expect(toResourceContents(uri, body)).toEqual(expected);
  });

  test('blob is standard padded base64 and round-trips the bytes', () => {
    const bytes = new Uint8Array(256).map((_, i) => i);
    const c = toResourceContents(uri, { bytes, mimeType: 'application/octet-stream' });
    expect('blob' in c && Buffer.from(c.blob, 'base64').equals(Buffer.from(bytes))).toBe(true);
    expect('blob' in c && c.blob).toMatch(/^[A-Za-z0-9+/]+={0,2}$/);
  });

  test('a subarray view encodes only its own bytes', () => {
    const whole = Buffer.from('xxabcxx');
    expect(toResourceContents(uri, { bytes: whole.subarray(2, 5), mimeType: 'image/png' })).toEqual({
      uri,
      mimeType: 'image/png',
      blob: 'YWJj',
    });
  });

  test('decodeUtf8 and isWellFormedText', () => {
    expect(decodeUtf8(Buffer.from([0xff]))).toBeUndefined();
    expect(decodeUtf8(Buffer.from('ok'))).toBe('ok');
    expect(isWellFormedText('😀')).toBe(true);
    expect(isWellFormedText('\uDE00')).toBe(false);
    expect(isWellFormedText('\uD83D')).toBe(false);
  });
});

describe('mimeForPath', () => {
  test.each([
    ['a/b/readme.md', 'text/markdown'],
    ['X.MARKDOWN', 'text/markdown'],
    ['logo.png', 'image/png'],
    ['conf.yml', 'application/yaml'],
    ['data.json', 'application/json'],
    ['noext', undefined],
    ['.hidden', undefined],
    ['x.constructor', undefined],
    ['x.unknownext', undefined],
  ])('%s → %s', (p, m) => {
    expect(mimeForPath(p)).toBe(m);
  });
});
