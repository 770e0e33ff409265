/** rejectBatch(): every option is validated when the factory is called. */
import { rejectBatch } from '../../../middleware/reject-batch/index';

describe('rejectBatch() options', () => {
  test('a misspelt option is refused, naming the factory, the option and the known name', () => {
    expect(() => rejectBatch({ limits: 1024 } as never)).toThrow(TypeError);
    expect(() => rejectBatch({ limits: 1024 } as never)).toThrow(
      /^rejectBatch: unknown option "limits"; did you mean "limit"\?/,
    );
    expect(() => rejectBatch({ maxDept: 8 } as never)).toThrow(/did you mean "maxDepth"/);
  });

  test('values of the wrong kind are refused', () => {
    expect(() => rejectBatch(null as never)).toThrow(/^rejectBatch: options must be an object/);
    expect(() => rejectBatch({ limit: 'lots' })).toThrow(/^rejectBatch: option "limit"/);
    expect(() => rejectBatch({ maxDepth: 1 })).toThrow(/^rejectBatch: option "maxDepth"/);
    expect(() => rejectBatch({ logger: console.error as never })).toThrow(/option "logger"/);
  });

  test('valid options are accepted', () => {
    expect(() => rejectBatch()).not.toThrow();
    expect(() => rejectBatch({ limit: 2048, maxDepth: 4, logger: { error() {} } })).not.toThrow();
  });
});
