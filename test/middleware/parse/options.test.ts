/** parse(): every option is validated when the factory is called. */
import { parse } from '../../../middleware/parse/index';

describe('parse() options', () => {
  test('a misspelt option is refused, naming the factory, the option and the known name', () => {
    expect(() => parse({ limt: 1024 } as never)).toThrow(TypeError);
    expect(() => parse({ limt: 1024 } as never)).toThrow(
      /^parse: unknown option "limt"; did you mean "limit"\?/,
    );
    expect(() => parse({ maxdepth: 8 } as never)).toThrow(/did you mean "maxDepth"/);
    expect(() => parse({ loger: { error() {} } } as never)).toThrow(/did you mean "logger"/);
  });

  test('the options argument must be an object', () => {
    expect(() => parse(null as never)).toThrow(/^parse: options must be an object/);
    expect(() => parse('4mb' as never)).toThrow(TypeError);
  });

  test('a logger without error() is refused', () => {
    expect(() => parse({ logger: {} as never })).toThrow(/^parse: option "logger" must be a logger/);
  });

  test('valid options are accepted', () => {
    expect(() => parse()).not.toThrow();
    expect(() => parse({ limit: '1mb', maxDepth: 8, logger: { error() {} } })).not.toThrow();
  });
});
