// jest setupFiles: the library's stderr logger (the "[mcpware] …" lines of every logger option left to its
// default) is silent in tests unless MCP_TEST_LOGS=1, so that a passing run prints the results and nothing else.
// A test that reads stderr itself (wrapping process.stderr.write) still sees every line: it wraps this filter.
// Jest's own output and console.* calls are untouched.
if (process.env.MCP_TEST_LOGS !== '1') {
  const write = process.stderr.write.bind(process.stderr);
  const PREFIX = '[mcpware] ';
  process.stderr.write = function quietStderr(chunk, ...rest) {
    const text =
      typeof chunk === 'string' ? chunk : Buffer.isBuffer(chunk) ? chunk.toString('utf8', 0, 10) : '';
    if (text.startsWith(PREFIX)) {
      const callback = rest.find((a) => typeof a === 'function');
      if (callback) process.nextTick(callback);
      return true;
    }
    return write(chunk, ...rest);
  };
}
