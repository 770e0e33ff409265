/**
 * `npm run example:sdk-v1`: an application written with the official SDK v1 (`@modelcontextprotocol/sdk`
 * `McpServer`), guarded by mcpware without changing its tools: `mcpEndpoint({ backend: sdk(...) })` puts API
 * keys, limits, redaction, audit and metrics in front of it. The one change to the SDK side: the web-standard
 * transport (`WebStandardStreamableHTTPServerTransport`) in place of the node one, so that mcpware reads the
 * answer before the client does.
 *
 * Listens on `http://127.0.0.1:$PORT/mcp` (PORT default 8076); the key is `Bearer dev-key`.
 */
import http from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import express from 'express';
import { Registry } from 'prom-client';
import winston from 'winston';
import { z } from 'zod';
import { hashKey, mcpEndpoint, sdk } from '../index.js';

/** The application's tools, as its team wrote them for the SDK: nothing of mcpware in here. */
function shop(): McpServer {
  const server = new McpServer({ name: 'shop', version: '1.0.0' });
  server.registerTool(
    'customer',
    { description: 'One customer record', inputSchema: { id: z.string() } },
    async ({ id }) => ({
      content: [
        {
          type: 'text',
          text: JSON.stringify({ id, email: 'sam.carter@acme.com', card: '4111 1111 1111 1111' }),
        },
      ],
    }),
  );
  server.registerTool(
    'refund',
    {
      description: 'Refunds an order (fails: the payment provider is down)',
      inputSchema: { order: z.string() },
    },
    async ({ order }) => ({
      isError: true,
      content: [{ type: 'text', text: `refund of ${order} failed: provider unavailable` }],
    }),
  );
  return server;
}

/** The guarded application: Express, `/mcp` behind the stack, `/metrics` for Prometheus. */
export function createSdkV1App(options: { perUserRpm?: number; auditLogger?: winston.Logger } = {}) {
  const registry = new Registry();
  const guarded = sdk({
    // SDK v1 stateless: a server and a transport per request, closed when the client goes away.
    handler: async (request, extra) => {
      const server = shop();
      const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      await server.connect(transport);
      request.signal.addEventListener('abort', () => void server.close(), { once: true });
      return transport.handleRequest(request, extra);
    },
    timeoutMs: 30_000,
  });
  const endpoint = mcpEndpoint({
    auth: { apiKeys: { keys: [{ userId: 'dev', hash: hashKey('dev-key'), groups: ['staff'] }] } },
    backend: guarded,
    limits: { perUserRpm: options.perUserRpm ?? 60, perUserConcurrency: 4 },
    redact: { mode: 'mask' },
    audit: {
      logger:
        options.auditLogger ??
        winston.createLogger({
          format: winston.format.json(),
          transports: [new winston.transports.Console()],
        }),
    },
    registry,
  });
  const app = express();
  app.disable('x-powered-by');
  app.get('/metrics', endpoint.metricsHandler!);
  app.use('/mcp', endpoint);
  return { app, close: () => endpoint.close() };
}

if (require.main === module) {
  const port = Number(process.env.PORT || 8076);
  const { app } = createSdkV1App();
  http.createServer(app).listen(port, '127.0.0.1', () => {
    process.stdout.write(`SDK v1 app behind mcpware on http://127.0.0.1:${port}/mcp (key: dev-key)\n`);
  });
}
