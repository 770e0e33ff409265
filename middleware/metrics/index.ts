/**
 * `metrics()`: Prometheus metrics for the MCP endpoint on prom-client, recorded when each response finishes
 * from what the other middlewares left on `req.locals`. Mount it first (next to `audit()`), so refusals are
 * counted too; it refuses nothing. `metricsHandler(registry)` serves the registry for `GET /metrics`.
 *
 * The registry is injected (or a new one is made per instance), never prom-client's global one; a second
 * instance on the same registry reuses the metrics. Every label is bounded: a tool name becomes a label only
 * when it is listed in `tools` or the call reached a registered tool (`req.locals.tool`), up to `maxTools`;
 * anything else is `other`. When the first answers show a final handler that records no outcome (not
 * mcpware's), it says so once (core/final-handler.ts).
 * @see docs/middleware/metrics.md
 */
import type { ServerResponse } from 'node:http';
import type { Registry } from 'prom-client';
import { finalHandlerCheck } from '../../core/final-handler.js';
import { localsOf } from '../../core/respond.js';
import { mountOrderCheck } from '../../core/mount-order.js';
import type { Middleware, RequestLocals } from '../../core/types.js';
import { createMetricSet } from './definitions.js';
import { type MetricsOptions, resolveMetricsOptions } from './options.js';
import type { LimitsHooks } from '../../core/limits-hooks.js';
import { createRecorder } from './record.js';

export { DEFAULT_DURATION_BUCKETS, TRANSPORT_REASONS } from './definitions.js';
export { metricsHandler } from './handler.js';
export type { MetricsOptions } from './options.js';

export type MetricsMiddleware = Middleware & {
  /** The registry holding this instance's metrics (serve it with `metricsHandler`). */
  readonly registry: Registry;
  /** Hooks for `limits({ hooks })`: denials by reason, in-flight gauges, charges, store errors. */
  limiterHooks(): Required<LimitsHooks>;
  /**
   * Report whether a shared store answers: `mcp_store_up{store}` is 1, or 0 while its fallback is in use (the
   * limits on per-process memory, a change feed's announcements reaching this process only). A store never
   * reported has no series. Other store names are ignored.
   */
  storeUp(store: 'limits' | 'changes', up: boolean): void;
};

/**
 * Count requests, refusals, tool calls, authentications, limits and redactions in a prom-client registry,
 * and time them. Mount it first (after `audit()`); serve the registry with {@link metricsHandler}.
 * @param options - {@link MetricsOptions}
 * @see docs/middleware/metrics.md
 * @example
 * ```ts
 * import { Registry } from 'prom-client';
 * import { metrics, metricsHandler } from 'mcpware/metrics';
 *
 * const registry = new Registry();
 * app.get('/metrics', metricsHandler(registry));
 * app.use('/mcp', metrics({ registry }));
 * ```
 */
export function metrics(options: MetricsOptions = {}): MetricsMiddleware {
  const config = resolveMetricsOptions(options);
  const { registry } = config;
  const recorder = createRecorder(createMetricSet(registry, config.prefix, config.buckets), config);

  // One pair of listeners shared by every request (they get the response as `this`); a request's start is kept
  // in `req.locals` under this instance's own key. A request whose `req.locals` was replaced before it ended is
  // not measured. @see docs/performance.md#state-in-reqlocals
  const tracking = Symbol('mcpware.metrics');
  const check = finalHandlerCheck({
    by: 'metrics',
    lacks: 'records neither req.locals.response nor req.locals.refusal',
    consequence: 'its outcome is unknown and is recorded as ok',
    docs: 'docs/middleware/metrics.md#in-front-of-another-final-handler',
  });
  type Marked = RequestLocals & { [tracking]?: { start: number; done: boolean } };
  const finish = (res: ServerResponse, finished: boolean): void => {
    const req = res.req;
    const t = (req?.locals as Marked | undefined)?.[tracking];
    if (t === undefined || t.done) return;
    t.done = true;
    if (finished && check.pending) check.finished(req, res);
    try {
      recorder.record(req, res, t.start, finished);
    } catch {
      // Metrics must never affect the answer.
    }
  };
  function onFinish(this: ServerResponse): void {
    finish(this, true);
  }
  function onClose(this: ServerResponse): void {
    finish(this, this.writableFinished);
  }

  const late = mountOrderCheck('metrics');
  const middleware: Middleware = function mcpMetrics(req, res, next) {
    if (late(req, res)) return next();
    const locals = localsOf(req) as Marked;
    // One record per request, even if the chain runs this instance twice.
    if (locals[tracking] === undefined) {
      locals[tracking] = { start: performance.now(), done: false };
      res.on('finish', onFinish);
      res.on('close', onClose);
    }
    next();
  };
  Object.defineProperty(middleware, 'registry', { value: registry, enumerable: true });
  Object.defineProperty(middleware, 'limiterHooks', { value: () => recorder.hooks, enumerable: true });
  Object.defineProperty(middleware, 'storeUp', { value: recorder.storeUp, enumerable: true });
  return middleware as MetricsMiddleware;
}
