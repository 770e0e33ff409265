import { McpError } from '../../../lib/errors';
import { decodeCursor, encodeCursor } from '../../../lib/cursor';
import {
  type ResourceEntry,
  type ResourceSource,
  memoryResources,
  resources,
} from '../../../handlers/resources/index';
import { makeCtx, principal } from '../../support/handler-context';

const PNG = Buffer.from('89504e470d0a1a0a', 'hex');

function docs(): ResourceSource {
  return memoryResources([
    { uri: 'mem://a.md', name: 'a', title: 'A', mimeType: 'text/markdown', text: '# A' },
    { uri: 'mem://b.txt', name: 'b', mimeType: 'text/plain', bytes: Buffer.from([0x62, 0xe9]) },
    { uri: 'mem://c.png', name: 'c', mimeType: 'image/png', bytes: PNG },
    { uri: 'mem://d.json', name: 'd', mimeType: 'application/json', text: '{"x":1}' },
    { uri: 'mem://e', name: 'e', text: 'plain' },
  ]);
}

async function rejection(p: Promise<unknown>): Promise<McpError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof McpError) return e;
    throw e;
  }
  throw new Error('expected a rejection');
}

describe('resources/list', () => {
  test('lists every entry with public fields only, size filled in', async () => {
    const h = resources({ sources: [docs()] });
    const r = await h.list({}, makeCtx());
    expect(r.nextCursor).toBeUndefined();
    expect(r.resources.map((e) => e.uri)).toEqual([
      'mem://a.md',
      'mem://b.txt',
      'mem://c.png',
      'mem://d.json',
      'mem://e',
    ]);
    expect(r.resources[0]).toEqual({
      uri: 'mem://a.md',
      name: 'a',
      title: 'A',
      mimeType: 'text/markdown',
      size: 3,
    });
    expect(r.resources[2]).not.toHaveProperty('bytes');
    expect(r.resources[4]).not.toHaveProperty('text');
  });

  test('no sources → an empty list, not null', async () => {
    expect(await resources().list({}, makeCtx())).toEqual({ resources: [] });
  });

  test('pagination: pages of 2, opaque cursors, same cache hint on every page', async () => {
    const cache = { ttlMs: 60_000, cacheScope: 'private' as const };
    const h = resources({ sources: [docs()], pageSize: 2, cache });
    const ctx = makeCtx();
    const pages: ResourceEntry[][] = [];
    let cursor: string | undefined;
    const hints: unknown[] = [];
    do {
      const r = await h.list(cursor === undefined ? {} : { cursor }, ctx);
      pages.push(r.resources);
      hints.push({
        ttlMs: (r as { ttlMs?: number }).ttlMs,
        cacheScope: (r as { cacheScope?: string }).cacheScope,
      });
      cursor = r.nextCursor;
    } while (cursor !== undefined);
    expect(pages.map((p) => p.map((e) => e.name))).toEqual([['a', 'b'], ['c', 'd'], ['e']]);
    expect(hints).toEqual([cache, cache, cache]);
  });

  test('paging is off by default even with many entries', async () => {
    const many = memoryResources(
      Array.from({ length: 300 }, (_, i) => ({ uri: `mem://${i}`, name: `n${i}`, text: '' })),
    );
    const r = await resources({ sources: [many] }).list({}, makeCtx());
    expect(r.resources).toHaveLength(300);
    expect(r.nextCursor).toBeUndefined();
  });

  test.each([
    ['garbage', '!!!'],
    ['stale', encodeCursor('mem://gone', 'resources')!],
    ['another list', encodeCursor('a', 'prompts')!],
    ['not a string', 42],
  ])('%s cursor → -32602', async (_l, cursor) => {
    const h = resources({ sources: [docs()], pageSize: 2 });
    const e = await rejection(h.list({ cursor }, makeCtx()));
    expect(e.code).toBe(-32602);
    expect(e.message).toMatch(/^resources\/list: Invalid cursor/);
  });

  test('the first source to list a URI owns it', async () => {
    const first = memoryResources([{ uri: 'mem://x', name: 'first', text: '1' }]);
    const second = memoryResources([
      { uri: 'mem://x', name: 'second', text: '2' },
      { uri: 'mem://y', name: 'y', text: 'y' },
    ]);
    const h = resources({ sources: [first, second] });
    const r = await h.list({}, makeCtx());
    expect(r.resources.map((e) => e.name)).toEqual(['first', 'y']);
    expect((await h.read({ uri: 'mem://x' }, makeCtx())).contents[0]).toMatchObject({ text: '1' });
  });

  test('visibility per principal filters before paging; hidden reads as unknown', async () => {
    const h = resources({
      sources: [docs()],
      pageSize: 2,
      visible: (item, ctx) =>
        item.kind !== 'resource' ||
        item.entry.name !== 'b' ||
        ctx.principal?.roles.includes('admin') === true,
    });
    const alice = makeCtx({ principal: principal('alice') });
    const admin = makeCtx({ principal: principal('root', ['admin']) });
    expect((await h.list({}, alice)).resources.map((e) => e.name)).toEqual(['a', 'c']);
    expect((await h.list({}, admin)).resources.map((e) => e.name)).toEqual(['a', 'b']);
    const hidden = await rejection(h.read({ uri: 'mem://b.txt' }, alice));
    const unknown = await rejection(h.read({ uri: 'mem://zzz' }, alice));
    expect(hidden.code).toBe(-32602);
    expect({ code: hidden.code, data: (hidden.data as { uri: string }).uri.length > 0 }).toEqual({
      code: unknown.code,
      data: true,
    });
    expect(hidden.message.replace('mem://b.txt', 'X')).toBe(unknown.message.replace('mem://zzz', 'X'));
    // A cursor naming an entry this caller cannot see is stale for them.
    const e = await rejection(h.list({ cursor: encodeCursor('mem://b.txt', 'resources')! }, alice));
    expect(e.code).toBe(-32602);
  });

  test('sources receive the call context (per-principal lists)', async () => {
    const perUser: ResourceSource = {
      list: (ctx) => [{ uri: `user://${ctx.principal?.userId ?? 'anon'}/home`, name: 'home' }],
      read: (uri, ctx) => ({ text: `home of ${ctx.principal?.userId}`, mimeType: 'text/plain' }),
    };
    const h = resources({ sources: [perUser] });
    const bob = makeCtx({ principal: principal('bob') });
    expect((await h.list({}, bob)).resources[0]!.uri).toBe('user://bob/home');
    expect((await h.read({ uri: 'user://bob/home' }, bob)).contents).toEqual([
      { uri: 'user://bob/home', mimeType: 'text/plain', text: 'home of bob' },
    ]);
    expect((await rejection(h.read({ uri: 'user://alice/home' }, bob))).code).toBe(-32602);
  });

  test('a source listing a malformed entry is a programming error, not a client error', async () => {
    const bad: ResourceSource = { list: () => [{ name: 'no uri' } as ResourceEntry], read: () => undefined };
    await expect(resources({ sources: [bad] }).list({}, makeCtx())).rejects.toThrow(TypeError);
  });
});

