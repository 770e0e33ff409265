/**
 * A child-process server for the listen-stream memory test: mcpEndpoint() (API key auth, redaction, no limits)
 * with a ToolRegistry (and so a tools change feed), no per-caller cap on listen streams. Prints one line once it
 * listens on PORT.
 */
import http from 'node:http';
import { hashKey } from '../../middleware/api-key-auth/index.js';
import { mcpEndpoint } from '../../middleware/endpoint/index.js';
import { ToolRegistry, ok } from '../../handlers/tools/index.js';

const quiet = { error() {}, warn() {} };
const endpoint = mcpEndpoint({
  auth: { apiKeys: [{ userId: 'mem', hash: hashKey('listen-memory-key'), groups: ['users'] }] },
  handlers: {
    tools: new ToolRegistry({
      logger: quiet,
      tools: [{ name: 'noop', inputSchema: { type: 'object' }, call: () => ok({ done: true }) }],
    }),
  },
  dispatch: {
    serverInfo: { name: 'listen-memory', version: '1' },
    streams: { maxListenStreamsPerPrincipal: 0, keepAliveMs: 0 },
  },
  limits: false,
  logger: quiet,
});
const server = http.createServer((req, res) =>
  endpoint(req, res, () => {
    res.statusCode = 404;
    res.end();
  }),
);
server.listen(Number(process.env.PORT), '127.0.0.1', () => {
  process.stdout.write(`listening on ${process.env.PORT}\n`);
});
