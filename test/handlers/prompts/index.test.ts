import { McpError } from '../../../lib/errors';
import { encodeCursor } from '../../../lib/cursor';
import { type PromptDefinition, type PromptSource, prompts } from '../../../handlers/prompts/index';
import { makeCtx, principal } from '../../support/handler-context';

async function rejection(p: Promise<unknown>): Promise<McpError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof McpError) return e;
    throw e;
  }
  throw new Error('expected a rejection');
}

const summarize: PromptDefinition = {
  name: 'summarize',
  title: 'Summarize',
  description: 'Summarize a topic',
  arguments: [
    { name: 'topic', description: 'What to summarize', required: true },
    { name: 'audience', required: false },
  ],
  template: 'Summarize {{topic}} for {{audience}}.',
};

const greet: PromptDefinition = {
  name: 'greet',
  arguments: [{ name: 'who' }],
  render: (args) => [
    { role: 'assistant', content: { type: 'text', text: 'I greet people.' } },
    { role: 'user', content: { type: 'text', text: `Say hello to ${args.who ?? 'everyone'}` } },
  ],
};

describe('prompts/list', () => {
  test('lists public fields only (no template, no functions)', async () => {
    const h = prompts({ prompts: [summarize, greet] });
    expect(await h.list({}, makeCtx())).toEqual({
      prompts: [
        {
          name: 'summarize',
          title: 'Summarize',
          description: 'Summarize a topic',
          arguments: [
            { name: 'topic', description: 'What to summarize', required: true },
            { name: 'audience', required: false },
          ],
        },
        { name: 'greet', arguments: [{ name: 'who' }] },
      ],
    });
  });

  test('pagination with the same cache hint on every page; bad cursors → -32602', async () => {
    const defs = Array.from({ length: 5 }, (_, i) => ({ name: `p${i}`, template: 't' }));
    const cache = { ttlMs: 1000, cacheScope: 'public' as const };
    const h = prompts({ prompts: defs, pageSize: 2, cache });
    const p1 = await h.list({}, makeCtx());
    const p2 = await h.list({ cursor: p1.nextCursor }, makeCtx());
    const p3 = await h.list({ cursor: p2.nextCursor }, makeCtx());
    expect([p1, p2, p3].map((p) => p.prompts.map((x) => x.name))).toEqual([
      ['p0', 'p1'],
      ['p2', 'p3'],
      ['p4'],
    ]);
    expect(p3.nextCursor).toBeUndefined();
    for (const p of [p1, p2, p3]) expect(p).toMatchObject(cache);
    for (const cursor of ['%%%', encodeCursor('p9', 'prompts')!, encodeCursor('p1', 'resources')!]) {
      const e = await rejection(h.list({ cursor }, makeCtx()));
      expect(e.code).toBe(-32602);
      expect(e.message).toMatch(/^prompts\/list: Invalid cursor/);
    }
  });

  test('sources follow in-memory prompts; the first name wins', async () => {
    const src: PromptSource = {
      list: () => [
        { name: 'summarize', template: 'other' },
        { name: 'extra', template: 'x' },
      ],
    };
    const h = prompts({ prompts: [summarize], sources: [src] });
    expect((await h.list({}, makeCtx())).prompts.map((p) => p.name)).toEqual(['summarize', 'extra']);
    const r = await h.get({ name: 'summarize', arguments: { topic: 't' } }, makeCtx());
    expect(r.messages[0]!.content.text).toBe('Summarize t for .');
  });
});

