/**
 * Counting the answer's bytes: audit replaces the response's `write` and `end` with ones that add up the body
 * lengths (nothing is kept) and call through, and hears `finish` and `close` to write the record once.
 * @see docs/middleware/audit.md
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestLocals } from '../../core/types.js';
import { localsOf } from '../../core/respond.js';
import type { Arrival } from './record.js';

/** What audit keeps per request (in `req.locals`) until the record is written. */
export interface Tracking extends Arrival {
  readonly req: IncomingMessage;
  bytesOut: number;
  done: boolean;
  /** The response's own write and end, called by the counting ones. */
  readonly write: (this: ServerResponse, ...args: unknown[]) => boolean;
  readonly end: (this: ServerResponse, ...args: unknown[]) => ServerResponse;
}

export interface ByteCounterOptions {
  /** Called once per request when the response finishes (`finished`) or closes first. */
  onEnd(res: ServerResponse, tracking: Tracking, finished: boolean): void;
  /** Called when a response closes without its state (`req.locals` was replaced during the request). */
  onLost(): void;
}

export interface ByteCounter {
  /** Starts counting `res`; a second call for the same request does nothing. */
  track(req: IncomingMessage, res: ServerResponse): void;
}

/**
 * The replacements and listeners are made once per instance and shared by every request: each gets the response
 * as `this` and finds the request's state in `req.locals` (`res.req` leads to it) under this instance's own key.
 * @see docs/performance.md#state-in-reqlocals
 */
export function createByteCounter(options: ByteCounterOptions): ByteCounter {
  const { onEnd, onLost } = options;
  const tracking = Symbol('mcpware.audit');
  type Marked = RequestLocals & { [tracking]?: Tracking };
  const trackingOf = (res: ServerResponse): Tracking | undefined =>
    (res.req?.locals as Marked | undefined)?.[tracking];

  // Without the state (req.locals replaced) the response's prototype writes: the bytes are not counted.
  function countingWrite(this: ServerResponse, chunk: unknown, encoding?: unknown): boolean {
    const t = trackingOf(this);
    const write = t?.write ?? protoOf(this).write;
    if (t !== undefined) t.bytesOut += chunkBytes(chunk, encoding);
    // eslint-disable-next-line prefer-rest-params -- passes the caller's arguments through untouched
    return write.apply(this, arguments as unknown as unknown[]);
  }
  function countingEnd(this: ServerResponse, chunk?: unknown, encoding?: unknown): ServerResponse {
    const t = trackingOf(this);
    const end = t?.end ?? protoOf(this).end;
    if (t !== undefined && typeof chunk !== 'function') t.bytesOut += chunkBytes(chunk, encoding);
    // eslint-disable-next-line prefer-rest-params -- passes the caller's arguments through untouched
    return end.apply(this, arguments as unknown as unknown[]);
  }
  function onFinish(this: ServerResponse): void {
    const t = trackingOf(this);
    if (t === undefined || t.done) return;
    t.done = true;
    onEnd(this, t, true);
  }
  function onClose(this: ServerResponse): void {
    // 'close' comes last, once per response: the place to say that a record was lost.
    const t = trackingOf(this);
    if (t === undefined) return onLost();
    if (t.done) return;
    t.done = true;
    onEnd(this, t, this.writableFinished);
  }

  return {
    track(req, res) {
      const locals = localsOf(req) as Marked;
      if (locals[tracking] !== undefined) return;
      locals[tracking] = {
        req,
        startedAt: Date.now(),
        start: performance.now(),
        bytesOut: 0,
        done: false,
        write: res.write as Tracking['write'],
        end: res.end as Tracking['end'],
      };
      res.write = countingWrite as ServerResponse['write'];
      res.end = countingEnd as ServerResponse['end'];
      res.on('finish', onFinish);
      res.on('close', onClose);
    },
  };
}

/** The response's prototype: what write/end fall back to when audit's state is gone. */
function protoOf(res: ServerResponse): Pick<Tracking, 'write' | 'end'> {
  return Object.getPrototypeOf(res) as Pick<Tracking, 'write' | 'end'>;
}

/** The byte length of a body chunk: strings in their encoding (UTF-8 by default), byte arrays as they are. */
export function chunkBytes(chunk: unknown, encoding: unknown): number {
  if (typeof chunk === 'string')
    return Buffer.byteLength(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8');
  if (chunk instanceof Uint8Array) return chunk.byteLength;
  return 0;
}
