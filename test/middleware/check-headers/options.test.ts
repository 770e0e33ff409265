/** checkHeaders(): every option is validated when the factory is called; a typo must not switch a check off. */
import { checkHeaders } from '../../../middleware/check-headers/index';

describe('checkHeaders() options', () => {
  const lookup = () => undefined;

  test('a misspelt option is refused, naming the factory, the option and the known name', () => {
    expect(() => checkHeaders({ paramheaders: lookup } as never)).toThrow(TypeError);
    expect(() => checkHeaders({ paramheaders: lookup } as never)).toThrow(
      /^checkHeaders: unknown option "paramheaders"; did you mean "paramHeaders"\?/,
    );
    expect(() => checkHeaders({ modernVersion: [] } as never)).toThrow(/did you mean "modernVersions"/);
  });

  test('values of the wrong kind are refused', () => {
    expect(() => checkHeaders(null as never)).toThrow(/^checkHeaders: options must be an object/);
    expect(() => checkHeaders({ paramHeaders: {} as never })).toThrow(
      /^checkHeaders: option "paramHeaders" must be a function/,
    );
    expect(() => checkHeaders({ legacyVersions: ['old'] })).toThrow(/^checkHeaders: option "legacyVersions"/);
  });

  test('valid options are accepted', () => {
    expect(() => checkHeaders()).not.toThrow();
    expect(() => checkHeaders({ paramHeaders: lookup, modernVersions: ['2026-07-28'] })).not.toThrow();
  });
});
