/**
 * The construction refusals the kit's helpers do not phrase (a definition, a pair of options, the wrong first
 * argument) still carry an option error code and end with the docs page and anchor of the factory's table.
 */
import { OPTION_ERRORS, optionDocs } from '../../core/options';
import { ToolRegistry } from '../../handlers/tools/index';
import { apiKeyAuth } from '../../middleware/api-key-auth/index';
import { audit } from '../../middleware/audit/index';
import { authenticate } from '../../middleware/auth/index';
import { compose } from '../../middleware/compose/index';
import { dispatch } from '../../middleware/dispatch/index';
import { limits } from '../../middleware/limits/index';
import { oidcAuth } from '../../middleware/oidc-auth/index';
import { parse } from '../../middleware/parse/index';
import { toolFilter } from '../../middleware/tool-filter/index';

const serverInfo = { name: 't', version: '1' };
const { invalid, missing, unknown } = OPTION_ERRORS;
const call = async () => ({ content: [] });

// [what, docs key, code, the call]
const rows: [string, string, string, () => unknown][] = [
  ['parse limit', 'parse', invalid, () => parse({ limit: 'lots' })],
  ['parse maxDepth', 'parse', invalid, () => parse({ maxDepth: 1 })],
  [
    'toolFilter override key',
    'toolFilter',
    unknown,
    () => toolFilter({ override: { a: { nam: 'b' } } } as never),
  ],
  ['toolFilter empty override', 'toolFilter', invalid, () => toolFilter({ override: { a: {} } })],
  ['toolFilter nothing set', 'toolFilter', missing, () => toolFilter({})],
  ['apiKeyAuth keys missing', 'apiKeyAuth', missing, () => apiKeyAuth({} as never)],
  ['apiKeyAuth keys empty', 'apiKeyAuth', invalid, () => apiKeyAuth({ keys: [] })],
  [
    'dispatch half a capability',
    'dispatch',
    invalid,
    () =>
      dispatch({
        anonymous: true,
        handlers: { tools: { list: () => ({ tools: [] }) } } as never,
        serverInfo,
      }),
  ],
  [
    'dispatch undeclared members',
    'dispatch',
    invalid,
    () => dispatch({ anonymous: true, handlers: {}, serverInfo, capabilities: { tools: {} } }),
  ],
  [
    'ToolRegistry unknown field',
    'ToolRegistry.register',
    unknown,
    () => new ToolRegistry({ tools: [{ name: 'a', call, inputschema: {} } as never] }),
  ],
  [
    'ToolRegistry missing call',
    'ToolRegistry.register',
    missing,
    () => new ToolRegistry({ tools: [{ name: 'a' } as never] }),
  ],
  [
    'ToolRegistry bad name',
    'ToolRegistry.register',
    invalid,
    () => new ToolRegistry({ tools: [{ name: 'a b', call }] }),
  ],
  [
    'ToolRegistry duplicate',
    'ToolRegistry.register',
    invalid,
    () =>
      new ToolRegistry({
        tools: [
          { name: 'a', call },
          { name: 'a', call },
        ],
      }),
  ],
  ['limits used bare', 'limits', invalid, () => limits({ on() {}, method: 'GET' } as never)],
  ['authenticate first argument', 'authenticate', invalid, () => authenticate([] as never)],
  ['compose first argument', 'compose', invalid, () => compose([1] as never)],
  ['audit no options', 'audit', missing, () => audit(undefined as never)],
  ['oidcAuth no audience', 'oidcAuth', missing, () => oidcAuth({ issuer: 'http://127.0.0.1:1' } as never)],
];

test.each(rows)('%s', (_what, factory, code, make) => {
  let thrown: unknown;
  try {
    make();
  } catch (e) {
    thrown = e;
  }
  expect(thrown).toBeInstanceOf(TypeError);
  expect((thrown as { code?: unknown }).code).toBe(code);
  expect((thrown as Error).message.endsWith(` (see ${optionDocs(factory)!})`)).toBe(true);
});
