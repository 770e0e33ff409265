/**
 * `otel()`'s options: the public type and their validation, all at construction.
 * @see docs/middleware/otel.md
 */
import type { MeterProvider, TracerProvider } from '@opentelemetry/api';
import { badOption, boolOption, knownKeys, loggerOption, optionsObject } from '../../core/options.js';
import { stderrLogger } from '../../core/respond.js';
import type { Logger } from '../../core/types.js';

export interface OtelOptions {
  /**
   * Where the request spans are made. Default: the global tracer provider of `@opentelemetry/api`, looked up on
   * each request, so an SDK registered after `otel()` was made is used from then on.
   */
  tracerProvider?: TracerProvider;
  /** Where `mcp.server.operation.duration` is recorded. Default: the global meter provider, looked up likewise. */
  meterProvider?: MeterProvider;
  /**
   * Put a `tools/call`'s arguments on its span as `gen_ai.tool.call.arguments` (JSON, clipped to 4096
   * characters), redacted with the request's `redact()` rules. Without `redact()` in the stack nothing is
   * captured and a warning is logged once. Default false.
   */
  captureArguments?: boolean;
  /**
   * Put a `tools/call`'s successful result on its span as `gen_ai.tool.call.result` (JSON, clipped), as it was
   * answered after `redact()` (in `warn` mode, masked all the same). Without `redact()` in the stack nothing is
   * captured and a warning is logged once.
   * Default false.
   */
  captureResults?: boolean;
  /** Name `resources/*` spans `{method} {uri}` (the URI clipped to 128 characters; high cardinality). Default false. */
  resourceUriInSpanName?: boolean;
  /** Where the once-only warnings go. Default: stderr. */
  logger?: Logger;
}

/** The validated options of one `otel()` instance. */
export interface OtelConfig {
  readonly tracerProvider: TracerProvider | undefined;
  readonly meterProvider: MeterProvider | undefined;
  readonly captureArguments: boolean;
  readonly captureResults: boolean;
  readonly resourceUriInSpanName: boolean;
  readonly logger: Logger;
}

const FACTORY = 'otel';
const KNOWN: readonly (keyof OtelOptions)[] = [
  'tracerProvider',
  'meterProvider',
  'captureArguments',
  'captureResults',
  'resourceUriInSpanName',
  'logger',
];

/** An object with the named method: what a provider option must be. */
function hasMethod(value: unknown, method: string): boolean {
  return (
    value !== null &&
    typeof value === 'object' &&
    typeof (value as Record<string, unknown>)[method] === 'function'
  );
}

/** Validates every option of `otel()`; throws a TypeError naming the option on the first bad one. */
export function resolveOtelOptions(options: OtelOptions | undefined): OtelConfig {
  const o = optionsObject(FACTORY, options);
  knownKeys(FACTORY, o, KNOWN);
  if (o.tracerProvider !== undefined && !hasMethod(o.tracerProvider, 'getTracer'))
    throw badOption(FACTORY, 'tracerProvider', o.tracerProvider, 'a TracerProvider (with getTracer())');
  if (o.meterProvider !== undefined && !hasMethod(o.meterProvider, 'getMeter'))
    throw badOption(FACTORY, 'meterProvider', o.meterProvider, 'a MeterProvider (with getMeter())');
  return Object.freeze({
    tracerProvider: o.tracerProvider,
    meterProvider: o.meterProvider,
    captureArguments: boolOption(FACTORY, 'captureArguments', o.captureArguments, false),
    captureResults: boolOption(FACTORY, 'captureResults', o.captureResults, false),
    resourceUriInSpanName: boolOption(FACTORY, 'resourceUriInSpanName', o.resourceUriInSpanName, false),
    logger: loggerOption(FACTORY, o.logger, stderrLogger),
  });
}
