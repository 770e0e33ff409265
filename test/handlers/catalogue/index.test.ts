import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { McpError } from '../../../lib/errors';
import { CatalogueError, loadCatalogue } from '../../../handlers/catalogue/index';
import { McpwareError } from '../../../lib/errors';
import { firstParagraph, splitFrontmatter } from '../../../handlers/catalogue/markdown';
import { prompts } from '../../../handlers/prompts/index';
import { resources } from '../../../handlers/resources/index';
import { makeCtx } from '../../support/handler-context';

const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d4948445200000001000000010806000000' +
    '1f15c4890000000d49444154789c6360f8cfc0f01f0005000201a2dd4f8f0000000049454e44ae426082',
  'hex',
);

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'mcpware-cat-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

let n = 0;
/** A fresh catalogue folder with the given files (string → UTF-8, Buffer → bytes). */
async function folder(files: Record<string, string | Buffer>): Promise<string> {
  const dir = join(root, `c${n++}`);
  await mkdir(dir);
  for (const [rel, content] of Object.entries(files)) {
    const p = join(dir, ...rel.split('/'));
    await mkdir(dirname(p), { recursive: true });
    await writeFile(p, content);
  }
  return dir;
}

async function loadError(dir: string, opts = {}): Promise<CatalogueError> {
  try {
    await loadCatalogue(dir, opts);
  } catch (e) {
    if (e instanceof CatalogueError) {
      expect(e).toBeInstanceOf(McpwareError);
      expect(e.code).toBe('ERR_CATALOGUE');
      return e;
    }
    throw e;
  }
  throw new Error('expected the load to fail');
}

const GUIDE = `---
name: guide
title: The Guide
description: How to use it
---
# Guide

Body text.
`;

