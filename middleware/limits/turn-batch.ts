/**
 * The Redis store's script calls, shared by the requests that come together: while a call is under way, what
 * the requests of a turn ask of Redis (their admissions, and the releases no answer waits for) waits for the end
 * of the turn and goes in one script call per group, each caller getting its own part of the answer: one command
 * and one reply for many requests, rather than one round trip each. With no call under way an item is sent at once, so a request
 * alone waits for nothing.
 * @see docs/middleware/limits.md
 */

/** One caller's item, and where its part of the answer goes. */
interface Waiting<T, R> {
  readonly item: T;
  resolve(value: R): void;
  reject(error: unknown): void;
}

export interface TurnBatchOptions<T, R> {
  /**
   * The group an item is sent with: items of different groups never share a call (a Redis Cluster runs a script
   * on the keys of one hash slot only).
   */
  groupOf(item: T): string;
  /** Most items per call: a longer batch is sent as several calls, so that no script runs long. */
  max: number;
  /** Sends one call for `items` and resolves to one answer per item, in their order. */
  send(items: readonly T[]): Promise<readonly R[]>;
}

export interface TurnBatch<T, R> {
  /**
   * Sends `item`, or queues it for this turn's call of its group; resolves to its answer, or rejects with the
   * call's error.
   */
  add(item: T): Promise<R>;
}

/**
 * A batch that sends an item at once while no call of its is under way, and otherwise collects items until the
 * end of the current event-loop turn (`setImmediate`, after the I/O the turn runs, so the requests that arrived
 * together go together) and then sends each group.
 */
export function createTurnBatch<T, R>(options: TurnBatchOptions<T, R>): TurnBatch<T, R> {
  const { groupOf, max, send } = options;
  let groups = new Map<string, Waiting<T, R>[]>();
  let scheduled = false;
  /** Calls sent and not yet answered. */
  let active = 0;

  function flush(): void {
    scheduled = false;
    const ready = groups;
    groups = new Map();
    for (const waiting of ready.values()) {
      for (let i = 0; i < waiting.length; i += max) sendPart(waiting.slice(i, i + max));
    }
  }

  function sendPart(part: Waiting<T, R>[]): void {
    let call: Promise<readonly R[]>;
    active++;
    try {
      call = send(part.map((w) => w.item));
    } catch (e) {
      call = Promise.reject(e);
    }
    call.then(
      (answers) => {
        active--;
        if (answers.length !== part.length) {
          const e = new Error(`limits: ${answers.length} answers for ${part.length} items`);
          for (const w of part) w.reject(e);
          return;
        }
        part.forEach((w, i) => w.resolve(answers[i]!));
      },
      (e: unknown) => {
        active--;
        for (const w of part) w.reject(e);
      },
    );
  }

  return {
    add(item) {
      return new Promise<R>((resolve, reject) => {
        if (active === 0 && !scheduled) return sendPart([{ item, resolve, reject }]);
        const group = groupOf(item);
        let waiting = groups.get(group);
        if (waiting === undefined) groups.set(group, (waiting = []));
        waiting.push({ item, resolve, reject });
        if (!scheduled) {
          scheduled = true;
          setImmediate(flush);
        }
      });
    },
  };
}
