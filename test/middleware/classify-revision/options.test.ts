/** classifyRevision(): every option is validated when the factory is called. */
import { classifyRevision } from '../../../middleware/classify-revision/index';

describe('classifyRevision() options', () => {
  test('a misspelt option is refused, naming the factory, the option and the known name', () => {
    expect(() => classifyRevision({ modernVersion: ['2026-07-28'] } as never)).toThrow(TypeError);
    expect(() => classifyRevision({ modernVersion: ['2026-07-28'] } as never)).toThrow(
      /^classifyRevision: unknown option "modernVersion"; did you mean "modernVersions"\?/,
    );
    expect(() => classifyRevision({ legacyversions: [] } as never)).toThrow(/did you mean "legacyVersions"/);
  });

  test('values of the wrong kind are refused', () => {
    expect(() => classifyRevision(null as never)).toThrow(/^classifyRevision: options must be an object/);
    expect(() => classifyRevision({ legacyVersions: '2025-11-25' as never })).toThrow(
      /^classifyRevision: option "legacyVersions"/,
    );
    expect(() => classifyRevision({ logger: {} as never })).toThrow(/option "logger"/);
  });

  test('valid options are accepted', () => {
    expect(() => classifyRevision()).not.toThrow();
    expect(() =>
      classifyRevision({
        modernVersions: ['2026-07-28'],
        legacyVersions: ['2025-11-25'],
        logger: { error() {} },
      }),
    ).not.toThrow();
  });
});