describe('resources/read', () => {
  const h = resources({ sources: [docs()] });

  test.each([
    ['markdown text', 'mem://a.md', { uri: 'mem://a.md', mimeType: 'text/markdown', text: '# A' }],
    [
      'text/plain that is not UTF-8 → blob',
      'mem://b.txt',
      { uri: 'mem://b.txt', mimeType: 'text/plain', blob: Buffer.from([0x62, 0xe9]).toString('base64') },
    ],
    [
      'PNG → blob',
      'mem://c.png',
      { uri: 'mem://c.png', mimeType: 'image/png', blob: PNG.toString('base64') },
    ],
    ['JSON → text', 'mem://d.json', { uri: 'mem://d.json', mimeType: 'application/json', text: '{"x":1}' }],
    ['no MIME type → text', 'mem://e', { uri: 'mem://e', text: 'plain' }],
  ])('%s', async (_l, uri, expected) => {
    expect(await h.read({ uri }, makeCtx())).toEqual({ contents: [expected] });
  });

  test('unknown resource → -32602 with data {uri}, never an empty contents', async () => {
    const e = await rejection(h.read({ uri: 'mem://nope' }, makeCtx()));
    expect(e.code).toBe(-32602);
    expect(e.data).toEqual({ uri: 'mem://nope' });
    expect(e.message).toBe('Unknown resource: mem://nope');
    expect(e.status).toBeUndefined();
  });

  test('legacy era: -32002 by default, or -32602 when configured', async () => {
    const legacy = makeCtx({ era: 'legacy' });
    const e = await rejection(h.read({ uri: 'mem://nope' }, legacy));
    expect([e.code, e.data]).toEqual([-32002, { uri: 'mem://nope' }]);
    const h2 = resources({ sources: [docs()], legacyNotFoundCode: -32602 });
    expect((await rejection(h2.read({ uri: 'mem://nope' }, legacy))).code).toBe(-32602);
  });

  test('long caller-supplied URIs are clipped in the message', async () => {
    const uri = 'mem://' + 'x'.repeat(5000);
    const e = await rejection(h.read({ uri }, makeCtx()));
    expect(e.message.length).toBeLessThan(120);
    expect((e.data as { uri: string }).uri.length).toBeLessThanOrEqual(1025);
  });

  test('URIs over maxUriLength are unknown without asking the sources', async () => {
    let asked = 0;
    const src: ResourceSource = { list: () => (asked++, []), read: () => undefined };
    const e = await rejection(
      resources({ sources: [src], maxUriLength: 10 }).read({ uri: 'mem://0123456789' }, makeCtx()),
    );
    expect(e.code).toBe(-32602);
    expect(asked).toBe(0);
  });

  test.each([[undefined], [''], [5], [null]])('uri %p → -32602', async (uri) => {
    const e = await rejection(h.read(uri === undefined ? {} : { uri }, makeCtx()));
    expect(e.code).toBe(-32602);
    expect(e.message).toMatch(/uri/);
  });

  test('a source whose entry vanished between list and read → unknown, not empty', async () => {
    const src: ResourceSource = { list: () => [{ uri: 'mem://v', name: 'v' }], read: () => undefined };
    expect((await rejection(resources({ sources: [src] }).read({ uri: 'mem://v' }, makeCtx()))).code).toBe(
      -32602,
    );
  });

  test('cache hint on read results', async () => {
    const h2 = resources({ sources: [docs()], cache: { ttlMs: 5, cacheScope: 'public' } });
    expect(await h2.read({ uri: 'mem://e' }, makeCtx())).toEqual({
      contents: [{ uri: 'mem://e', text: 'plain' }],
      ttlMs: 5,
      cacheScope: 'public',
    });
  });
});

