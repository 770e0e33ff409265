/**
 * The metrics `metrics()` registers: one table of names, help texts, labels and buckets, and the bounded label
 * values each label may take.
 * @see docs/middleware/metrics.md
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { RefusalReason } from '../../lib/errors.js';
import { type Tally, newTally, tallyOf } from './tally.js';
import { RECEIVED_METHODS } from '../../lib/routing.js';

/** Refusals of the transport and protocol layers (`mcp_transport_refusals_total{reason}`). */
export const TRANSPORT_REASONS: readonly RefusalReason[] = Object.freeze([
  'body_too_large',
  'unsupported_media_type',
  'unsupported_encoding',
  'body_unreadable',
  'parse_error',
  'batch',
  'invalid_request',
  'invalid_id',
  'duplicate_member',
  'forbidden_member',
  'too_deep',
  'method_too_long',
  'response_not_accepted',
  'method_not_allowed',
  'origin_not_allowed',
  'host_not_allowed',
  'host_duplicated',
  'host_mismatch',
  'missing_envelope',
  'invalid_envelope',
  'protocol_version_mismatch',
  'unsupported_protocol_version',
  'unsupported_legacy_version',
  'missing_header',
  'header_mismatch',
  'header_malformed',
  'missing_client_capability',
  'method_not_found',
] as const);

/** The values each bounded label may take (the tool label is bounded by `maxTools` instead). */
export const LABEL_VALUES = Object.freeze({
  era: Object.freeze(['modern', 'legacy', 'unknown'] as const),
  auth: Object.freeze(['ok', 'missing', 'invalid', 'expired', 'forbidden', 'unavailable'] as const),
  /** mcpware's authenticators; any other authenticator's method is `other` (issuers are never labels). */
  authMethod: Object.freeze(['api-key', 'oidc', 'other'] as const),
  limit: Object.freeze(['rpm', 'user_concurrent', 'global_concurrent', 'cost_budget'] as const),
  /** `task`: the call was answered with a task (its end is counted in `tasks_total`). */
  toolOutcome: Object.freeze(['ok', 'tool_error', 'error', 'refused', 'task'] as const),
  /** How a task ended (core/types.ts TaskEnd). */
  taskOutcome: Object.freeze(['ok', 'tool_error', 'error', 'cancelled', 'lost'] as const),
  inflightScope: Object.freeze(['user', 'global'] as const),
  chargeSource: Object.freeze(['charged', 'wall_clock', 'unlabelled'] as const),
  storeOutcome: Object.freeze(['insurance', 'refused', 'dropped'] as const),
  /** The shared stores an application reports on: the limits' Redis store, a Redis change feed. */
  store: Object.freeze(['limits', 'changes'] as const),
});

/** Methods that get their own `method` label on the duration histogram; anything else is `other`. */
export const KNOWN_METHODS: ReadonlySet<string> = new Set(RECEIVED_METHODS);

/** Default duration buckets, in seconds (5 ms … 30 s). */
export const DEFAULT_DURATION_BUCKETS = Object.freeze([
  0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30,
]);

interface Definition {
  readonly kind: 'counter' | 'gauge' | 'histogram';
  /** The name after the prefix. */
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly string[];
  /** Histograms: the buckets, in seconds (the duration histogram takes the `buckets` option instead). */
  readonly buckets?: readonly number[];
}

