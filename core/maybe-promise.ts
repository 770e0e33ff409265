/**
 * Internal: awaiting only what is a promise. An `await` of a plain value still costs a microtask, and on the
 * per-request path most values (a static tool's definition, an API-key decision, a synchronous redaction) are
 * plain. See docs/performance.md#synchronous-answers.
 */

/** A promise or promise-like value. */
export function isThenable(v: unknown): v is PromiseLike<unknown> {
  return (
    v !== null &&
    (typeof v === 'object' || typeof v === 'function') &&
    typeof (v as { then?: unknown }).then === 'function'
  );
}

/** A value, or a promise of it: hooks, sources and stores may answer at once or later. */
export type Awaitable<T> = T | Promise<T>;

/** `f(value)`: at once for a plain value, once it settles for a promise. */
export function then<T, R>(value: T | PromiseLike<T>, f: (v: T) => R | PromiseLike<R>): R | Promise<R> {
  return isThenable(value) ? Promise.resolve(value).then(f) : (f(value) as R | Promise<R>);
}
