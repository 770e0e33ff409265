/**
 * Server 2: Express 5 with `express.json()` and one handler that builds the same JSON-RPC answer (the echo
 * text taken from the parsed arguments). What a hand-written JSON endpoint costs in Express.
 */
import express from 'express';
import http from 'node:http';
import { eraOf, fixedResult, listen, serveStats } from './common.js';

/** The app (exported for the in-process harness, bench/inproc.ts). */
export const app = express();
app.disable('x-powered-by');
app.get('/__bench/stats', (req, res) => void serveStats(req, res));
app.post('/mcp', express.json(), (req, res) => {
  const body = req.body as {
    id?: unknown;
    method?: string;
    params?: { arguments?: { text?: unknown }; _meta?: Record<string, unknown> };
  };
  const method = body.method;
  if (method !== 'tools/list' && method !== 'tools/call') {
    res
      .status(404)
      .json({ jsonrpc: '2.0', id: body.id, error: { code: -32601, message: 'Method not found' } });
    return;
  }
  const text = typeof body.params?.arguments?.text === 'string' ? body.params.arguments.text : '';
  res.json({ jsonrpc: '2.0', id: body.id, result: fixedResult(eraOf(body), method, text) });
});

if (require.main === module) listen(http.createServer(app), 'express');
