/**
 * metrics()'s options are all checked when it is called: a bad value names the option and what it must be, and
 * a misspelt name is refused naming the option it was probably meant to be.
 */
import { Registry } from 'prom-client';
import { metrics, metricsHandler } from '../../../middleware/metrics/index';

describe('metrics() options', () => {
  test.each([
    [{ registry: {} }, /option "registry" must be a prom-client Registry/],
    [{ prefix: 'bad-prefix' }, /option "prefix"/],
    [{ maxTools: -1 }, /option "maxTools"/],
    [{ tools: ['ok', 'not ok'] }, /option "tools"/],
    [{ buckets: [1, 0.5] }, /option "buckets"/],
    [{ registy: new Registry() }, /unknown option "registy"/],
  ])('bad options #%# throw', (opts, message) => {
    expect(() => metrics(opts as never)).toThrow(TypeError);
    expect(() => metrics(opts as never)).toThrow(message);
  });

  test('metricsHandler needs a registry', () => {
    expect(() => metricsHandler({} as never)).toThrow(/metricsHandler: option "registry"/);
  });

  test.each([
    [{ maxTool: 3 }, 'maxTools'],
    [{ bucket: [1, 2] }, 'buckets'],
    [{ prefx: 'x_' }, 'prefix'],
    [{ tool: ['t1'] }, 'tools'],
  ])('a misspelt option #%# is refused, naming the right one', (opts, meant) => {
    expect(() => metrics(opts as never)).toThrow(TypeError);
    expect(() => metrics(opts as never)).toThrow(`did you mean "${meant}"?`);
    expect(() => metrics(opts as never)).toThrow(/^metrics: unknown option/);
  });

  test.each([null, 'x', [], new Registry()])(
    'options %p that are not a plain options object are refused',
    (opts) => {
      expect(() => metrics(opts as never)).toThrow(/^metrics: /);
    },
  );
});
