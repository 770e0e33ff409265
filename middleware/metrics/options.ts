/**
 * `metrics()`'s options: the public type and their validation, all at construction.
 * @see docs/middleware/metrics.md
 */
import { Registry } from 'prom-client';
import { badOption, intOption, knownKeys, optionsObject, stringOption } from '../../core/options.js';
import { DEFAULT_DURATION_BUCKETS } from './definitions.js';

export interface MetricsOptions {
  /** Where metrics are registered. Default: a new Registry for this instance (never the global one). */
  registry?: Registry;
  /** Metric name prefix. Default `mcp_`. */
  prefix?: string;
  /** Tool names to pre-create series for (they always get their own label). */
  tools?: readonly string[];
  /** Distinct tool label values at most (beyond: `other`). Default 100. */
  maxTools?: number;
  /** Request-duration histogram buckets, in seconds. */
  buckets?: readonly number[];
}

/** The validated options of one metrics instance. */
export interface MetricsConfig {
  readonly registry: Registry;
  readonly prefix: string;
  readonly tools: readonly string[];
  readonly maxTools: number;
  readonly buckets: readonly number[];
}

const FACTORY = 'metrics';
const KNOWN: readonly (keyof MetricsOptions)[] = ['registry', 'prefix', 'tools', 'maxTools', 'buckets'];
const DEFAULT_MAX_TOOLS = 100;
/** MCP tool names: 1–128 of [A-Za-z0-9_.-] (plus `/`, which some servers use for namespaces). */
export const TOOL_NAME = /^[A-Za-z0-9_./-]{1,128}$/;
const PROMETHEUS_PREFIX = /^(?:[a-zA-Z_:][a-zA-Z0-9_:]{0,63})?$/;

/** Whether `r` looks like a prom-client Registry (what `metrics()` and `metricsHandler()` need of one). */
export function isRegistry(r: unknown): r is Registry {
  return (
    r !== null &&
    typeof r === 'object' &&
    typeof (r as { metrics?: unknown }).metrics === 'function' &&
    typeof (r as { getSingleMetric?: unknown }).getSingleMetric === 'function' &&
    typeof (r as { registerMetric?: unknown }).registerMetric === 'function'
  );
}

/** Validates every option of `metrics()`; throws a TypeError naming the option on the first bad one. */
export function resolveMetricsOptions(options: MetricsOptions | undefined): MetricsConfig {
  const o = optionsObject(FACTORY, options);
  knownKeys(FACTORY, o, KNOWN);
  if (o.registry !== undefined && !isRegistry(o.registry)) {
    throw badOption(FACTORY, 'registry', o.registry, 'a prom-client Registry');
  }
  return Object.freeze({
    registry: o.registry ?? new Registry(),
    prefix: prefixOf(o.prefix),
    maxTools: intOption(FACTORY, 'maxTools', o.maxTools, DEFAULT_MAX_TOOLS, 0),
    tools: toolsOf(o.tools),
    buckets: bucketsOf(o.buckets),
  });
}

function prefixOf(value: unknown): string {
  const prefix = stringOption(FACTORY, 'prefix', value, 'mcp_', true);
  if (!PROMETHEUS_PREFIX.test(prefix)) {
    throw badOption(
      FACTORY,
      'prefix',
      prefix,
      'a Prometheus name prefix such as "mcp_" (letters, digits, _ and :)',
    );
  }
  return prefix;
}

function toolsOf(value: unknown): readonly string[] {
  const tools = value ?? [];
  if (!Array.isArray(tools) || tools.some((t) => typeof t !== 'string' || !TOOL_NAME.test(t))) {
    throw badOption(FACTORY, 'tools', tools, 'an array of tool names (1–128 of A-Z a-z 0-9 _ . - /)');
  }
  return Object.freeze([...(tools as string[])]);
}

function bucketsOf(value: unknown): readonly number[] {
  const buckets = value ?? DEFAULT_DURATION_BUCKETS;
  const increasing =
    Array.isArray(buckets) &&
    buckets.length > 0 &&
    buckets.every(
      (b: unknown, i) =>
        typeof b === 'number' && Number.isFinite(b) && b > 0 && (i === 0 || b > (buckets[i - 1] as number)),
    );
  if (!increasing) {
    throw badOption(FACTORY, 'buckets', buckets, 'a non-empty increasing array of positive numbers');
  }
  return Object.freeze([...(buckets as number[])]);
}
