/**
 * `metricsHandler(registry)`: serves a prom-client registry in the Prometheus text format for `GET /metrics`.
 * @see docs/middleware/metrics.md
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Registry } from 'prom-client';
import { badOption } from '../../core/options.js';
import { isRegistry } from './options.js';

/**
 * A node:http handler (also an Express route handler) serving `registry` in the Prometheus text format for
 * `GET` and `HEAD`; other methods get 405.
 * @see docs/middleware/metrics.md
 * @example
 * ```ts
 * import http from 'node:http';
 * import { Registry } from 'prom-client';
 * import { metricsHandler } from 'mcpware/metrics';
 *
 * const registry = new Registry();
 * http.createServer(metricsHandler(registry)).listen(9464, '127.0.0.1');
 * ```
 */
export function metricsHandler(
  registry: Registry,
): (req: IncomingMessage, res: ServerResponse, next?: (err?: unknown) => void) => void {
  if (!isRegistry(registry))
    throw badOption('metricsHandler', 'registry', registry, 'a prom-client Registry');
  return function mcpMetricsHandler(req, res) {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.statusCode = 405;
      res.setHeader('Allow', 'GET, HEAD');
      res.setHeader('Content-Type', 'text/plain; charset=utf-8');
      res.end('Method not allowed\n');
      return;
    }
    registry.metrics().then(
      (text) => {
        res.statusCode = 200;
        res.setHeader('Content-Type', registry.contentType);
        res.setHeader('Content-Length', Buffer.byteLength(text));
        res.setHeader('Cache-Control', 'no-store');
        res.end(req.method === 'HEAD' ? undefined : text);
      },
      () => {
        if (res.headersSent) return void res.end();
        res.statusCode = 500;
        res.setHeader('Content-Type', 'text/plain; charset=utf-8');
        res.end('# metrics collection failed\n');
      },
    );
  };
}