/** Every metric of one instance. */
export const DEFINITIONS = {
  requests: {
    kind: 'counter',
    name: 'requests_total',
    help: 'Requests to the MCP endpoint by protocol era (unknown: refused before classification)',
    labelNames: ['era'],
  },
  transportRefusals: {
    kind: 'counter',
    name: 'transport_refusals_total',
    help: 'Requests refused by the transport and protocol checks, by reason',
    labelNames: ['reason'],
  },
  toolCalls: {
    kind: 'counter',
    name: 'tool_calls_total',
    help: 'tools/call requests by tool and outcome (ok, tool_error, error, refused, task)',
    labelNames: ['tool', 'outcome'],
  },
  tasks: {
    kind: 'counter',
    name: 'tasks_total',
    help: 'Tasks ended, by tool and outcome (ok, tool_error, error, cancelled, lost)',
    labelNames: ['tool', 'outcome'],
  },
  tasksRunning: {
    kind: 'gauge',
    name: 'tasks_running',
    help: 'Tasks made by requests of this process that have not ended, by tool',
    labelNames: ['tool'],
  },
  authOutcomes: {
    kind: 'counter',
    name: 'auth_total',
    help: 'Authentication outcomes',
    labelNames: ['outcome'],
  },
  authenticated: {
    kind: 'counter',
    name: 'authenticated_total',
    help: 'Requests with a principal, by where it came from (api-key, oidc, other)',
    labelNames: ['auth_method'],
  },
  denied: {
    kind: 'counter',
    name: 'ratelimit_denied_total',
    help: 'Requests refused by a limit, by limit',
    labelNames: ['reason'],
  },
  inflight: {
    kind: 'gauge',
    name: 'ratelimit_inflight',
    help: 'Requests holding a concurrency slot in this process, by scope',
    labelNames: ['scope'],
  },
  charge: {
    kind: 'histogram',
    name: 'ratelimit_charge_seconds',
    help: 'Work charged against the budget per request, in seconds, by source (charged or wall_clock)',
    labelNames: ['source'],
    buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60],
  },
  storeErrors: {
    kind: 'counter',
    name: 'ratelimit_store_errors_total',
    help: 'Limit store failures by what happened to the request (insurance, refused, dropped)',
    labelNames: ['outcome'],
  },
  storeUp: {
    kind: 'gauge',
    name: 'store_up',
    help: 'Whether a shared store answers (1) or its fallback is in use (0), by store (limits, changes)',
    labelNames: ['store'],
  },
  redactions: {
    kind: 'counter',
    name: 'redactions_total',
    help: 'Matches of redaction rules in outgoing results and notifications (masked or, in warn mode, counted)',
    labelNames: ['rule'],
  },
  duration: {
    kind: 'histogram',
    name: 'request_duration_seconds',
    help: 'Time from arrival to the last byte of the answer, by JSON-RPC method and outcome (ok, error, refused)',
    labelNames: ['method', 'outcome'],
  },
} as const satisfies Record<string, Definition>;

interface KindOf {
  counter: Counter<string>;
  gauge: Gauge<string>;
  histogram: Histogram<string>;
}
const KINDS = { counter: Counter, gauge: Gauge, histogram: Histogram } as const;

/** The metric objects of one instance, by the keys of {@link DEFINITIONS}. */
export type MetricSet = { readonly [K in keyof typeof DEFINITIONS]: KindOf[(typeof DEFINITIONS)[K]['kind']] };

type Tallied = {
  [K in keyof typeof DEFINITIONS]: (typeof DEFINITIONS)[K]['kind'] extends 'histogram' ? never : K;
}[keyof typeof DEFINITIONS];

/** The tally of each counter and gauge of one instance (histograms are observed directly). */
export type TallySet = { readonly [K in Tallied]: Tally };

/**
 * Gets each metric of {@link DEFINITIONS} from `registry` (when another instance or the application made it
 * with the same type and labels) or creates it there, and the tallies its counters and gauges are counted in.
 */
export function createMetricSet(
  registry: Registry,
  prefix: string,
  durationBuckets: readonly number[],
): { metrics: MetricSet; tallies: TallySet } {
  const metrics: Record<string, unknown> = {};
  const tallies: Record<string, Tally> = {};
  for (const [key, d] of Object.entries(DEFINITIONS) as [keyof MetricSet, Definition][]) {
    const buckets = key === 'duration' ? durationBuckets : d.buckets;
    const made = getOrCreate(registry, d, `${prefix}${d.name}`, buckets);
    metrics[key] = made.metric;
    if (made.tally) tallies[key] = made.tally;
  }
  return { metrics: metrics as MetricSet, tallies: tallies as TallySet };
}

function getOrCreate(
  registry: Registry,
  d: Definition,
  name: string,
  buckets: readonly number[] | undefined,
): { metric: unknown; tally?: Tally } {
  const Kind = KINDS[d.kind];
  const existing = registry.getSingleMetric(name) as unknown;
  if (existing === undefined) {
    const config = {
      name,
      help: d.help,
      labelNames: [...d.labelNames],
      ...(buckets !== undefined ? { buckets: [...buckets] } : {}),
      registers: [registry],
    };
    if (d.kind === 'histogram') return { metric: new Histogram(config) };
    // see docs/performance.md#metrics-tallies
    const own = newTally(d.labelNames, d.kind);
    const metric =
      d.kind === 'counter'
        ? new Counter({ ...config, collect: own.collect })
        : new Gauge({ ...config, collect: own.collect });
    own.attach(metric);
    return { metric, tally: own.tally };
  }
  const labels = (existing as { labelNames?: readonly string[] }).labelNames ?? [];
  if (
    existing instanceof Kind &&
    labels.length === d.labelNames.length &&
    labels.every((l, i) => l === d.labelNames[i])
  ) {
    if (d.kind === 'histogram') return { metric: existing };
    return { metric: existing, tally: tallyOf(existing as Counter<string> | Gauge<string>, d.labelNames) };
  }
  throw new TypeError(
    `metrics: the registry already has a metric named "${name}" of another type or with other labels`,
  );
}
