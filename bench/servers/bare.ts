/**
 * Server 1, the physical limit: bare `node:http` reading the body, parsing it with JSON.parse and answering
 * the fixed JSON-RPC result for its method (the id echoed). No checks of any kind.
 */
import type { RequestListener } from 'node:http';
import { eraOf, fixedResult, listen, serveStats } from './common.js';

const answers = new Map<string, string>();
for (const era of ['legacy', 'modern'] as const) {
  for (const method of ['tools/list', 'tools/call']) {
    // Pre-encoded once: the answer is a constant apart from the id.
    answers.set(`${era} ${method}`, JSON.stringify(fixedResult(era, method)));
  }
}

/** The request listener (exported for the in-process harness, bench/inproc.ts). */
export const handler: RequestListener = (req, res) => {
  if (serveStats(req, res)) return;
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    let body: { id?: unknown; method?: unknown; params?: { _meta?: Record<string, unknown> } };
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof body;
    } catch {
      res.statusCode = 400;
      res.end();
      return;
    }
    const result = answers.get(`${eraOf(body)} ${String(body.method)}`);
    if (result === undefined) {
      res.statusCode = 404;
      res.end();
      return;
    }
    const text = `{"jsonrpc":"2.0","id":${JSON.stringify(body.id)},"result":${result}}`;
    res.statusCode = 200;
    res.setHeader('content-type', 'application/json');
    res.setHeader('content-length', Buffer.byteLength(text));
    res.end(text);
  });
};

if (require.main === module) listen(handler, 'bare');