describe('loadCatalogue', () => {
  test('markdown with frontmatter, description fallback, binary file, prompt with a required argument', async () => {
    const plain = '# Plain\n\nFirst prose paragraph\nsecond line.\n\nSecond paragraph.\n';
    const dir = await folder({
      'guide.md': GUIDE,
      'notes/plain.md': plain,
      'logo.png': PNG,
      'data.json': '{"a":1}',
      'prompts/summarize.md':
        '---\ndescription: Summarize a topic\narguments:\n  - name: topic\n    description: The topic\n    required: true\n---\n\nSummarize {{topic}} in three bullet points.\n',
      'prompts/notes.txt': 'not a prompt',
    });
    const cat = await loadCatalogue(dir, { scheme: 'docs' });
    expect(cat.files).toEqual([
      'data.json',
      'guide.md',
      'logo.png',
      'notes/plain.md',
      'prompts/notes.txt',
      'prompts/summarize.md',
    ]);
    expect(cat.resources.entries).toEqual([
      { uri: 'docs://data.json', name: 'data.json', mimeType: 'application/json', size: 7 },
      {
        uri: 'docs://guide.md',
        name: 'guide',
        title: 'The Guide',
        description: 'How to use it',
        mimeType: 'text/markdown',
        size: '# Guide\n\nBody text.\n'.length,
      },
      { uri: 'docs://logo.png', name: 'logo.png', mimeType: 'image/png', size: PNG.length },
      {
        uri: 'docs://notes/plain.md',
        name: 'notes/plain.md',
        description: 'First prose paragraph second line.',
        mimeType: 'text/markdown',
        size: plain.length,
      },
      { uri: 'docs://prompts/notes.txt', name: 'prompts/notes.txt', mimeType: 'text/plain', size: 12 },
    ]);
    expect(cat.prompts.definitions).toEqual([
      {
        name: 'summarize',
        description: 'Summarize a topic',
        arguments: [{ name: 'topic', description: 'The topic', required: true }],
        template: 'Summarize {{topic}} in three bullet points.',
      },
    ]);

    // Served through the handler objects.
    const res = resources({ sources: [cat.resources] });
    const ctx = makeCtx();
    expect(await res.read({ uri: 'docs://guide.md' }, ctx)).toEqual({
      contents: [{ uri: 'docs://guide.md', mimeType: 'text/markdown', text: '# Guide\n\nBody text.\n' }],
    });
    expect(await res.read({ uri: 'docs://logo.png' }, ctx)).toEqual({
      contents: [{ uri: 'docs://logo.png', mimeType: 'image/png', blob: PNG.toString('base64') }],
    });
    // Bare paths answer with the canonical URI.
    for (const bare of ['guide.md', '/guide.md', '  guide.md  ']) {
      expect((await res.read({ uri: bare }, ctx)).contents[0]!.uri).toBe('docs://guide.md');
    }
    const e = await res.read({ uri: 'docs://../etc/passwd' }, ctx).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(McpError);
    expect((e as McpError).code).toBe(-32602);

    const pr = prompts({ sources: [cat.prompts] });
    expect(await pr.get({ name: 'summarize', arguments: { topic: 'caching' } }, ctx)).toEqual({
      description: 'Summarize a topic',
      messages: [
        { role: 'user', content: { type: 'text', text: 'Summarize caching in three bullet points.' } },
      ],
    });
    const missing = (await pr.get({ name: 'summarize' }, ctx).catch((x: unknown) => x)) as McpError;
    expect([missing.code, (missing.data as { missing: string[] }).missing]).toEqual([-32602, ['topic']]);
  });

  test('two files claiming one resource name fail the load, naming both files', async () => {
    const dir = await folder({ 'a.md': '---\nname: same\n---\nA', 'sub/b.md': '---\nname: same\n---\nB' });
    const e = await loadError(dir);
    expect(e.message).toBe('catalogue: "a.md" and "sub/b.md" both claim the resource name "same"');
    expect(e.files).toEqual(['a.md', 'sub/b.md']);
  });

  test("a frontmatter name equal to another file's path is a duplicate too", async () => {
    const dir = await folder({ 'a.md': '---\nname: z.txt\n---\nA', 'z.txt': 'z' });
    expect((await loadError(dir)).files).toEqual(['a.md', 'z.txt']);
  });

  test('two prompts claiming one name fail the load', async () => {
    const dir = await folder({
      'prompts/a.md': '---\nname: p\n---\nA',
      'prompts/b.md': '---\nname: p\n---\nB',
    });
    const e = await loadError(dir);
    expect(e.message).toBe('catalogue: "prompts/a.md" and "prompts/b.md" both claim the prompt name "p"');
  });

  test('a prompt name defaults to its path inside the prompts folder', async () => {
    const dir = await folder({ 'prompts/ops/restart.md': 'Restart the service.' });
    const cat = await loadCatalogue(dir);
    expect(cat.prompts.definitions).toEqual([
      { name: 'ops/restart', description: 'Restart the service.', template: 'Restart the service.' },
    ]);
  });

  test.each<[string, Record<string, string>, RegExp]>([
    ['unclosed frontmatter', { 'a.md': '---\nname: x\n' }, /"a\.md": frontmatter has no closing/],
    ['invalid YAML', { 'a.md': '---\nname: [x\n---\n' }, /"a\.md": frontmatter is not valid YAML/],
    ['YAML not a mapping', { 'a.md': '---\n- a\n- b\n---\n' }, /"a\.md": frontmatter must be a YAML mapping/],
    ['duplicate YAML keys', { 'a.md': '---\nname: a\nname: b\n---\n' }, /not valid YAML/],
    ['name not a string', { 'a.md': '---\nname: 5\n---\n' }, /"a\.md": frontmatter "name" must be a string/],
    ['arguments not a list', { 'prompts/p.md': '---\narguments: x\n---\n' }, /"arguments" must be a list/],
    [
      'argument without name',
      { 'prompts/p.md': '---\narguments:\n  - required: true\n---\n' },
      /\[0\] needs a string "name"/,
    ],
    [
      'required not boolean',
      { 'prompts/p.md': '---\narguments:\n  - name: a\n    required: "yes"\n---\n' },
      /required must be true or false/,
    ],
    [
      'undeclared placeholder',
      { 'prompts/p.md': '---\narguments:\n  - name: topic\n---\nAbout {{topc}}' },
      /placeholder \{\{topc\}\} is not a declared argument/,
    ],
    [
      'a YAML alias bomb',
      {
        'a.md':
          '---\na: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n---\n',
      },
      /not valid YAML/,
    ],
  ])('%s fails the load naming the file', async (_l, files, re) => {
    await expect(loadCatalogue(await folder(files))).rejects.toThrow(re);
  });

  test('strictPlaceholders: false lets prose placeholders through', async () => {
    const cat = await loadCatalogue(await folder({ 'prompts/p.md': 'Use {{example}} literally.' }), {
      strictPlaceholders: false,
    });
    const pr = prompts({ sources: [cat.prompts] });
    expect((await pr.get({ name: 'p' }, makeCtx())).messages[0]!.content.text).toBe(
      'Use {{example}} literally.',
    );
  });

  test('bounds: file size, file count, total bytes, depth', async () => {
    await expect(
      loadCatalogue(await folder({ 'big.md': 'x'.repeat(2000) }), { maxFileBytes: 1000 }),
    ).rejects.toThrow(/"big\.md" is 2000 bytes, over the 1000-byte limit/);
    await expect(
      loadCatalogue(await folder({ 'a.md': 'a', 'b.md': 'b', 'c.md': 'c' }), { maxFiles: 2 }),
    ).rejects.toThrow(/more than 2 files/);
    await expect(
      loadCatalogue(await folder({ 'a.md': 'aaaa', 'b.md': 'bbbb' }), { maxTotalBytes: 6 }),
    ).rejects.toThrow(/total more than 6 bytes/);
    await expect(loadCatalogue(await folder({ 'a/b/c/d.md': 'x' }), { maxDepth: 2 })).rejects.toThrow(
      /nested deeper than 2/,
    );
    await expect(loadCatalogue(await folder({ 'a/b/d.md': 'x' }), { maxDepth: 2 })).resolves.toBeDefined();
  });

  test('hidden files and folders and symbolic links are skipped', async () => {
    const outside = await folder({ 'secret.md': 'SECRET' });
    const dir = await folder({ 'ok.md': 'ok', '.hidden.md': 'h', '.git/config': 'x' });
    await symlink(join(outside, 'secret.md'), join(dir, 'link.md'));
    await symlink(outside, join(dir, 'linkdir'));
    const cat = await loadCatalogue(dir);
    expect(cat.files).toEqual(['ok.md']);
  });

  test('a markdown file that is not UTF-8 is served as a blob with no description', async () => {
    const bytes = Buffer.from([0x23, 0x20, 0xe9, 0x0a]);
    const cat = await loadCatalogue(await folder({ 'latin.md': bytes }));
    expect(cat.resources.entries).toEqual([
      { uri: 'docs://latin.md', name: 'latin.md', mimeType: 'text/markdown', size: 4 },
    ]);
    const res = resources({ sources: [cat.resources] });
    expect((await res.read({ uri: 'docs://latin.md' }, makeCtx())).contents[0]).toEqual({
      uri: 'docs://latin.md',
      mimeType: 'text/markdown',
      blob: bytes.toString('base64'),
    });
  });

  test('unknown extensions: UTF-8 → text/plain, binary → application/octet-stream', async () => {
    const cat = await loadCatalogue(
      await folder({ 'a.weird': 'hello', 'b.bin': Buffer.from([0, 1, 2, 0xff]) }),
    );
    expect(cat.resources.entries.map((e) => e.mimeType)).toEqual(['text/plain', 'application/octet-stream']);
  });

  test('scheme as a prefix, percent-encoded path segments, promptsDir off', async () => {
    const dir = await folder({ 'my notes.md': 'x', 'prompts/p.md': 'p' });
    const cat = await loadCatalogue(dir, { scheme: 'srv://catalog/', promptsDir: false });
    expect(cat.resources.entries.map((e) => e.uri)).toEqual([
      'srv://catalog/my%20notes.md',
      'srv://catalog/prompts/p.md',
    ]);
    expect(cat.prompts.definitions).toEqual([]);
    const res = resources({ sources: [cat.resources] });
    expect((await res.read({ uri: 'my notes.md' }, makeCtx())).contents[0]!.uri).toBe(
      'srv://catalog/my%20notes.md',
    );
  });

  test('prompts are listed sorted by name', async () => {
    const cat = await loadCatalogue(
      await folder({ 'prompts/a.md': '---\nname: zeta\n---\nz', 'prompts/b.md': '---\nname: alpha\n---\na' }),
    );
    expect(cat.prompts.definitions.map((d) => d.name)).toEqual(['alpha', 'zeta']);
  });

  test.each<[object, RegExp]>([
    [{ scheme: 'has space' }, /"scheme"/],
    [{ scheme: 'x://no-trailing-slash' }, /"scheme"/],
    [{ promptsDir: '../up' }, /"promptsDir"/],
    [{ promptsDir: '/abs' }, /"promptsDir"/],
    [{ maxFileBytes: 0 }, /"maxFileBytes"/],
    [{ strictPlaceholders: 'yes' }, /"strictPlaceholders"/],
  ])('bad option %j → TypeError', async (opts, re) => {
    await expect(loadCatalogue(root, opts as never)).rejects.toThrow(re);
  });

  test('a misspelt option is refused before anything is read, naming the known one', async () => {
    const load = loadCatalogue(join(root, 'does-not-exist'), { promptDir: 'p' } as never);
    await expect(load).rejects.toThrow(TypeError);
    await expect(load).rejects.toThrow(
      /loadCatalogue: unknown option "promptDir"; did you mean "promptsDir"\?/,
    );
  });

  test('a missing folder rejects', async () => {
    await expect(loadCatalogue(join(root, 'does-not-exist'))).rejects.toThrow(
      /catalogue: the folder ".*does-not-exist" does not exist/,
    );
  });
});

