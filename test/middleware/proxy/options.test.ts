/**
 * proxy()'s construction refusals: each a TypeError naming `proxy` and the option, with the options kit's code.
 */
import { proxy } from '../../../middleware/proxy/index';

const URL_OK = 'http://127.0.0.1:9/mcp';

function refusal(options: unknown): TypeError & { code?: string } {
  try {
    proxy(options as Parameters<typeof proxy>[0]);
  } catch (e) {
    return e as TypeError & { code?: string };
  }
  throw new Error('proxy() accepted the options');
}

test('an unknown option names the closest known one', () => {
  const e = refusal({ url: URL_OK, timeoutMS: 5 });
  expect(e).toBeInstanceOf(TypeError);
  expect(e.code).toBe('ERR_MCPWARE_UNKNOWN_OPTION');
  expect(e.message).toMatch(/^proxy: unknown option "timeoutMS"; did you mean "timeoutMs"\?/);
  expect(e.message).toContain('docs/middleware/proxy.md#options');
  expect(refusal({ url: URL_OK, header: {} }).message).toContain('did you mean "headers"');
});

test('url: required, http or https, no userinfo, no fragment', () => {
  expect(refusal({}).code).toBe('ERR_MCPWARE_MISSING_OPTION');
  for (const url of [
    'ftp://example.com/mcp',
    'not a url',
    'http://u:secret@example.com/mcp',
    'http://h/mcp#x',
    42,
  ]) {
    const e = refusal({ url });
    expect(e.code).toBe('ERR_MCPWARE_INVALID_OPTION');
    expect(e.message).toMatch(/^proxy: option "url"/);
    expect(e.message).not.toContain('secret');
  }
  expect(() => proxy({ url: new URL('https://example.com/mcp') })).not.toThrow();
});

test('headers: hop-by-hop, framing, Host and MCP headers refused; a value never repeated', () => {
  for (const name of [
    'Connection',
    'Transfer-Encoding',
    'Host',
    'Content-Length',
    'Content-Type',
    'Accept',
    'Mcp-Session-Id',
    'MCP-Protocol-Version',
    'Mcp-Method',
    'Mcp-Name',
    'Mcp-Param-City',
    'Last-Event-ID',
  ]) {
    const e = refusal({ url: URL_OK, headers: { [name]: 'x' } });
    expect(e.code).toBe('ERR_MCPWARE_INVALID_OPTION');
    expect(e.message).toContain(`may not set "${name}"`);
  }
  const bad = refusal({ url: URL_OK, headers: { Authorization: 'Bearer s3cret\r\nX-Evil: 1' } });
  expect(bad.message).toMatch(/headers\.Authorization/);
  expect(bad.message).not.toContain('s3cret');
  expect(refusal({ url: URL_OK, headers: { 'bad name': 'x' } }).code).toBe('ERR_MCPWARE_INVALID_OPTION');
  expect(refusal({ url: URL_OK, headers: { 'X-A': '1', 'x-a': '2' } }).code).toBe(
    'ERR_MCPWARE_INVALID_OPTION',
  );
  expect(refusal({ url: URL_OK, headers: ['x'] }).code).toBe('ERR_MCPWARE_INVALID_OPTION');
});

test("fetch must be a function; the engine's options are checked too", () => {
  expect(refusal({ url: URL_OK, fetch: 'yes' }).message).toMatch(/^proxy: option "fetch"/);
  expect(refusal({ url: URL_OK, timeoutMs: -1 }).message).toMatch(/^proxy: option "timeoutMs"/);
  expect(refusal({ url: URL_OK, body: { limitt: 1 } }).message).toContain('did you mean "limit"');
});

test('maxSockets: an integer from 1 to 65536', () => {
  for (const maxSockets of [0, -1, 1.5, '8', 65_537, Infinity]) {
    const e = refusal({ url: URL_OK, maxSockets });
    expect(e.code).toBe('ERR_MCPWARE_INVALID_OPTION');
    expect(e.message).toMatch(/^proxy: option "maxSockets"/);
  }
  expect(refusal({ url: URL_OK, maxSocket: 4 }).message).toContain('did you mean "maxSockets"');
  expect(() => proxy({ url: URL_OK, maxSockets: 1 })).not.toThrow();
});

test('a valid configuration builds a middleware with close()', async () => {
  const mw = proxy({ url: URL_OK, headers: { Authorization: 'Bearer t' }, timeoutMs: 1000, pageSize: 10 });
  expect(typeof mw).toBe('function');
  await mw.close();
});
