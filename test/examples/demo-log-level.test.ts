/**
 * The demo's MCP_LOG_LEVEL: its operational log's threshold, refused at start-up when unknown (no server
 * starts with a setting it cannot honour).
 */
import { createDemo } from '../../examples/demo';

test.each(['debug', 'WARN', 'silent', ' warn'])('MCP_LOG_LEVEL=%j stops the start', async (value) => {
  await expect(createDemo({ PORT: '0', MCP_LOG_LEVEL: value })).rejects.toThrow(
    /MCP_LOG_LEVEL must be one of error, warn, info, off/,
  );
});

test.each(['error', 'warn', 'info', 'off'])('MCP_LOG_LEVEL=%s is accepted', async (value) => {
  const demo = await createDemo({ PORT: '0', MCP_LOG_LEVEL: value, MCP_AUDIT_LOG: '/dev/null' });
  await demo.close();
});
