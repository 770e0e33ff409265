/**
 * The body reader under the shared parse step: reads a request's body once, under the size limit (as declared by
 * `Content-Length` and as it arrives), decodes a body in a content coding (body-coding.ts) under the same limit,
 * and hands the bytes, or the refusal, to everyone waiting for them. It parses nothing.
 */
import type { IncomingMessage } from 'node:http';
import { type Refusal, refusal } from '../lib/errors.js';
import { type BodyCoding, bodyCoding, decodeBody } from './body-coding.js';
import { localsOf } from './respond.js';
import type { RequestLocals } from './types.js';

export const DEFAULT_BODY_LIMIT = 4 * 1024 * 1024;

const UNITS: Record<string, number> = { b: 1, kb: 1024, mb: 1024 * 1024, gb: 1024 * 1024 * 1024 };

/**
 * Parse a byte size option: a non-negative integer, or `'<n><unit>'` with b/kb/mb/gb.
 * @example
 * ```ts
 * import { parseByteSize } from 'mcpware';
 *
 * console.log(parseByteSize('1mb'), parseByteSize(4096), parseByteSize('lots')); // 1048576 4096 undefined
 * ```
 */
export function parseByteSize(v: number | string): number | undefined {
  if (typeof v === 'number') return Number.isSafeInteger(v) && v > 0 ? v : undefined;
  const m = /^(\d{1,12}(?:\.\d{1,6})?)\s?(b|kb|mb|gb)$/i.exec(v.trim());
  if (!m) return undefined;
  const n = Math.floor(Number(m[1]) * UNITS[m[2]!.toLowerCase()]!);
  return n > 0 ? n : undefined;
}

/** Who waits for the body: called with its bytes (or the refusal) and the request. */
export type BodyWaiter = (raw: Buffer | Refusal, req: IncomingMessage) => void;

/**
 * The body reader's part of the per-request state. The state is one object under a registered symbol (so two
 * copies of the package still share it), which the parse step extends with its own fields. It is kept in
 * `req.locals`, not on the request itself: under Express (which swaps the request's prototype) every property
 * added to a request object makes it a new hidden class, with a map and descriptor copy that the garbage
 * collector must then also trace; the locals object is mcpware's own, created with the same shape every time.
 * See docs/performance.md#state-in-reqlocals.
 */
export interface BodyState {
  /** The body once read (or the refusal), and those waiting while it is read. */
  rawDone?: Buffer | Refusal;
  rawWaiters?: BodyWaiter[];
  /** While the body is read: its chunks so far, their size, the limit and the coding to decode once in. */
  chunks?: Buffer[];
  size?: number;
  limit?: number;
  coding?: Exclude<BodyCoding, 'identity'>;
}

const STATE = Symbol.for('mcpware.state');
type LocalsWithState = RequestLocals & { [STATE]?: BodyState };

/** The request's state, made (empty) on first use. */
export function stateOf(req: IncomingMessage): BodyState {
  return ((localsOf(req) as LocalsWithState)[STATE] ??= {});
}

/** The request's state when something made it, else `undefined`; makes nothing. */
export function stateIfAny(req: IncomingMessage): BodyState | undefined {
  return (req.locals as LocalsWithState | undefined)?.[STATE];
}

/** True once mcpware has started reading the body (or has finished). */
export function bodyStarted(st: BodyState): boolean {
  return st.rawDone !== undefined || st.rawWaiters !== undefined;
}

const EMPTY = Buffer.alloc(0);

/**
 * Let go of the body's bytes. A body that was read stays read: an empty body tells late readers (and the stream's
 * listeners) that it is.
 */
export function releaseBody(st: BodyState): void {
  if (st.rawDone !== undefined && Buffer.isBuffer(st.rawDone)) st.rawDone = EMPTY;
  st.chunks = undefined;
}

/**
 * The state of a body read in progress, for the stream's listeners: `undefined` when there is none, which only
 * happens when something replaced `req.locals` while the body was being read (the listeners then do nothing
 * rather than throw inside the stream).
 */
