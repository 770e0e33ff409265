/**
 * Recording one finished request, and the limiter's hooks, into the metrics of one instance. Every label value
 * is checked against a bounded set (or the tool label budget) before it is used, so the series stay bounded.
 * @see docs/middleware/metrics.md
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { RULE_NAMES } from '../../lib/redact/index.js';
import type { RequestLocals } from '../types.js';
import { KNOWN_METHODS, LABEL_VALUES, type MetricSet, TRANSPORT_REASONS } from './definitions.js';
import { type MetricsConfig, TOOL_NAME } from './options.js';

/** What the `limits()` middleware accepts as `hooks` (structurally). */
export interface LimiterHooks {
  onDenied(reason: string): void;
  onInflight(scope: string, value: number): void;
  onCharge(ms: number, source: string): void;
  onStoreError(error: unknown, outcome: string): void;
}

export interface Recorder {
  /** Records a request that finished (`finished`) or whose client went away first. */
  record(req: IncomingMessage, res: ServerResponse, start: number, finished: boolean): void;
  readonly hooks: LimiterHooks;
}

type ToolOutcome = (typeof LABEL_VALUES.toolOutcome)[number];

/**
 * The labelled children of a metric, made once per combination of label values (`metric.labels(...)`) and
 * kept. Only for bounded label values: the callers check each value first.
 */
function children<C>(labels: (...values: string[]) => C): (...values: string[]) => C {
  const made = new Map<string, C>();
  return (...values) => {
    // No label value contains a newline (each is from a fixed set or a checked tool name).
    const key = values.join('\n');
    let child = made.get(key);
    if (child === undefined) {
      child = labels(...values);
      made.set(key, child);
    }
    return child;
  };
}

const set = (values: readonly string[]): ReadonlySet<string> => new Set(values);

/** The bounded label sets, for checking a value before it becomes a label. */
const sets = Object.freeze({
  transport: set(TRANSPORT_REASONS),
  auth: set(LABEL_VALUES.auth),
  limit: set(LABEL_VALUES.limit),
  inflightScope: set(LABEL_VALUES.inflightScope),
  chargeSource: set(LABEL_VALUES.chargeSource),
  storeOutcome: set(LABEL_VALUES.storeOutcome),
});

export function createRecorder(metrics: MetricSet, config: MetricsConfig): Recorder {
  const requests = children((era) => metrics.requests.labels(era));
  const transportRefusals = children((reason) => metrics.transportRefusals.labels(reason));
  const toolCalls = children((tool, outcome) => metrics.toolCalls.labels(tool, outcome));
  const authOutcomes = children((outcome) => metrics.authOutcomes.labels(outcome));
  const denied = children((reason) => metrics.denied.labels(reason));
  const inflight = children((scope) => metrics.inflight.labels(scope));
  const charge = children((source) => metrics.charge.labels(source));
  const storeErrors = children((outcome) => metrics.storeErrors.labels(outcome));
  const redactions = children((rule) => metrics.redactions.labels(rule));
  const duration = children((method, outcome) => metrics.duration.labels(method, outcome));

  // Pre-create the bounded series so dashboards see zeros rather than gaps.
  for (const era of LABEL_VALUES.era) requests(era).inc(0);
  for (const reason of TRANSPORT_REASONS) transportRefusals(reason).inc(0);
  for (const outcome of LABEL_VALUES.auth) authOutcomes(outcome).inc(0);
  for (const reason of LABEL_VALUES.limit) denied(reason).inc(0);
  for (const scope of LABEL_VALUES.inflightScope) inflight(scope).set(0);
  for (const rule of RULE_NAMES) redactions(rule).inc(0);
  toolCalls('other', 'error').inc(0);

  // The tool label budget: listed tools first, then tools that answered, up to maxTools.
  const toolLabels = new Set<string>();
  for (const t of config.tools) {
    if (toolLabels.size >= config.maxTools) break;
    toolLabels.add(t);
    for (const outcome of LABEL_VALUES.toolOutcome) toolCalls(t, outcome).inc(0);
  }
  function toolLabel(name: string | undefined, answered: boolean): string {
    if (name === undefined || !TOOL_NAME.test(name)) return 'other';
    if (toolLabels.has(name)) return name;
    if (answered && toolLabels.size < config.maxTools) {
      toolLabels.add(name);
      return name;
    }
    return 'other';
  }

  // Limiter denials are counted from the hooks once the limits middleware uses them; until then from
  // `refusal.detail` (so they are never counted twice).
  let hooksInUse = false;

  function record(req: IncomingMessage, res: ServerResponse, start: number, finished: boolean): void {
    const locals: RequestLocals = req.locals ?? {};
    const { mcp, refusal, response } = locals;
    requests(mcp?.era ?? 'unknown').inc();
    if (refusal && sets.transport.has(refusal.reason)) transportRefusals(refusal.reason).inc();
    const authOutcome = locals.auth?.outcome;
    if (authOutcome !== undefined && sets.auth.has(authOutcome)) authOutcomes(authOutcome).inc();
    const limit = refusal?.by === 'limits' ? refusal.detail : undefined;
    if (!hooksInUse && limit !== undefined && sets.limit.has(limit)) denied(limit).inc();
    const hits = locals.redaction?.hits;
    if (hits && typeof hits === 'object') {
      for (const rule of RULE_NAMES) {
        const n = hits[rule];
        // Finite only: prom-client refuses anything else.
        if (typeof n === 'number' && n > 0 && Number.isFinite(n)) redactions(rule).inc(n);
      }
    }
    let outcome: 'ok' | 'error' | 'refused' = 'ok';
    if (refusal && refusal.reason !== 'internal_error') outcome = 'refused';
    else if (refusal || response?.code !== undefined || res.statusCode >= 400 || !finished) outcome = 'error';
    if (mcp?.method === 'tools/call') {
      const toolOutcome: ToolOutcome = outcome !== 'ok' ? outcome : response?.toolError ? 'tool_error' : 'ok';
      // Only a call the server answered with a result proves the tool exists: only then may a new name become a label.
      const answered = toolOutcome === 'ok' || toolOutcome === 'tool_error';
      toolCalls(toolLabel(mcp.target, answered), toolOutcome).inc();
    }
    const method = mcp?.method === undefined ? 'none' : KNOWN_METHODS.has(mcp.method) ? mcp.method : 'other';
    duration(method, outcome).observe((performance.now() - start) / 1000);
  }

  const hooks: LimiterHooks = {
    onDenied(reason) {
      hooksInUse = true;
      if (sets.limit.has(reason)) denied(reason).inc();
    },
    onInflight(scope, value) {
      if (sets.inflightScope.has(scope) && typeof value === 'number' && Number.isFinite(value))
        inflight(scope).set(value);
    },
    onCharge(ms, source) {
      if (sets.chargeSource.has(source) && typeof ms === 'number' && Number.isFinite(ms) && ms >= 0)
        charge(source).observe(ms / 1000);
    },
    onStoreError(_error, outcome) {
      if (sets.storeOutcome.has(outcome)) storeErrors(outcome).inc();
    },
  };
  return { record, hooks };
}