describe('resource templates', () => {
  const h = resources({
    templates: [
      {
        uriTemplate: 'weather://forecast/{city}',
        name: 'forecast',
        title: 'Forecast',
        mimeType: 'application/json',
        read: (vars) =>
          vars.city === 'atlantis' ? undefined : { text: JSON.stringify({ city: vars.city, sky: 'clear' }) },
        complete: (_v, value) => ['paris', 'perth', 'porto'].filter((c) => c.startsWith(value)),
      },
      { uriTemplate: 'logo://{size}.png', name: 'logo', mimeType: 'image/png', read: () => ({ bytes: PNG }) },
    ],
    templatesPageSize: 1,
  });

  test('templates/list pages, public fields only', async () => {
    const p1 = await h.templatesList({}, makeCtx());
    expect(p1.resourceTemplates).toEqual([
      {
        uriTemplate: 'weather://forecast/{city}',
        name: 'forecast',
        title: 'Forecast',
        mimeType: 'application/json',
      },
    ]);
    expect(decodeCursor(p1.nextCursor!)).toMatchObject({ ok: true, list: 'resources/templates' });
    const p2 = await h.templatesList({ cursor: p1.nextCursor }, makeCtx());
    expect(p2).toEqual({
      resourceTemplates: [{ uriTemplate: 'logo://{size}.png', name: 'logo', mimeType: 'image/png' }],
    });
  });

  test('read of a matching URI calls the template, decoded variables, template MIME type', async () => {
    expect(await h.read({ uri: 'weather://forecast/New%20York' }, makeCtx())).toEqual({
      contents: [
        {
          uri: 'weather://forecast/New%20York',
          mimeType: 'application/json',
          text: '{"city":"New York","sky":"clear"}',
        },
      ],
    });
    expect((await h.read({ uri: 'logo://16.png' }, makeCtx())).contents[0]).toEqual({
      uri: 'logo://16.png',
      mimeType: 'image/png',
      blob: PNG.toString('base64'),
    });
  });

  test('a template read returning undefined, or no template matching → -32602', async () => {
    expect((await rejection(h.read({ uri: 'weather://forecast/atlantis' }, makeCtx()))).code).toBe(-32602);
    expect((await rejection(h.read({ uri: 'weather://forecast/a/b' }, makeCtx()))).code).toBe(-32602);
  });

  test('bad templates are refused at construction', () => {
    expect(() =>
      resources({ templates: [{ uriTemplate: 'x://{+p}', name: 'x', read: () => undefined }] }),
    ).toThrow(/templates\[0\]\.uriTemplate/);
    expect(() =>
      resources({
        templates: [
          { uriTemplate: 'x://{a}', name: 'x', read: () => undefined },
          { uriTemplate: 'x://{a}', name: 'y', read: () => undefined },
        ],
      }),
    ).toThrow(/unique/);
  });
});