function readingState(req: IncomingMessage): BodyState | undefined {
  const st = stateIfAny(req);
  return st?.chunks === undefined && st?.rawDone === undefined ? undefined : st;
}

function tooLarge(limit: number): Refusal {
  return refusal('body_too_large', { message: `Request body exceeds ${limit} bytes` });
}

/**
 * Read the body under `limit` and hand it to `cb`, synchronously from the stream's `end` event (or at once when
 * it was read before). A body in a content coding is decoded first, the limit holding for the bytes sent and for
 * the bytes decoded; `cb` then runs once it is decoded. Shared: the first caller reads (with its limit), later
 * ones wait for the same bytes. Callbacks must not throw. A callback rather than a promise: the hot path (parse,
 * then the next middleware) makes no promise and waits for no microtask. The stream's listeners are shared
 * functions that find the read's state through the request (`this`, its `req.locals`): a request makes no
 * closure for them. See docs/performance.md#parse-once.
 */
export function readBody(req: IncomingMessage, limit: number, cb: BodyWaiter): void {
  const st = stateOf(req);
  if (st.rawDone !== undefined) return cb(st.rawDone, req);
  if (st.rawWaiters) {
    st.rawWaiters.push(cb);
    return;
  }
  st.rawWaiters = [cb];
  const headers = req.headers;
  const coding = bodyCoding(headers['content-encoding']);
  if (typeof coding !== 'string') return settle(req, st, coding);
  const declared = headers['content-length'];
  if (declared !== undefined) {
    const n = Number(declared);
    if (Number.isFinite(n) && n > limit) return settle(req, st, tooLarge(limit));
  }
  if (req.readableEnded) {
    return settle(req, st, refusal('body_unreadable', { message: 'Request body was already consumed' }));
  }
  st.chunks = [];
  st.size = 0;
  st.limit = limit;
  if (coding !== 'identity') st.coding = coding;
  req.on('data', onBodyData);
  req.on('end', onBodyEnd);
  req.on('error', onBodyError);
  req.on('aborted', onBodyAborted);
}

/** The read is over: the bytes (or the refusal) are recorded and handed to every waiter. */
function settle(req: IncomingMessage, st: BodyState, v: Buffer | Refusal): void {
  st.rawDone = v;
  st.chunks = undefined;
  const waiters = st.rawWaiters!;
  st.rawWaiters = undefined;
  for (const w of waiters) w(v, req);
}

/** The read ends early (too large, an error, an abort): the listeners come off, the waiters get `v`. */
function stopReading(req: IncomingMessage, v: Refusal): void {
  const st = readingState(req);
  if (st === undefined || st.rawDone !== undefined) return;
  req.removeListener('data', onBodyData);
  req.removeListener('end', onBodyEnd);
  req.removeListener('error', onBodyError);
  req.removeListener('aborted', onBodyAborted);
  settle(req, st, v);
}

function onBodyData(this: IncomingMessage, chunk: Buffer): void {
  const st = readingState(this);
  if (st === undefined || st.rawDone !== undefined) return;
  const size = (st.size = st.size! + chunk.length);
  if (size > st.limit!) {
    this.pause();
    stopReading(this, tooLarge(st.limit!));
    return;
  }
  st.chunks!.push(chunk);
}

function onBodyEnd(this: IncomingMessage): void {
  const st = readingState(this);
  // The stream has ended: none of the four listeners can run again with effect (`rawDone` guards them, and
  // while a body is decoded its chunks are gone), so they are left on the request rather than removed one by
  // one.
  if (st === undefined || st.rawDone !== undefined) return;
  const chunks = st.chunks!;
  const raw = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, st.size);
  if (st.coding === undefined) return settle(this, st, raw);
  st.chunks = undefined;
  decodeBody(raw, st.coding, st.limit!, (v) => settle(this, st, v));
}

function onBodyError(this: IncomingMessage): void {
  stopReading(this, refusal('body_unreadable'));
}

function onBodyAborted(this: IncomingMessage): void {
  stopReading(this, refusal('body_unreadable', { message: 'Request aborted' }));
}
