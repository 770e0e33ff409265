/** methodGuard(): every option is validated when the factory is called. */
import { methodGuard } from '../../../middleware/method-guard/index';

describe('methodGuard() options', () => {
  test('a misspelt option is refused, naming the factory, the option and the known name', () => {
    expect(() => methodGuard({ allowOption: true } as never)).toThrow(TypeError);
    expect(() => methodGuard({ allowOption: true } as never)).toThrow(
      /^methodGuard: unknown option "allowOption"; did you mean "allowOptions"\?/,
    );
  });

  test('values of the wrong kind are refused', () => {
    expect(() => methodGuard(null as never)).toThrow(/^methodGuard: options must be an object/);
    expect(() => methodGuard({ allowOptions: 'yes' as never })).toThrow(
      /^methodGuard: option "allowOptions" must be true or false, got "yes"/,
    );
  });

  test('valid options are accepted', () => {
    expect(() => methodGuard()).not.toThrow();
    expect(() => methodGuard({ allowOptions: true })).not.toThrow();
  });
});
