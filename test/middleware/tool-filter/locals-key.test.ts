/**
 * toolFilter() keeps its views under the registered symbol `mcpware.toolViews`, not a string key: an application
 * that uses `req.locals.toolViews` for its own data (string keys are the application's) neither loses the filter
 * nor widens it.
 */
import type { Middleware } from '../../../core/types';
import { TOOL_VIEWS } from '../../../core/tool-views';
import { dispatch } from '../../../middleware/dispatch/index';
import { toolFilter } from '../../../middleware/tool-filter/index';
import { ToolRegistry, textResult } from '../../../handlers/tools/index';
import { ERAS, PLATFORMS, type Stack, stack } from '../../support/dispatch-harness';

const serverInfo = { name: 'filter-key', version: '1' };

/** The application's own middleware: it keeps a list of its own under `req.locals.toolViews`. */
const appLocals: Middleware = (req, _res, next) => {
  (req.locals ??= {}).toolViews = ['dashboard', 'settings'];
  next();
};

function registry(): ToolRegistry {
  return new ToolRegistry({
    tools: [
      { name: 'Foo', description: 'Foo tool', call: () => textResult('ran Foo') },
      { name: 'Bar', description: 'Bar tool', call: () => textResult('ran Bar') },
    ],
  });
}

const plainTools = {
  list: () => ({
    tools: [
      { name: 'Foo', inputSchema: { type: 'object' } },
      { name: 'Bar', inputSchema: { type: 'object' } },
    ],
  }),
  call: (p: Record<string, unknown>) => textResult(`ran ${String(p.name)}`),
};

test('the views are under Symbol.for("mcpware.toolViews")', () => {
  expect(TOOL_VIEWS).toBe(Symbol.for('mcpware.toolViews'));
});

describe.each(PLATFORMS)('on %s', (platform) => {
  describe.each([
    ['ToolRegistry', registry],
    ['plain handler object', () => plainTools],
  ] as const)('with a %s', (_kind, makeTools) => {
    let s: Stack;
    beforeAll(async () => {
      s = await stack(platform, [
        toolFilter({ allow: ['Foo'] }),
        appLocals,
        dispatch({ anonymous: true, handlers: { tools: makeTools() }, serverInfo }),
      ]);
    });
    afterAll(() => s.close());

    test.each(ERAS)(
      '%s era: the filter holds although the application wrote req.locals.toolViews',
      async (era) => {
        const list = await s.client({ era }).listTools();
        expect(list.status).toBe(200);
        expect((list.body.result.tools as { name: string }[]).map((t) => t.name)).toEqual(['Foo']);
        const call = await s.client({ era, autoParamHeaders: false }).callTool('Bar');
        expect(call.body.error.code).toBe(-32602);
      },
    );
  });

  test('an application list under req.locals.toolViews is not taken for a view', async () => {
    const s = await stack(platform, [
      appLocals,
      dispatch({ anonymous: true, handlers: { tools: registry() }, serverInfo }),
    ]);
    try {
      const list = await s.client().listTools();
      expect(list.status).toBe(200);
      expect((list.body.result.tools as { name: string }[]).map((t) => t.name)).toEqual(['Foo', 'Bar']);
    } finally {
      await s.close();
    }
  });
});
