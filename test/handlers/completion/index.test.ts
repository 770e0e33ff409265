import { McpError } from '../../../lib/errors';
import { completion } from '../../../handlers/completion/index';
import { prompts } from '../../../handlers/prompts/index';
import { resources } from '../../../handlers/resources/index';
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

const LANGS = ['go', 'javascript', 'java', 'julia', 'python', 'typescript'];

const p = prompts({
  prompts: [
    {
      name: 'review',
      arguments: [{ name: 'language', required: true }, { name: 'style' }],
      template: 'Review {{language}} code',
      complete: (arg, value, _ctx, context) =>
        arg === 'language'
          ? LANGS.filter((l) => l.startsWith(value))
          : [`${context.language ?? '?'}-idiomatic`],
    },
    { name: 'plain', template: 'x', arguments: [{ name: 'a' }] },
    { name: 'secret', template: 'x', arguments: [{ name: 'a' }], complete: () => ['leak'] },
  ],
  visible: (d, ctx) => d.name !== 'secret' || ctx.principal?.roles.includes('admin') === true,
});
const r = resources({
  templates: [
    {
      uriTemplate: 'repo://{owner}/{name}',
      name: 'repo',
      read: () => ({ text: '' }),
      complete: (v, value) =>
        v === 'owner'
          ? ['alice', 'albert', 'bob'].filter((o) => o.startsWith(value))
          : Array.from({ length: 150 }, (_, i) => `r${i}`),
    },
  ],
});
const c = completion({ prompts: p, resources: r });

describe('completion/complete', () => {
  test('prompt argument suggestions', async () => {
    const out = await c.complete(
      { ref: { type: 'ref/prompt', name: 'review' }, argument: { name: 'language', value: 'j' } },
      makeCtx(),
    );
    expect(out).toEqual({ completion: { values: ['javascript', 'java', 'julia'] } });
  });

  test('context arguments reach the completer', async () => {
    const out = await c.complete(
      {
        ref: { type: 'ref/prompt', name: 'review' },
        argument: { name: 'style', value: '' },
        context: { arguments: { language: 'go' } },
      },
      makeCtx(),
    );
    expect(out.completion.values).toEqual(['go-idiomatic']);
  });

  test('template variable suggestions, capped at 100 with total and hasMore', async () => {
    const owner = await c.complete(
      {
        ref: { type: 'ref/resource', uri: 'repo://{owner}/{name}' },
        argument: { name: 'owner', value: 'al' },
      },
      makeCtx(),
    );
    expect(owner).toEqual({ completion: { values: ['alice', 'albert'] } });
    const many = await c.complete(
      { ref: { type: 'ref/resource', uri: 'repo://{owner}/{name}' }, argument: { name: 'name', value: '' } },
      makeCtx(),
    );
    expect(many.completion.values).toHaveLength(100);
    expect(many.completion).toMatchObject({ total: 150, hasMore: true });
  });

  test('no completer, or an undeclared argument → empty values', async () => {
    expect(
      await c.complete(
        { ref: { type: 'ref/prompt', name: 'plain' }, argument: { name: 'a', value: '' } },
        makeCtx(),
      ),
    ).toEqual({ completion: { values: [] } });
    expect(
      await c.complete(
        { ref: { type: 'ref/prompt', name: 'review' }, argument: { name: 'nope', value: '' } },
        makeCtx(),
      ),
    ).toEqual({ completion: { values: [] } });
  });

  test('unknown or hidden references → -32602', async () => {
    for (const ref of [
      { type: 'ref/prompt', name: 'nope' },
      { type: 'ref/prompt', name: 'secret' },
      { type: 'ref/resource', uri: 'x://{y}' },
      { type: 'ref/other' },
    ]) {
      const e = await rejection(
        c.complete({ ref, argument: { name: 'a', value: '' } }, makeCtx({ principal: principal('bob') })),
      );
      expect(e.code).toBe(-32602);
    }
    const admin = makeCtx({ principal: principal('root', ['admin']) });
    expect(
      (
        await c.complete(
          { ref: { type: 'ref/prompt', name: 'secret' }, argument: { name: 'a', value: '' } },
          admin,
        )
      ).completion.values,
    ).toEqual(['leak']);
  });

  test.each([
    ['no ref', { argument: { name: 'a', value: '' } }],
    ['ref without type', { ref: {}, argument: { name: 'a', value: '' } }],
    ['no argument', { ref: { type: 'ref/prompt', name: 'review' } }],
    [
      'argument value not a string',
      { ref: { type: 'ref/prompt', name: 'review' }, argument: { name: 'a', value: 1 } },
    ],
  ])('%s → -32602', async (_l, params) => {
    expect((await rejection(c.complete(params, makeCtx()))).code).toBe(-32602);
  });

  test('options must be the handler objects of prompts()/resources()', () => {
    expect(() => completion({ prompts: {} as never })).toThrow(/"prompts"/);
    expect(() => completion({ resources: { list() {} } as never })).toThrow(/"resources"/);
  });

  test('a misspelt option is refused, naming the known one', () => {
    const build = () => completion({ prompt: prompts() } as never);
    expect(build).toThrow(TypeError);
    expect(build).toThrow(/completion: unknown option "prompt"; did you mean "prompts"\?/);
  });
});
