/**
 * Recording one finished request, and the limiter's hooks, into the metrics of one instance. Every label value
 * is checked against a bounded set (or the tool label budget, filled from registered tools only) before it is
 * used, so the series stay bounded.
 * @see docs/middleware/metrics.md
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { RULE_NAMES } from '../../lib/redact/types.js';
import type { LimitsHooks } from '../../core/limits-hooks.js';
import type { RequestLocals } from '../../core/types.js';
import { taskTracker } from './tasks.js';
import {
  DEFINITIONS,
  KNOWN_METHODS,
  LABEL_VALUES,
  type MetricSet,
  type TallySet,
  TRANSPORT_REASONS,
} from './definitions.js';
import { LabelLookup, type Tally } from './tally.js';
import { type MetricsConfig, TOOL_NAME } from './options.js';

export interface Recorder {
  /** Records a request that finished (`finished`) or whose client went away first. */
  record(req: IncomingMessage, res: ServerResponse, start: number, finished: boolean): void;
  readonly hooks: Required<LimitsHooks>;
  /** Sets `store_up{store}`: 1 when the store answers, 0 while its fallback is in use. */
  storeUp(store: string, up: boolean): void;
}

type ToolOutcome = (typeof LABEL_VALUES.toolOutcome)[number];

const set = (values: readonly string[]): ReadonlySet<string> => new Set(values);

/** The bounded label sets, for checking a value before it becomes a label. */
const sets = Object.freeze({
  transport: set(TRANSPORT_REASONS),
  auth: set(LABEL_VALUES.auth),
  authMethod: set(LABEL_VALUES.authMethod),
  limit: set(LABEL_VALUES.limit),
  inflightScope: set(LABEL_VALUES.inflightScope),
  chargeSource: set(LABEL_VALUES.chargeSource),
  storeOutcome: set(LABEL_VALUES.storeOutcome),
  store: set(LABEL_VALUES.store),
});

/** A call's `outcome` label: a call answered with a task is `task`, however its answer went (the task runs). */
function toolOutcomeOf(locals: RequestLocals, outcome: 'ok' | 'error' | 'refused'): ToolOutcome {
  if (locals.task !== undefined) return 'task';
  if (outcome !== 'ok') return outcome;
  return locals.response?.toolError ? 'tool_error' : 'ok';
}

export function createRecorder(
  metricSet: { metrics: MetricSet; tallies: TallySet },
  config: MetricsConfig,
): Recorder {
  const { metrics, tallies } = metricSet;
  const one = (t: Tally) => (value: string) => t.one(value);
  const requests = one(tallies.requests);
  const transportRefusals = one(tallies.transportRefusals);
  const toolCalls = (tool: string, outcome: string) => tallies.toolCalls.two(tool, outcome);
  const authOutcomes = one(tallies.authOutcomes);
  const authenticated = one(tallies.authenticated);
  const denied = one(tallies.denied);
  const inflight = one(tallies.inflight);
  const storeErrors = one(tallies.storeErrors);
  const storeUp = one(tallies.storeUp);
  const redactions = one(tallies.redactions);
  // The histograms' labelled children, made once per label set (prom-client observes them directly).
  const chargeBy = new LabelLookup(DEFINITIONS.charge.labelNames, (labels) => metrics.charge.labels(labels));
  const durationBy = new LabelLookup(DEFINITIONS.duration.labelNames, (labels) =>
    metrics.duration.labels(labels),
  );
  const charge = (source: string) => chargeBy.one(source);
  const duration = (method: string, outcome: string) => durationBy.two(method, outcome);

  // Pre-create the bounded series so dashboards see zeros rather than gaps.
  for (const era of LABEL_VALUES.era) requests(era).inc(0);
  for (const reason of TRANSPORT_REASONS) transportRefusals(reason).inc(0);
  for (const outcome of LABEL_VALUES.auth) authOutcomes(outcome).inc(0);
  for (const method of LABEL_VALUES.authMethod) authenticated(method).inc(0);
  for (const reason of LABEL_VALUES.limit) denied(reason).inc(0);
  for (const scope of LABEL_VALUES.inflightScope) inflight(scope).set(0);
  for (const rule of RULE_NAMES) redactions(rule).inc(0);
  toolCalls('other', 'error').inc(0);

  // The tool label budget: listed tools first, then registered tools as calls reach them, up to maxTools.
  const toolLabels = new Set<string>();
  for (const t of config.tools) {
    if (toolLabels.size >= config.maxTools) break;
    toolLabels.add(t);
    for (const outcome of LABEL_VALUES.toolOutcome) toolCalls(t, outcome).inc(0);
  }
  /**
   * The label of a call: the registered tool it reached (`locals.tool`), while the budget lasts; else the name it
   * asked for when that is a label already (a call refused before it reached the tool); else `other`.
   */
  function toolLabel(registered: string | undefined, asked: string | undefined): string {
    if (typeof registered === 'string' && TOOL_NAME.test(registered)) {
      if (toolLabels.has(registered)) return registered;
      if (toolLabels.size < config.maxTools) {
        toolLabels.add(registered);
        return registered;
      }
      return 'other';
    }
    return asked !== undefined && toolLabels.has(asked) ? asked : 'other';
  }

  const trackTask = taskTracker(tallies, (tool) => toolLabel(tool, undefined));
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
    const authMethod = locals.principal?.method;
    if (typeof authMethod === 'string')
      authenticated(sets.authMethod.has(authMethod) ? authMethod : 'other').inc();
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
    else if (response?.resultType === 'cancelled') outcome = 'error'; // a legacy cancel: as a client gone
    if (mcp?.method === 'tools/call')
      toolCalls(toolLabel(locals.tool, mcp.target), toolOutcomeOf(locals, outcome)).inc();
    if (locals.task !== undefined) trackTask(locals.task);
    const method = mcp?.method === undefined ? 'none' : KNOWN_METHODS.has(mcp.method) ? mcp.method : 'other';
    duration(method, outcome).observe((performance.now() - start) / 1000);
  }

  const hooks: Required<LimitsHooks> = {
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
  return {
    record,
    hooks,
    storeUp(store, up) {
      if (sets.store.has(store) && typeof up === 'boolean') storeUp(store).set(up ? 1 : 0);
    },
  };
}
