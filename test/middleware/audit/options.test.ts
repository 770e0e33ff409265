/**
 * audit()'s options are all checked when it is called: a bad value names the option and what it must be, and a
 * misspelt name is refused naming the option it was probably meant to be.
 */
import { audit } from '../../../middleware/audit/index';

describe('audit() options', () => {
  test.each([
    [undefined, /audit: options must be an object/],
    [{}, /option "logger" must be a winston Logger/],
    [{ logger: console, level: '' }, /option "level"/],
    [
      { logger: { log() {} }, message: 'call %s' },
      /option "message" must be a non-empty string without printf tokens/,
    ],
    [{ logger: { log() {} }, redact: { rules: ['e-mail'] } }, /option "redact.rules"/],
    [{ logger: { log() {} }, arguments: 'who' }, /option "arguments" must be an array of argument names/],
    [{ logger: { log() {} }, requestId: 'x' }, /option "requestId" must be a function/],
    [{ logger: { log() {} }, loger: 1 }, /unknown option "loger"/],
  ])('bad options #%# throw', (opts, message) => {
    expect(() => audit(opts as never)).toThrow(TypeError);
    expect(() => audit(opts as never)).toThrow(message);
  });

  test.each([
    [{ logger: { log() {} }, maxBacklg: 5 }, 'maxBacklog'],
    [{ logger: { log() {} }, argument: ['who'] }, 'arguments'],
    [{ logger: { log() {} }, requestID: () => 'x' }, 'requestId'],
    [{ logger: { log() {} }, redact: { rule: ['email'] } }, 'rules'],
    [{ logger: { log() {} }, redact: { maskEmailDomains: true } }, 'maskEmailDomain'],
  ])('a misspelt option #%# is refused, naming the right one', (opts, meant) => {
    expect(() => audit(opts as never)).toThrow(TypeError);
    expect(() => audit(opts as never)).toThrow(`did you mean "${meant}"?`);
    expect(() => audit(opts as never)).toThrow(/^audit: unknown option/);
  });
});
