/**
 * Tool definitions are checked like options: a field the tool does not have is refused with the closest known
 * name, and a name outside the spec's `[A-Za-z0-9_.-]` is refused unless the registry allows any name.
 */
import { type Tool, ToolRegistry, ok } from '../../../handlers/tools/index';
import { dispatch } from '../../../middleware/dispatch/index';
import { PLATFORMS, type Stack, fakeAuth, stack } from '../../support/dispatch-harness';

const call = () => ok({});
const serverInfo = { name: 'defs', version: '1' };

describe('tool definitions', () => {
  test('a misspelt inputschema (plain JavaScript) is refused, naming inputSchema', () => {
    const tool = {
      name: 'hello',
      inputschema: { type: 'object', properties: { who: { type: 'string' } } },
      call,
    } as unknown as Tool;
    expect(() => new ToolRegistry({ tools: [tool] })).toThrow(
      /ToolRegistry: tool "hello": unknown field "inputschema"; did you mean "inputSchema"\?/,
    );
    expect(() => new ToolRegistry().register(tool)).toThrow(TypeError);
  });

  test('other typos name their closest field; a field far from any lists the known ones', () => {
    const typo = (extra: Record<string, unknown>) => () =>
      new ToolRegistry({ tools: [{ name: 't', call, ...extra } as unknown as Tool] });
    expect(typo({ outputschema: {} })).toThrow(/did you mean "outputSchema"/);
    expect(typo({ descripton: 'x' })).toThrow(/did you mean "description"/);
    expect(typo({ handler: () => ok({}) })).toThrow(/unknown field "handler"; known fields: name, title/);
  });

  test('a class instance may hold fields of its own beside the tool fields', () => {
    class Echo {
      readonly name = 'echo';
      readonly db = new Map<string, string>();
      call() {
        return ok({ size: this.db.size });
      }
    }
    expect(() => new ToolRegistry({ tools: [new Echo()] })).not.toThrow();
  });

  test.each([['my tool'], ['tools/call'], ['météo'], ['a:b'], ['tab\there']])(
    'the name %j is refused by default, with how to accept it',
    (name) => {
      expect(() => new ToolRegistry({ tools: [{ name, call }] })).toThrow(
        /holds characters outside A-Z a-z 0-9 _ - \..*allowAnyToolName: true/,
      );
    },
  );

  test('names of the spec characters pass, up to 128 of them, case-sensitive', async () => {
    const names = ['getUser', 'get_user', 'get-user', 'admin.tools.list', 'DATA_EXPORT_v2', 'x'.repeat(128)];
    const r = new ToolRegistry({
      tools: [...names.map((name) => ({ name, call })), { name: 'GETUSER', call }],
    });
    expect((await r.visibleTools({} as never)).length).toBe(names.length + 1);
  });

  test('allowAnyToolName accepts other characters, never an empty or overlong name', () => {
    expect(
      () => new ToolRegistry({ allowAnyToolName: true, tools: [{ name: 'météo', call }] }),
    ).not.toThrow();
    expect(() => new ToolRegistry({ allowAnyToolName: true, tools: [{ name: '', call }] })).toThrow(
      /1 to 128/,
    );
    expect(
      () => new ToolRegistry({ allowAnyToolName: true, tools: [{ name: 'x'.repeat(129), call }] }),
    ).toThrow(/1 to 128/);
    expect(() => new ToolRegistry({ allowAnyToolName: 'yes' as never })).toThrow(
      /option "allowAnyToolName" must be true or false/,
    );
  });
});

describe.each(PLATFORMS)('a tool named outside the spec characters, allowed, on %s', (platform) => {
  let s: Stack;
  beforeAll(async () => {
    const tools = new ToolRegistry({ allowAnyToolName: true, tools: [{ name: 'météo du jour', call }] });
    s = await stack(platform, [fakeAuth(), dispatch({ anonymous: true, handlers: { tools }, serverInfo })]);
  });
  afterAll(() => s.close());

  test('is listed and called by its name', async () => {
    const c = s.client({ era: 'legacy', headers: { 'x-user': 'u' } });
    const list = await c.listTools();
    expect(list.body.result.tools.map((t: { name: string }) => t.name)).toEqual(['météo du jour']);
    expect((await c.callTool('météo du jour', {})).body.result.structuredContent).toEqual({});
  });
});
