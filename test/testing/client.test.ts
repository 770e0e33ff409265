/**
 * McpTestClient's own options: a typo must not send a request other than the one the test means.
 */
import { McpTestClient } from '../../testing/index';

describe('McpTestClient options', () => {
  test('a misspelt constructor option is refused naming the right one', () => {
    expect(() => new McpTestClient('http://127.0.0.1:1', { autoParamHeader: false } as never)).toThrow(
      /McpTestClient: unknown option "autoParamHeader"; did you mean "autoParamHeaders"\?/,
    );
    expect(() => new McpTestClient('http://127.0.0.1:1', { era: 'modem' } as never)).toThrow(
      /option "era" must be one of "modern", "legacy"/,
    );
  });

  test('a misspelt per-call option is refused before anything is sent', async () => {
    const client = new McpTestClient('http://127.0.0.1:1');
    await expect(client.ping({ omitHeaders: 'Mcp-Method' } as never)).rejects.toThrow(
      /McpTestClient.request: unknown option "omitHeaders"; did you mean "omitHeader"\?/,
    );
  });
});
