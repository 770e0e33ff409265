/** redact(): every option is validated when the factory is called. */
import { redact } from '../../../middleware/redact/index';

describe('redact() options', () => {
  test('a misspelt option is refused, naming the factory, the option and the known name', () => {
    expect(() => redact({ maskEmailDomian: true } as never)).toThrow(TypeError);
    expect(() => redact({ maskEmailDomian: true } as never)).toThrow(
      /^redact: unknown option "maskEmailDomian"; did you mean "maskEmailDomain"\?/,
    );
    expect(() => redact({ rule: ['email'] } as never)).toThrow(/did you mean "rules"/);
    expect(() => redact({ onfired: () => {} } as never)).toThrow(/did you mean "onFired"/);
  });

  test('values of the wrong kind are refused, naming the option', () => {
    expect(() => redact(null as never)).toThrow(/^redact: options must be an object/);
    expect(() => redact({ mode: 'hide' as never })).toThrow(/^redact: option "mode" must be one of/);
    expect(() => redact({ rules: ['ssn' as never] })).toThrow(/^redact: option "rules"/);
    expect(() => redact({ maxLength: 0 })).toThrow(/^redact: option "maxLength" must be a positive integer/);
    expect(() => redact({ onFired: 'alert' as never })).toThrow(
      /^redact: option "onFired" must be a function/,
    );
  });

  test('valid options are accepted, and a mode as an operator writes it', () => {
    expect(() => redact()).not.toThrow();
    expect(redact({ mode: ' Mask ' as never }).redactor.mode).toBe('mask');
    expect(redact({ mode: 'warn', rules: ['email'], maxDepth: 8, onFired: () => {} }).redactor.rules).toEqual(
      ['email'],
    );
  });
});