describe('splitFrontmatter', () => {
  test.each<[string, object | undefined, string]>([
    ['no frontmatter', undefined, 'no frontmatter'],
    ['---\n---\nbody', {}, 'body'],
    ['---\r\ntitle: x\r\n---\r\nbody', { title: 'x' }, 'body'],
    ['\uFEFF---\ntitle: x\n...\nbody', { title: 'x' }, 'body'],
    ['---\ntitle: x\n---   \n', { title: 'x' }, ''],
    ['---\ntitle: x\n---', { title: 'x' }, ''],
    ['text\n---\nnot: frontmatter\n---\n', undefined, 'text\n---\nnot: frontmatter\n---\n'],
  ])('%j', (text, fm, body) => {
    expect(splitFrontmatter(text, 'f.md')).toEqual({ frontmatter: fm, body });
  });

  test('a long run of trailing blanks on a line is handled in linear time', () => {
    const text = '---\n' + 'a: b' + ' '.repeat(200_000) + 'x\n---\n';
    expect(() => splitFrontmatter(text, 'f.md')).toThrow(CatalogueError);
  });
});

describe('firstParagraph', () => {
  test.each<[string, number, string | undefined]>([
    [
      '# Heading\n\nFirst prose paragraph\nsecond line.\n\nSecond paragraph.',
      240,
      'First prose paragraph second line.',
    ],
    ['\n\n  indented  \n  lines  \n', 240, 'indented lines'],
    ['# Only\n## Headings\n', 240, undefined],
    ['', 240, undefined],
    ['aaaaaaaaaaaaaaaaaaaa', 5, 'aaaaa…'],
    ['😀😀😀😀', 2, '😀😀…'],
    ['para\n# Heading ends it\nmore', 240, 'para'],
  ])('%j (max %d)', (body, max, expected) => {
    expect(firstParagraph(body, max)).toBe(expected);
  });
});

