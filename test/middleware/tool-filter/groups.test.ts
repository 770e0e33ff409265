/**
 * toolFilter({ groups }): a tool named there is listed and callable only for a principal in one of its groups;
 * for everyone else it is exactly an unknown tool. Served over HTTP behind apiKeyAuth() and dispatch(), with a
 * ToolRegistry that has no `describe` (so the filter does the hiding). And the one warning when
 * no final handler of mcpware's applied the views.
 */
import { hashKey } from '../../../lib/apikeys';
import { apiKeyAuth } from '../../../middleware/api-key-auth/index';
import { dispatch } from '../../../middleware/dispatch/index';
import { parse } from '../../../middleware/parse/index';
import { toolFilter } from '../../../middleware/tool-filter/index';
import { createToolView, resolveToolFilter } from '../../../middleware/tool-filter/create-view';
import { viewsFor } from '../../../middleware/tool-filter/groups';
import { ToolRegistry, textResult } from '../../../handlers/tools/index';
import type { Logger, Middleware, Principal } from '../../../core/types';
import { ERAS, type Stack, stack } from '../../support/dispatch-harness';

const serverInfo = { name: 'groups', version: '1' };
const keys = [
  { userId: 'ann', hash: hashKey('ann-key'), groups: ['users'] },
  { userId: 'root', hash: hashKey('root-key'), groups: ['users', 'admin'] },
  { userId: 'ops', hash: hashKey('ops-key'), groups: ['ops'] },
];
const as = (key: string) => ({ Authorization: `Bearer ${key}` });

/** A registry without `describe`: every tool is visible to it, so the filter alone does the hiding. */
function tools(): ToolRegistry {
  return new ToolRegistry({
    tools: ['hello', 'admin_report', 'deploy'].map((name) => ({
      name,
      description: `${name} tool`,
      call: () => textResult(`ran ${name}`),
    })),
  });
}

function recorder(): Logger & { lines: string[] } {
  const lines: string[] = [];
  return { lines, error: (m) => void lines.push(`error ${m}`), warn: (m) => void lines.push(`warn ${m}`) };
}

describe('toolFilter groups over HTTP', () => {
  let s: Stack;
  const logger = recorder();
  beforeAll(async () => {
    s = await stack('node:http', [
      apiKeyAuth({ keys }),
      toolFilter({
        groups: { admin_report: ['admin'], deploy: ['admin', 'ops'] },
        override: { deploy: { name: 'ship' } },
        logger,
      }),
      dispatch({ handlers: { tools: tools() }, serverInfo }),
    ]);
  });
  afterAll(() => s.close());

  describe.each(ERAS)('%s era', (era) => {
    const names = async (key: string) =>
      (await s.client({ era, headers: as(key) }).listTools()).body.result.tools.map(
        (t: { name: string }) => t.name,
      );

    test('the list depends on the principal', async () => {
      expect(await names('ann-key')).toEqual(['hello']);
      expect(await names('root-key')).toEqual(['hello', 'admin_report', 'ship']);
      expect(await names('ops-key')).toEqual(['hello', 'ship']);
    });

    test('a hidden tool is refused exactly like an unknown one', async () => {
      const c = s.client({ era, headers: as('ann-key'), autoParamHeaders: false });
      const hidden = await c.callTool('admin_report');
      const unknown = await c.callTool('no_such_tool');
      expect(hidden.status).toBe(unknown.status);
      expect(hidden.body.error.code).toBe(-32602);
      expect(hidden.body.error.message).toBe('Unknown tool: "admin_report"');
      expect(hidden.body.error.data).toEqual({ tool: 'admin_report', available: ['hello'] });
      const same = (b: object) => JSON.stringify({ ...b, id: 0 }).replace(/admin_report|no_such_tool/g, 'x');
      expect(same(hidden.body)).toBe(same(unknown.body));
      expect((await c.callTool('ship')).body.error.code).toBe(-32602);
    });

    test('a member calls it; a renamed restricted tool is called by its new name only', async () => {
      const root = s.client({ era, headers: as('root-key'), autoParamHeaders: false });
      expect((await root.callTool('admin_report')).body.result.content[0].text).toBe('ran admin_report');
      const ops = s.client({ era, headers: as('ops-key'), autoParamHeaders: false });
      expect((await ops.callTool('ship')).body.result.content[0].text).toBe('ran deploy');
      expect((await ops.callTool('deploy')).body.error.code).toBe(-32602);
      expect((await ops.callTool('admin_report')).body.error.code).toBe(-32602);
    });
  });

  test('dispatch() applied the views: no warning', () => {
    expect(logger.lines).toEqual([]);
  });
});

