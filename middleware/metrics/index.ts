/**
 * `metrics()`: Prometheus metrics for the MCP endpoint on prom-client, recorded when each response finishes
 * from what the other middlewares left on `req.locals`. Mount it first (next to `audit()`), so refusals are
 * counted too. `metricsHandler(registry)` serves the registry for `GET /metrics`.
 *
 * The registry is injected (or a new one is made per instance), never prom-client's global one, so creating
 * the middleware twice cannot crash with "already registered"; creating it twice on the same registry reuses
 * the metrics. Every label is bounded: tool names are only used when the tool answered (an unknown tool gets
 * `-32602` and is counted as `other`) or were listed in `tools`, up to `maxTools`.
 *
 * It refuses nothing. Non-POST requests are counted too (they are refusals of the method guard).
 *
 * Counters and the in-flight gauge are kept in plain numbers per series and handed to prom-client only when a
 * metric is read (its `collect()`, which every scrape, `get()` and cluster aggregation call): prom-client
 * validates and hashes the label set on every `inc`/`set`, which added up to microseconds per answer. The two
 * histograms still `observe()` per request: prom-client has no public way to add bucket counts in bulk.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Counter, Gauge, Histogram, type Registry as RegistryType, Registry } from 'prom-client';
import type { RefusalReason } from '../../lib/errors.js';
import { RULE_NAMES } from '../../lib/redact/index.js';
import { localsOf } from '../internal/respond.js';
import { badOption } from '../internal/options.js';
import type { Middleware, RequestLocals } from '../types.js';

/** Refusals of the transport and protocol layers (`mcp_transport_refusals_total{reason}`). */
export const TRANSPORT_REASONS: readonly RefusalReason[] = Object.freeze([
  'body_too_large',
  'unsupported_media_type',
  'body_unreadable',
  'parse_error',
  'batch',
  'invalid_request',
  'invalid_id',
  'duplicate_member',
  'forbidden_member',
  'too_deep',
  'response_not_accepted',
  'method_not_allowed',
  'origin_not_allowed',
  'host_not_allowed',
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

const AUTH_LABELS = Object.freeze([
  'ok',
  'missing',
  'invalid',
  'expired',
  'forbidden',
  'unavailable',
] as const);
const LIMIT_LABELS = Object.freeze(['rpm', 'user_concurrent', 'global_concurrent', 'cost_budget'] as const);
const TOOL_OUTCOME_LABELS = Object.freeze(['ok', 'tool_error', 'error', 'refused'] as const);

/** Methods that get their own `method` label on the duration histogram; anything else is `other`. */
const KNOWN_METHODS = new Set([
  'initialize',
  'ping',
  'server/discover',
  'tools/list',
  'tools/call',
  'resources/list',
  'resources/read',
  'resources/templates/list',
  'resources/subscribe',
  'resources/unsubscribe',
  'prompts/list',
  'prompts/get',
  'completion/complete',
  'logging/setLevel',
  'subscriptions/listen',
  'notifications/initialized',
  'notifications/cancelled',
  'notifications/progress',
  'notifications/roots/list_changed',
]);

/** Default duration buckets, in seconds (5 ms … 30 s). */
export const DEFAULT_DURATION_BUCKETS = Object.freeze([
  0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30,
]);
/** Charge buckets, in seconds (10 ms … 60 s). */
const CHARGE_BUCKETS = [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60];

/** What the `limits()` middleware accepts as `hooks` (structurally). */
export interface LimiterHooks {
  onDenied(reason: string): void;
  onInflight(scope: string, value: number): void;
  onCharge(ms: number, source: string): void;
  onStoreError(error: unknown, outcome: string): void;
}

export interface MetricsOptions {
  /** Where metrics are registered. Default: a new Registry for this instance (never the global one). */
  registry?: RegistryType;
  /** Metric name prefix. Default `mcp_`. */
  prefix?: string;
  /** Tool names to pre-create series for (they always get their own label). */
  tools?: readonly string[];
  /** Distinct tool label values at most (beyond: `other`). Default 100. */
  maxTools?: number;
  /** Request-duration histogram buckets, in seconds. */
  buckets?: readonly number[];
}

export type MetricsMiddleware = Middleware & {
  /** The registry holding this instance's metrics (serve it with `metricsHandler`). */
  readonly registry: RegistryType;
  /** Hooks for `limits({ hooks })`: denials by reason, in-flight gauges, charges, store errors. */
  limiterHooks(): LimiterHooks;
};

const OPTION_NAMES = new Set(['registry', 'prefix', 'tools', 'maxTools', 'buckets']);
/** MCP tool names: 1–128 of [A-Za-z0-9_.-] (plus `/`, which some servers use for namespaces). */
const TOOL_NAME = /^[A-Za-z0-9_./-]{1,128}$/;

function isRegistry(r: unknown): r is RegistryType {
  return (
    r !== null &&
    typeof r === 'object' &&
    typeof (r as { metrics?: unknown }).metrics === 'function' &&
    typeof (r as { getSingleMetric?: unknown }).getSingleMetric === 'function' &&
    typeof (r as { registerMetric?: unknown }).registerMetric === 'function'
  );
}

/** Get a metric already in the registry (same type and labels), or create it. */
function getOrCreate<M>(
  registry: RegistryType,
  Kind: new (cfg: never) => M,
  cfg: { name: string; help: string; labelNames: readonly string[]; buckets?: number[] },
): M {
  const existing = registry.getSingleMetric(cfg.name) as unknown;
  if (existing !== undefined) {
    const labels = (existing as { labelNames?: readonly string[] }).labelNames ?? [];
    if (
      existing instanceof Kind &&
      labels.length === cfg.labelNames.length &&
      labels.every((l, i) => l === cfg.labelNames[i])
    ) {
      return existing;
    }
    throw new TypeError(
      `metrics: the registry already has a metric named "${cfg.name}" of another type or with other labels`,
    );
  }
  return new Kind({ ...cfg, labelNames: [...cfg.labelNames], registers: [registry] } as never);
}

type Labels = Record<string, string>;

/** One series counted in plain numbers until prom-client reads the metric. */
interface Series {
  /** Made once, handed to prom-client as is (it keeps the object of a series it creates). */
  readonly labels: Labels;
  /** Counter: what was counted since the last hand-over. Gauge: the last value set. */
  value: number;
  /** Gauge: set since the last hand-over. */
  changed: boolean;
  /** In the tally's list (counted since it was made or since the metric was last reset). */
  listed: boolean;
}

/**
 * The series of one counter or gauge, with lookups by one or two label values. Every label value is checked
 * against a bounded set or bounded by `maxTools` before it gets here, so these maps stay small.
 */
class Tally {
  /**
   * The series counted since the metric was made or last reset, in the order they were first counted: handed
   * over in that order, prom-client creates its series in the order it did when it was told on each request.
   */
  private listed: Series[] = [];
  private readonly byOne = new Map<string, Series>();
  private readonly byTwo = new Map<string, Map<string, Series>>();

  constructor(
    private readonly names: readonly string[],
    /** Gives prom-client what a series holds (and clears what it gave). */
    private readonly handOver: (s: Series) => void,
  ) {}

  private list(s: Series): Series {
    s.listed = true;
    this.listed.push(s);
    return s;
  }

  /** The series to count for `value` (each caller counts right away). */
  one(value: string): Series {
    let s = this.byOne.get(value);
    if (s === undefined) {
      s = { labels: { [this.names[0]!]: value }, value: 0, changed: false, listed: false };
      this.byOne.set(value, s);
    }
    return s.listed ? s : this.list(s);
  }

  two(a: string, b: string): Series {
    let inner = this.byTwo.get(a);
    if (inner === undefined) {
      inner = new Map();
      this.byTwo.set(a, inner);
    }
    let s = inner.get(b);
    if (s === undefined) {
      s = { labels: { [this.names[0]!]: a, [this.names[1]!]: b }, value: 0, changed: false, listed: false };
      inner.set(b, s);
    }
    return s.listed ? s : this.list(s);
  }

  flush(): void {
    for (const s of this.listed) this.handOver(s);
  }

  /** After prom-client's `reset()`: what was not handed over yet is dropped with the rest. */
  drop(): void {
    for (const s of this.listed) {
      s.value = 0;
      s.changed = false;
      s.listed = false;
    }
    this.listed = [];
  }
}

/**
 * The tally of each counter and gauge, keyed by the metric object: two instances on one registry share the
 * metric, so they share its tally (a gauge's last value wins across both, as before); instances on different
 * registries share nothing, and a tally goes away with its metric.
 */
const tallies = new WeakMap<object, Tally>();

type Collectable = {
  collect?: (this: unknown) => void | Promise<void>;
  reset(this: unknown): void;
};

/** The tally of `metric`, made (and wired to the metric's `collect()` and `reset()`) on first use. */
function tallyOf(metric: object, names: readonly string[], handOver: (s: Series) => void): Tally {
  let tally = tallies.get(metric);
  if (tally !== undefined) return tally;
  const t = new Tally(names, handOver);
  tally = t;
  tallies.set(metric, t);
  const m = metric as Collectable;
  // A collect() already there (the application's own, on a metric it made) still runs after ours.
  const before = m.collect;
  m.collect = function collect(this: unknown) {
    t.flush();
    return before?.call(this);
  };
  const reset = m.reset;
  m.reset = function resetAndDrop(this: unknown) {
    reset.call(this);
    t.drop();
  };
  return t;
}

function counterTally(counter: Counter<string>, names: readonly string[]): Tally {
  return tallyOf(counter, names, (s) => {
    if (s.value > 0) {
      const n = s.value;
      s.value = 0;
      counter.inc(s.labels, n);
    }
  });
}

function gaugeTally(gauge: Gauge<string>, names: readonly string[]): Tally {
  return tallyOf(gauge, names, (s) => {
    if (s.changed) {
      s.changed = false;
      gauge.set(s.labels, s.value);
    }
  });
}

/**
 * A cache of labelled children keyed by one label value: `metric.labels(...)` runs once per value. Only for
 * bounded label sets (the callers check the value first).
 */
function children<C>(make: (value: string) => C): (value: string) => C {
  const made = new Map<string, C>();
  return (value) => {
    let child = made.get(value);
    if (child === undefined) {
      child = make(value);
      made.set(value, child);
    }
    return child;
  };
}

/** {@link children} for two labels: a map per value of the first label. */
function children2<C>(make: (a: string, b: string) => C): (a: string, b: string) => C {
  const made = new Map<string, Map<string, C>>();
  return (a, b) => {
    let inner = made.get(a);
    if (inner === undefined) {
      inner = new Map();
      made.set(a, inner);
    }
    let child = inner.get(b);
    if (child === undefined) {
      child = make(a, b);
      inner.set(b, child);
    }
    return child;
  };
}

export function metrics(options: MetricsOptions = {}): MetricsMiddleware {
  if (options === null || typeof options !== 'object')
    throw new TypeError('metrics: options must be an object');
  for (const k of Object.keys(options)) {
    if (!OPTION_NAMES.has(k))
      throw new TypeError(`metrics: unknown option "${k}" (known: ${[...OPTION_NAMES].join(', ')})`);
  }
  if (options.registry !== undefined && !isRegistry(options.registry)) {
    throw badOption('metrics', 'registry', options.registry, 'a prom-client Registry');
  }
  const registry = options.registry ?? new Registry();
  const prefix = options.prefix ?? 'mcp_';
  if (typeof prefix !== 'string' || !/^(?:[a-zA-Z_:][a-zA-Z0-9_:]{0,63})?$/.test(prefix)) {
    throw badOption(
      'metrics',
      'prefix',
      prefix,
      'a Prometheus name prefix such as "mcp_" (letters, digits, _ and :)',
    );
  }
  const maxTools = options.maxTools ?? 100;
  if (!Number.isSafeInteger(maxTools) || maxTools < 0)
    throw badOption('metrics', 'maxTools', maxTools, 'a non-negative integer');
  const tools = options.tools ?? [];
  if (!Array.isArray(tools) || tools.some((t) => typeof t !== 'string' || !TOOL_NAME.test(t))) {
    throw badOption('metrics', 'tools', tools, 'an array of tool names (1–128 of A-Z a-z 0-9 _ . - /)');
  }
  const buckets = options.buckets ?? DEFAULT_DURATION_BUCKETS;
  if (
    !Array.isArray(buckets) ||
    buckets.length === 0 ||
    buckets.some(
      (b, i) => typeof b !== 'number' || !Number.isFinite(b) || b <= 0 || (i > 0 && b <= buckets[i - 1]!),
    )
  ) {
    throw badOption('metrics', 'buckets', buckets, 'a non-empty increasing array of positive numbers');
  }

  const requests = getOrCreate(registry, Counter, {
    name: `${prefix}requests_total`,
    help: 'Requests to the MCP endpoint by protocol era (unknown: refused before classification)',
    labelNames: ['era'],
  });
  const transportRefusals = getOrCreate(registry, Counter, {
    name: `${prefix}transport_refusals_total`,
    help: 'Requests refused by the transport and protocol checks, by reason',
    labelNames: ['reason'],
  });
  const toolCalls = getOrCreate(registry, Counter, {
    name: `${prefix}tool_calls_total`,
    help: 'tools/call requests by tool and outcome (ok, tool_error, error, refused)',
    labelNames: ['tool', 'outcome'],
  });
  const authOutcomes = getOrCreate(registry, Counter, {
    name: `${prefix}auth_total`,
    help: 'Authentication outcomes',
    labelNames: ['outcome'],
  });
  const denied = getOrCreate(registry, Counter, {
    name: `${prefix}ratelimit_denied_total`,
    help: 'Requests refused by a limit, by limit',
    labelNames: ['reason'],
  });
  const inflight = getOrCreate(registry, Gauge, {
    name: `${prefix}ratelimit_inflight`,
    help: 'Requests holding a concurrency slot in this process, by scope',
    labelNames: ['scope'],
  });
  const charge = getOrCreate(registry, Histogram, {
    name: `${prefix}ratelimit_charge_seconds`,
    help: 'Work charged against the budget per request, in seconds, by source (charged or wall_clock)',
    labelNames: ['source'],
    buckets: CHARGE_BUCKETS,
  });
  const storeErrors = getOrCreate(registry, Counter, {
    name: `${prefix}ratelimit_store_errors_total`,
    help: 'Limit store failures by what happened to the request (insurance, refused, dropped)',
    labelNames: ['outcome'],
  });
  const redactions = getOrCreate(registry, Counter, {
    name: `${prefix}redactions_total`,
    help: 'Matches of redaction rules in outgoing results and notifications (masked or, in warn mode, counted)',
    labelNames: ['rule'],
  });
  const duration = getOrCreate(registry, Histogram, {
    name: `${prefix}request_duration_seconds`,
    help: 'Time from arrival to the last byte of the answer, by JSON-RPC method and outcome (ok, error, refused)',
    labelNames: ['method', 'outcome'],
    buckets: [...buckets],
  });

  // Pre-create the bounded series so dashboards see zeros rather than gaps.
  for (const era of ['modern', 'legacy', 'unknown']) requests.inc({ era }, 0);
  for (const reason of TRANSPORT_REASONS) transportRefusals.inc({ reason }, 0);
  for (const outcome of AUTH_LABELS) authOutcomes.inc({ outcome }, 0);
  for (const reason of LIMIT_LABELS) denied.inc({ reason }, 0);
  for (const scope of ['user', 'global']) inflight.set({ scope }, 0);
  for (const rule of RULE_NAMES) redactions.inc({ rule }, 0);
  toolCalls.inc({ tool: 'other', outcome: 'error' }, 0);

  const toolLabels = new Set<string>();
  for (const t of tools) {
    if (toolLabels.size >= maxTools) break;
    toolLabels.add(t);
    for (const outcome of TOOL_OUTCOME_LABELS) toolCalls.inc({ tool: t, outcome }, 0);
  }
  const transportSet = new Set<string>(TRANSPORT_REASONS);
  const limitSet = new Set<string>(LIMIT_LABELS);
  const authSet = new Set<string>(AUTH_LABELS);
  const inflightScopes = new Set(['user', 'global']);
  const chargeSources = new Set(['charged', 'wall_clock', 'unlabelled']);
  const storeOutcomes = new Set(['insurance', 'refused', 'dropped']);
  // Limiter denials are counted from the hooks once the limits middleware uses them; until then from
  // `refusal.detail` (so they are never counted twice).
  let hooksInUse = false;

  // Counters and the gauge: plain numbers per series, handed to prom-client when it reads them.
  const requestsBy = counterTally(requests, ['era']);
  const transportBy = counterTally(transportRefusals, ['reason']);
  const authBy = counterTally(authOutcomes, ['outcome']);
  const deniedBy = counterTally(denied, ['reason']);
  const redactionsBy = counterTally(redactions, ['rule']);
  const toolCallsBy = counterTally(toolCalls, ['tool', 'outcome']);
  const storeErrorsBy = counterTally(storeErrors, ['outcome']);
  const inflightBy = gaugeTally(inflight, ['scope']);
  // Histograms: labelled children, made once per label value (every label value is checked against a bounded
  // set before it gets here, so these maps stay small).
  const durationBy = children2((method, outcome) => duration.labels({ method, outcome }));
  const chargeBy = children((source) => charge.labels({ source }));

  function toolLabel(name: string | undefined, answered: boolean): string {
    if (name === undefined || !TOOL_NAME.test(name)) return 'other';
    if (toolLabels.has(name)) return name;
    if (answered && toolLabels.size < maxTools) {
      toolLabels.add(name);
      return name;
    }
    return 'other';
  }

  function record(req: IncomingMessage, res: ServerResponse, start: number, finished: boolean): void {
    const locals: RequestLocals = req.locals ?? {};
    const mcp = locals.mcp;
    const refusal = locals.refusal;
    const response = locals.response;
    requestsBy.one(mcp?.era ?? 'unknown').value++;
    if (refusal && transportSet.has(refusal.reason)) transportBy.one(refusal.reason).value++;
    const authOutcome = locals.auth?.outcome;
    if (authOutcome !== undefined && authSet.has(authOutcome)) authBy.one(authOutcome).value++;
    if (
      !hooksInUse &&
      refusal?.by === 'limits' &&
      refusal.detail !== undefined &&
      limitSet.has(refusal.detail)
    ) {
      deniedBy.one(refusal.detail).value++;
    }
    const hits = locals.redaction?.hits;
    if (hits && typeof hits === 'object') {
      for (const rule of RULE_NAMES) {
        const n = hits[rule];
        // Finite only: prom-client would refuse anything else when it is handed over, failing the scrape.
        if (typeof n === 'number' && n > 0 && Number.isFinite(n)) redactionsBy.one(rule).value += n;
      }
    }
    let outcome: 'ok' | 'error' | 'refused' = 'ok';
    if (refusal && refusal.reason !== 'internal_error') outcome = 'refused';
    else if (refusal || response?.code !== undefined || res.statusCode >= 400 || !finished) outcome = 'error';
    if (mcp?.method === 'tools/call') {
      let toolOutcome: (typeof TOOL_OUTCOME_LABELS)[number];
      if (outcome === 'refused') toolOutcome = 'refused';
      else if (outcome === 'error') toolOutcome = 'error';
      else toolOutcome = response?.toolError ? 'tool_error' : 'ok';
      // Only a call the server answered with a result proves the tool exists: only then may a new name become a label.
      toolCallsBy.two(
        toolLabel(mcp.target, toolOutcome === 'ok' || toolOutcome === 'tool_error'),
        toolOutcome,
      ).value++;
    }
    const method = mcp?.method === undefined ? 'none' : KNOWN_METHODS.has(mcp.method) ? mcp.method : 'other';
    durationBy(method, outcome).observe((performance.now() - start) / 1000);
  }

  // One pair of listeners shared by every request (they get the response as `this`); what a request needs is
  // kept in `req.locals` (mcpware's own object, `res.req` leads to it) under this instance's own key, not on the
  // response (under Express each property added to a response object costs it a hidden class of its own) nor in
  // closures made per request (dearer still: see audit). A request whose `req.locals` was replaced before it
  // ended is not measured.
  const tracking = Symbol('mcpware.metrics');
  type Marked = RequestLocals & { [tracking]?: { start: number; done: boolean } };
  const finish = (res: ServerResponse, finished: boolean): void => {
    const req = res.req;
    const t = (req?.locals as Marked | undefined)?.[tracking];
    if (t === undefined || t.done) return;
    t.done = true;
    try {
      record(req, res, t.start, finished);
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

  const mw = function mcpMetrics(req, res, next) {
    const locals = localsOf(req) as Marked;
    // One record per request, even if the chain runs this instance twice.
    if (locals[tracking] === undefined) {
      locals[tracking] = { start: performance.now(), done: false };
      res.on('finish', onFinish);
      res.on('close', onClose);
    }
    next();
  } as MetricsMiddleware;

  const hooks: LimiterHooks = {
    onDenied(reason) {
      hooksInUse = true;
      if (limitSet.has(reason)) deniedBy.one(reason).value++;
    },
    onInflight(scope, value) {
      if (inflightScopes.has(scope) && typeof value === 'number' && Number.isFinite(value)) {
        const s = inflightBy.one(scope);
        s.value = value;
        s.changed = true;
      }
    },
    onCharge(ms, source) {
      if (chargeSources.has(source) && typeof ms === 'number' && Number.isFinite(ms) && ms >= 0)
        chargeBy(source).observe(ms / 1000);
    },
    onStoreError(_error, outcome) {
      if (storeOutcomes.has(outcome)) storeErrorsBy.one(outcome).value++;
    },
  };
  Object.defineProperty(mw, 'registry', { value: registry, enumerable: true });
  Object.defineProperty(mw, 'limiterHooks', { value: () => hooks, enumerable: true });
  return mw;
}

/**
 * A node:http handler (also an Express route handler) serving `registry` in the Prometheus text format for
 * `GET` and `HEAD`; other methods get 405.
 */
export function metricsHandler(
  registry: RegistryType,
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
