/**
 * The series of a counter or gauge, counted in plain numbers and handed to prom-client when the metric is read.
 * prom-client validates and hashes a label set on every `inc`/`set` of a labelled child; a tally looks a series
 * up by its label values once and then only adds, and prom-client's `collect` hook (given in the config of each
 * metric `metrics()` creates, and run by every scrape, `get()` and cluster aggregation) hands the counts over.
 *
 * A metric the application made is counted directly instead: `metrics()` never replaces a function on a
 * metric it did not create. Both kinds of series have the same interface and one test suite.
 * @see docs/performance.md#metrics-tallies
 */
import type { Counter, Gauge } from 'prom-client';

/** One series of a counter (`inc`) or a gauge (`set`). */
export interface Series {
  inc(n?: number): void;
  set(value: number): void;
}

/** The series of one metric, by label values (each checked against a bounded set by the caller). */
export interface Tally {
  one(value: string): Series;
  two(a: string, b: string): Series;
  /** Hands what was counted since the last call to prom-client. */
  flush(): void;
}

type Labels = Record<string, string>;
type Metric = Counter<string> | Gauge<string>;

/**
 * Where prom-client keeps a metric's series: a reset replaces the object, which is how a tally notices one. Not
 * documented by prom-client: test/middleware/metrics/prom-client-private.test.ts holds the installed version to it.
 */
const seriesStore = (m: Metric): unknown => (m as unknown as { hashMap: unknown }).hashMap;

class TalliedSeries implements Series {
  value = 0;
  changed = false;
  listed = false;

  constructor(
    readonly labels: Labels,
    private readonly owner: OwnTally,
  ) {}

  inc(n = 1): void {
    this.owner.touch(this);
    this.value += n;
  }

  set(value: number): void {
    this.owner.touch(this);
    this.value = value;
    this.changed = true;
  }
}

/**
 * The series of one metric by one or two label values, each made once by `make` from its label set and kept.
 * Shared by both kinds of tally and by the histograms' labelled children. Only for bounded label values: the
 * callers check each value first.
 */
export class LabelLookup<S> {
  readonly #byOne = new Map<string, S>();
  readonly #byTwo = new Map<string, Map<string, S>>();

  constructor(
    private readonly names: readonly string[],
    private readonly make: (labels: Labels) => S,
  ) {}

  one(value: string): S {
    let s = this.#byOne.get(value);
    if (s === undefined) {
      s = this.make({ [this.names[0]!]: value });
      this.#byOne.set(value, s);
    }
    return s;
  }

  two(a: string, b: string): S {
    let inner = this.#byTwo.get(a);
    if (inner === undefined) {
      inner = new Map();
      this.#byTwo.set(a, inner);
    }
    let s = inner.get(b);
    if (s === undefined) {
      s = this.make({ [this.names[0]!]: a, [this.names[1]!]: b });
      inner.set(b, s);
    }
    return s;
  }
}

/** The tally of a metric `metrics()` created: counted here, handed over by the metric's `collect`. */
class OwnTally implements Tally {
  readonly #series: LabelLookup<TalliedSeries>;
  /** Series counted since the metric was made or reset, in the order first counted (prom-client keeps it). */
  #listed: TalliedSeries[] = [];
  #store: unknown;
  #metric: Metric | undefined;

  constructor(
    names: readonly string[],
    private readonly kind: 'counter' | 'gauge',
  ) {
    this.#series = new LabelLookup(names, (labels) => new TalliedSeries(labels, this));
  }

  one(value: string): Series {
    return this.#series.one(value);
  }

  two(a: string, b: string): Series {
    return this.#series.two(a, b);
  }

  /** The metric this tally feeds (set right after prom-client constructs it). */
  attach(metric: Metric): void {
    this.#metric = metric;
    this.#store = seriesStore(metric);
  }

  /** Before a count: a reset since the last one drops what was not handed over; the series is listed. */
  touch(s: TalliedSeries): void {
    if (this.#metric !== undefined && seriesStore(this.#metric) !== this.#store) this.#dropAll();
    if (!s.listed) {
      s.listed = true;
      this.#listed.push(s);
    }
  }

  #dropAll(): void {
    for (const s of this.#listed) {
      s.value = 0;
      s.changed = false;
      s.listed = false;
    }
    this.#listed = [];
    this.#store = seriesStore(this.#metric!);
  }

  flush(): void {
    const metric = this.#metric;
    if (metric === undefined) return;
    if (seriesStore(metric) !== this.#store) return this.#dropAll();
    const isGauge = this.kind === 'gauge';
    for (const s of this.#listed) {
      if (isGauge) {
        if (s.changed) (metric as Gauge<string>).set(s.labels, s.value);
        s.changed = false;
      } else {
        (metric as Counter<string>).inc(s.labels, s.value);
        s.value = 0;
      }
    }
  }
}

/** The tally of a metric the application made: every count goes to prom-client at once. */
class DirectTally implements Tally {
  readonly #series: LabelLookup<Series>;

  constructor(names: readonly string[], metric: Metric) {
    this.#series = new LabelLookup(names, (labels) => ({
      inc: (n = 1) => (metric as Counter<string>).inc(labels, n),
      set: (value) => (metric as Gauge<string>).set(labels, value),
    }));
  }

  one(value: string): Series {
    return this.#series.one(value);
  }

  two(a: string, b: string): Series {
    return this.#series.two(a, b);
  }

  flush(): void {}
}

/**
 * The tallies of the metrics `metrics()` created, by metric: a second instance on the same registry reuses the
 * metric and so its tally. A WeakMap: a tally goes with its metric.
 */
const owned = new WeakMap<object, OwnTally>();

/** A tally for a metric about to be created, and the `collect` to give in its config. */
export function newTally(
  names: readonly string[],
  kind: 'counter' | 'gauge',
): {
  tally: Tally;
  collect: () => void;
  attach: (metric: Metric) => void;
} {
  const tally = new OwnTally(names, kind);
  return {
    tally,
    collect: () => tally.flush(),
    attach: (metric) => {
      tally.attach(metric);
      owned.set(metric, tally);
    },
  };
}

/** The tally of an existing metric: its own when `metrics()` made it, else one that counts directly. */
export function tallyOf(metric: Metric, names: readonly string[]): Tally {
  return owned.get(metric) ?? new DirectTally(names, metric);
}
