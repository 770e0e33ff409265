/** compose(): its options are validated when it is called. */
import { compose } from '../../../middleware/compose/index';
import type { Middleware } from '../../../core/types';

const passThrough: Middleware = (_req, _res, next) => next();

describe('compose() options', () => {
  test('a misspelt option is refused, naming the factory, the option and the known name', () => {
    expect(() => compose([passThrough], { loger: { error() {} } } as never)).toThrow(TypeError);
    expect(() => compose([passThrough], { loger: { error() {} } } as never)).toThrow(
      /^compose: unknown option "loger"; did you mean "logger"\?/,
    );
  });

  test('values of the wrong kind are refused', () => {
    expect(() => compose([passThrough], 'quiet' as never)).toThrow(/^compose: options must be an object/);
    expect(() => compose([passThrough], { logger: { warn() {} } as never })).toThrow(
      /^compose: option "logger" must be a logger/,
    );
  });

  test('valid options are accepted', () => {
    expect(() => compose([passThrough])).not.toThrow();
    expect(() => compose([passThrough], { logger: { error() {} } })).not.toThrow();
  });
});
