/**
 * `otel()`: OpenTelemetry traces and metrics in the MCP semantic conventions. Mount it first (with `audit()` and
 * `metrics()`), so it sees every request, refusals included; it refuses nothing. Each request gets a SERVER span
 * named `{mcp.method.name} {target}`, its parent the caller's context from `params._meta` (the ambient HTTP span
 * linked), ended at the response's end with the outcome; `mcp.server.operation.duration` is recorded then.
 *
 * With no SDK registered (OpenTelemetry's no-op providers) nothing is put on `req.locals` and no listener is
 * added; the providers are looked up on each request, so an SDK registered later is used from then on.
 * `@opentelemetry/api` is an optional peer dependency: only this subpath imports it.
 * @see docs/middleware/otel.md
 */
import type { ServerResponse } from 'node:http';
import { context } from '@opentelemetry/api';
import { log } from '../../core/log.js';
import { mountOrderCheck } from '../../core/mount-order.js';
import { localsOf } from '../../core/respond.js';
import { TRACE } from '../../core/trace.js';
import type { Middleware, RequestLocals } from '../../core/types.js';
import { type OtelOptions, resolveOtelOptions } from './options.js';
import { histogramSource, tracerSource } from './providers.js';
import { OtelRequestTrace, type Shared } from './request-trace.js';

export type { OtelOptions } from './options.js';

/**
 * Trace each MCP request as a span and time it in `mcp.server.operation.duration`, per the OpenTelemetry MCP
 * semantic conventions. Register the OpenTelemetry SDK (or pass `tracerProvider` and `meterProvider`), then
 * mount `otel()` first.
 * @param options - {@link OtelOptions}
 * @see docs/middleware/otel.md
 * @example
 * ```ts
 * import { otel } from 'mcpware/otel';
 *
 * // Once the OpenTelemetry SDK is registered (NodeSDK, or providers set as the global ones), first in the
 * // stack (then audit(), metrics() and the rest):
 * app.use('/mcp', otel({ captureArguments: true }));
 * ```
 */
export function otel(options: OtelOptions = {}): Middleware {
  const config = resolveOtelOptions(options);
  const tracer = tracerSource(config.tracerProvider);
  const histogram = histogramSource(config.meterProvider);
  let warned = false;
  const shared: Shared = {
    config,
    warnNoRedactor() {
      if (warned) return;
      warned = true;
      log(
        config.logger,
        'warn',
        'otel: captureArguments or captureResults is on but no redact() runs for the request, so nothing is ' +
          'captured: mount redact() in the stack',
        { docs: 'docs/middleware/otel.md#privacy' },
      );
    },
  };

  // One pair of listeners shared by every request (they get the response as `this`); the request's trace is
  // kept in `req.locals` under this instance's own key. @see docs/performance.md#state-in-reqlocals
  const tracking = Symbol('mcpware.otel');
  type Marked = RequestLocals & { [tracking]?: OtelRequestTrace };
  const finish = (res: ServerResponse, finished: boolean): void => {
    const t = (res.req?.locals as Marked | undefined)?.[tracking];
    if (t === undefined) return;
    try {
      t.end(finished);
    } catch {
      // Telemetry must never affect the answer.
    }
  };
  function onFinish(this: ServerResponse): void {
    finish(this, true);
  }
  function onClose(this: ServerResponse): void {
    finish(this, this.writableFinished);
  }

  const late = mountOrderCheck('otel', config.logger);
  return function mcpOtel(req, res, next) {
    if (late(req, res)) return next();
    const t = tracer();
    const h = histogram();
    if (t === undefined && h === undefined) return next();
    const locals = localsOf(req) as Marked;
    // One trace per request: a second otel() (or this one twice) in the chain leaves the first's.
    if (locals[TRACE] !== undefined || locals[tracking] !== undefined) return next();
    const trace = new OtelRequestTrace(shared, req, t, h, performance.now(), context.active());
    locals[tracking] = trace;
    if (t !== undefined) locals[TRACE] = trace;
    res.on('finish', onFinish);
    res.on('close', onClose);
    next();
  };
}