describe('the demo catalogue in examples/catalogue', () => {
  test('loads: markdown resources with frontmatter, the PNG as a blob, prompts with required arguments', async () => {
    const cat = await loadCatalogue(join(__dirname, '..', '..', '..', 'examples', 'catalogue'));
    const byName = new Map(cat.resources.entries.map((e) => [e.name, e]));
    expect(byName.get('getting-started')).toMatchObject({
      uri: 'docs://getting-started.md',
      title: 'Getting started with mcpware',
      mimeType: 'text/markdown',
    });
    // security.md has no description in its frontmatter: the first paragraph stands in.
    expect(byName.get('security')!.description).toMatch(/^mcpware treats every request as hostile/);
    expect(byName.get('logo.png')).toMatchObject({ uri: 'docs://logo.png', mimeType: 'image/png' });

    const ctx = makeCtx();
    const logo = (await resources({ sources: [cat.resources] }).read({ uri: 'docs://logo.png' }, ctx))
      .contents[0]!;
    expect('blob' in logo && Buffer.from(logo.blob, 'base64').subarray(0, 8)).toEqual(
      Buffer.from('89504e470d0a1a0a', 'hex'),
    );

    const pr = prompts({ sources: [cat.prompts] });
    const r = await pr.get(
      { name: 'summarize', arguments: { topic: 'pagination', audience: 'operators' } },
      ctx,
    );
    expect(r.messages[0]!.content.text).toMatch(
      /^Summarize pagination, using[^]*\n\nAudience \(developers new to mcpware when blank\): operators$/,
    );
    expect((await pr.get({ name: 'summarize' }, ctx).catch((e: McpError) => e)) as McpError).toMatchObject({
      code: -32602,
    });
    expect(cat.prompts.definitions.every((d) => d.arguments?.some((a) => a.required === true))).toBe(true);
  });
});