describe('resources() options', () => {
  test.each<[string, object, RegExp]>([
    ['pageSize negative', { pageSize: -1 }, /"pageSize" must be a non-negative integer/],
    ['pageSize fractional', { pageSize: 1.5 }, /"pageSize"/],
    ['templatesPageSize string', { templatesPageSize: '2' }, /"templatesPageSize"/],
    ['sources not an array', { sources: {} }, /"sources"/],
    ['a source without read', { sources: [{ list: () => [] }] }, /"sources\[0\]"/],
    ['visible not a function', { visible: true }, /"visible"/],
    ['cache without scope', { cache: { ttlMs: 1 } }, /"cache"/],
    ['cache negative ttl', { cache: { ttlMs: -1, cacheScope: 'private' } }, /"cache"/],
    [
      'public cache with visibility',
      { visible: () => true, cache: { ttlMs: 1, cacheScope: 'public' } },
      /"cache".*private/,
    ],
    ['legacyNotFoundCode', { legacyNotFoundCode: -32001 }, /"legacyNotFoundCode"/],
    ['maxUriLength', { maxUriLength: 0 }, /"maxUriLength"/],
  ])('%s → TypeError naming the option', (_l, opts, re) => {
    expect(() => resources(opts as never)).toThrow(TypeError);
    expect(() => resources(opts as never)).toThrow(re);
  });

  test('a misspelt option is refused, naming the known one', () => {
    const build = () => resources({ template: [] } as never);
    expect(build).toThrow(TypeError);
    expect(build).toThrow(/resources: unknown option "template"; did you mean "templates"\?/);
  });

  test('memoryResources refuses duplicate URIs', () => {
    expect(() =>
      memoryResources([
        { uri: 'a://1', name: 'a', text: '' },
        { uri: 'a://1', name: 'b', text: '' },
      ]),
    ).toThrow(/items\[1\]\.uri/);
  });

  test('no extra string-named members: only list, templatesList and read are callable', () => {
    const h = resources();
    expect(Object.keys(h).sort()).toEqual(['list', 'read', 'templatesList']);
  });
});