describe('prompts/get', () => {
  const h = prompts({ prompts: [summarize, greet] });

  test('renders {{arg}} placeholders into one user message, with the description', async () => {
    expect(
      await h.get(
        { name: 'summarize', arguments: { topic: 'rate limits', audience: 'operators' } },
        makeCtx(),
      ),
    ).toEqual({
      description: 'Summarize a topic',
      messages: [{ role: 'user', content: { type: 'text', text: 'Summarize rate limits for operators.' } }],
    });
  });

  test('an optional argument left out renders as empty', async () => {
    const r = await h.get({ name: 'summarize', arguments: { topic: 'x' } }, makeCtx());
    expect(r.messages[0]!.content.text).toBe('Summarize x for .');
  });

  test('a value containing a placeholder is not evaluated again', async () => {
    const r = await h.get(
      { name: 'summarize', arguments: { topic: '{{audience}}', audience: 'ops' } },
      makeCtx(),
    );
    expect(r.messages[0]!.content.text).toBe('Summarize {{audience}} for ops.');
  });

  test('a missing required argument → -32602 naming it', async () => {
    for (const args of [undefined, {}, { audience: 'x' }]) {
      const e = await rejection(
        h.get(args === undefined ? { name: 'summarize' } : { name: 'summarize', arguments: args }, makeCtx()),
      );
      expect(e.code).toBe(-32602);
      expect(e.message).toBe('Missing required argument "topic" for prompt summarize');
      expect(e.data).toEqual({ name: 'summarize', missing: ['topic'] });
    }
  });

  test('unknown prompt → -32602 with data {name}, long names clipped in the message', async () => {
    const e = await rejection(h.get({ name: 'nope' }, makeCtx()));
    expect([e.code, e.message, e.data]).toEqual([-32602, 'Unknown prompt: nope', { name: 'nope' }]);
    const long = await rejection(h.get({ name: 'n'.repeat(10_000) }, makeCtx()));
    expect(long.message.length).toBeLessThan(100);
  });

  test.each([
    ['name missing', {}],
    ['name not a string', { name: 3 }],
    ['arguments not an object', { name: 'summarize', arguments: ['x'] }],
    ['argument value not a string', { name: 'summarize', arguments: { topic: 5 } }],
  ])('%s → -32602', async (_l, params) => {
    expect((await rejection(h.get(params, makeCtx()))).code).toBe(-32602);
  });

  test('prototype-named prompts and arguments do not reach Object.prototype', async () => {
    expect((await rejection(h.get({ name: 'constructor' }, makeCtx()))).code).toBe(-32602);
    const r = await h.get(
      { name: 'summarize', arguments: JSON.parse('{"topic":"t","__proto__":"x"}') },
      makeCtx(),
    );
    expect(r.messages[0]!.content.text).toBe('Summarize t for .');
  });

  test('render functions: messages as returned, the description added', async () => {
    const r = await h.get({ name: 'greet', arguments: { who: 'Ada' } }, makeCtx());
    expect(r.messages).toHaveLength(2);
    expect(r.messages[1]).toEqual({ role: 'user', content: { type: 'text', text: 'Say hello to Ada' } });
    const s = prompts({ prompts: [{ name: 's', description: 'd', render: () => 'just text' }] });
    expect(await s.get({ name: 's' }, makeCtx())).toEqual({
      description: 'd',
      messages: [{ role: 'user', content: { type: 'text', text: 'just text' } }],
    });
  });

  test('a rendered prompt over the bound → -32602', async () => {
    const small = prompts({ prompts: [summarize], maxRenderedLength: 100 });
    const e = await rejection(
      small.get({ name: 'summarize', arguments: { topic: 'x'.repeat(200) } }, makeCtx()),
    );
    expect(e.code).toBe(-32602);
  });

  test('visibility per principal: hidden prompts are unknown', async () => {
    const v = prompts({
      prompts: [summarize, greet],
      visible: (p, ctx) => p.name !== 'greet' || ctx.principal?.userId === 'ada',
    });
    const bob = makeCtx({ principal: principal('bob') });
    const ada = makeCtx({ principal: principal('ada') });
    expect((await v.list({}, bob)).prompts.map((p) => p.name)).toEqual(['summarize']);
    expect((await v.list({}, ada)).prompts.map((p) => p.name)).toEqual(['summarize', 'greet']);
    const hidden = await rejection(v.get({ name: 'greet' }, bob));
    expect([hidden.code, hidden.message]).toEqual([-32602, 'Unknown prompt: greet']);
    expect((await v.get({ name: 'greet' }, ada)).messages).toHaveLength(2);
  });
});

describe('prompts() options', () => {
  test.each<[string, object, RegExp]>([
    ['duplicate names', { prompts: [summarize, { ...summarize }] }, /prompts\[1\]\.name/],
    ['no template nor render', { prompts: [{ name: 'x' }] }, /template/],
    ['template not a string', { prompts: [{ name: 'x', template: 5 }] }, /template/],
    [
      'duplicate argument names',
      { prompts: [{ name: 'x', template: '', arguments: [{ name: 'a' }, { name: 'a' }] }] },
      /arguments\[1\]/,
    ],
    ['pageSize', { pageSize: -2 }, /"pageSize"/],
    [
      'public cache with visibility',
      { visible: () => true, cache: { ttlMs: 0, cacheScope: 'public' } },
      /"cache"/,
    ],
    ['maxRenderedLength', { maxRenderedLength: 0 }, /"maxRenderedLength"/],
  ])('%s → TypeError', (_l, opts, re) => {
    expect(() => prompts(opts as never)).toThrow(TypeError);
    expect(() => prompts(opts as never)).toThrow(re);
  });

  test('a misspelt option is refused, naming the known one', () => {
    const build = () => prompts({ pagesize: 2 } as never);
    expect(build).toThrow(TypeError);
    expect(build).toThrow(/prompts: unknown option "pagesize"; did you mean "pageSize"\?/);
  });

  test('only list and get are string-named members', () => {
    expect(Object.keys(prompts()).sort()).toEqual(['get', 'list']);
  });
});
