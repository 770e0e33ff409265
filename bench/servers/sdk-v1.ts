/**
 * Server 3: the official SDK v1 (`@modelcontextprotocol/sdk`), stateless Streamable HTTP as its docs and its
 * `simpleStatelessStreamableHttp` example recommend: `createMcpExpressApp()` (express.json + localhost Host
 * validation), and per request a fresh `McpServer` and `StreamableHTTPServerTransport` with
 * `sessionIdGenerator: undefined`, closed when the response closes. `enableJsonResponse: true` so the answer
 * is one JSON body, as every other server sends (the default would be an SSE stream).
 *
 * v1 speaks the 2025 revisions only: the modern workloads are not run against it.
 */
import { createMcpExpressApp } from '@modelcontextprotocol/sdk/server/express.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import http from 'node:http';
import * as z from 'zod/v4';
import { SERVER_INFO, TOOL_DESCRIPTION, TOOL_NAME } from '../workloads.js';
import { listen, serveStats } from './common.js';

function getServer(): McpServer {
  const server = new McpServer(SERVER_INFO);
  server.registerTool(
    TOOL_NAME,
    { description: TOOL_DESCRIPTION, inputSchema: { text: z.string() } },
    ({ text }) => ({ content: [{ type: 'text', text }] }),
  );
  return server;
}

const app = createMcpExpressApp();
app.get('/__bench/stats', (req, res) => void serveStats(req, res));
app.post('/mcp', async (req, res) => {
  const server = getServer();
  try {
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
  } catch {
    if (!res.headersSent) {
      res
        .status(500)
        .json({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal server error' }, id: null });
    }
  }
});

listen(http.createServer(app), 'sdk-v1');