describe('toolFilter groups without a principal', () => {
  test('a request no authenticator decided sees no restricted tool', async () => {
    const s = await stack('node:http', [
      toolFilter({ groups: { admin_report: ['admin'] } }),
      dispatch({ anonymous: true, handlers: { tools: tools() }, serverInfo }),
    ]);
    try {
      const list = await s.client().listTools();
      expect(list.body.result.tools.map((t: { name: string }) => t.name)).toEqual(['hello', 'deploy']);
      expect((await s.client().callTool('admin_report')).body.error.code).toBe(-32602);
    } finally {
      await s.close();
    }
  });
});

describe('the views of a principal', () => {
  const config = resolveToolFilter({ groups: { a: ['x'], b: ['x', 'y'], c: ['z'] } });
  const viewFor = viewsFor(config);
  const who = (groups: string[]): Principal => ({ userId: 'u', groups, roles: [], method: 'api-key' });
  const shown = (groups: string[] | undefined) =>
    ['a', 'b', 'c', 'd'].filter(
      (t) =>
        viewFor(groups && who(groups)).expose(t) !== undefined && viewFor(groups && who(groups)).resolve(t),
    );

  test('each rule opens its tool to its groups only', () => {
    expect(shown(undefined)).toEqual(['d']);
    expect(shown([])).toEqual(['d']);
    expect(shown(['x'])).toEqual(['a', 'b', 'd']);
    expect(shown(['y'])).toEqual(['b', 'd']);
    expect(shown(['y', 'z', 'other'])).toEqual(['b', 'c', 'd']);
    expect(shown(['constructor', '__proto__', 'toString'])).toEqual(['d']);
  });

  test('one view per combination of rules, built once', () => {
    expect(viewFor(who(['x']))).toBe(viewFor(who(['x', 'y'])));
    expect(viewFor(who(['users']))).toBe(viewFor(undefined));
    expect(viewFor(who(['z']))).not.toBe(viewFor(who(['x'])));
  });

  test('createToolView() is the view of a caller in no group', () => {
    const v = createToolView({ groups: { a: ['x'] }, allow: ['a', 'b'] });
    expect(v.expose('a')).toBeUndefined();
    expect(v.resolve('a')).toBeUndefined();
    expect(v.resolve('b')).toBe('b');
    expect(v.resolve('c')).toBeUndefined();
  });
});

describe('toolFilter groups options', () => {
  test.each([
    ['groups not an object', { groups: ['admin'] as never }, /option "groups"/],
    ['an empty group list', { groups: { admin_report: [] } }, /option "groups.admin_report"/],
    ['a group list that is a string', { groups: { admin_report: 'admin' as never } }, /groups.admin_report/],
    ['an empty group name', { groups: { admin_report: ['admin', ''] } }, /groups.admin_report\[1\]/],
    ['an empty tool name', { groups: { '': ['admin'] } }, /option "groups" has an empty tool name/],
    ['a logger without error()', { groups: { a: ['x'] }, logger: {} as never }, /option "logger"/],
  ])('%s → TypeError', (_what, opts, message) => {
    expect(() => toolFilter(opts)).toThrow(TypeError);
    expect(() => toolFilter(opts)).toThrow(message);
  });

  test('a misspelt option names the known one', () => {
    expect(() => toolFilter({ group: { a: ['x'] } } as never)).toThrow(
      /unknown option "group"; did you mean "groups"\?/,
    );
  });
});

describe('no final handler applied the views', () => {
  /** A final handler that is not mcpware's: it answers every POST itself and records nothing. */
  const ownAnswer: Middleware = (_req, res) => {
    res.setHeader('Content-Type', 'application/json');
    res.end(JSON.stringify({ jsonrpc: '2.0', id: 1, result: { tools: [{ name: 'admin_report' }] } }));
  };

  test('the first answered request logs one warning naming the fix; later requests nothing', async () => {
    const logger = recorder();
    const s = await stack('node:http', [
      parse(),
      toolFilter({ groups: { admin_report: ['admin'] }, logger }),
      ownAnswer,
    ]);
    try {
      const c = s.client({ autoParamHeaders: false });
      await c.notify('notifications/initialized');
      expect(logger.lines).toEqual([]); // a notification carries no tool: not judged
      await c.listTools();
      await c.listTools();
      await c.callTool('admin_report');
      expect(logger.lines).toHaveLength(1);
      expect(logger.lines[0]).toMatch(
        /^warn toolFilter\(\): the answer to tools\/list was written by a handler that does not apply the tool views/,
      );
      expect(logger.lines[0]).toMatch(/dispatch\(\), sdk\(\) or proxy\(\)/);
    } finally {
      await s.close();
    }
  });

  test('a refusal recorded downstream counts as applied', async () => {
    const logger = recorder();
    const s = await stack('node:http', [
      toolFilter({ groups: { admin_report: ['admin'] }, logger }),
      parse({ limit: 10 }),
    ]);
    try {
      expect((await s.client().listTools()).status).toBe(413);
      expect(logger.lines).toEqual([]);
    } finally {
      await s.close();
    }
  });
});
