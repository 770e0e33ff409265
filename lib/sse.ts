/**
 * Server-Sent Events (the `text/event-stream` format of the WHATWG HTML standard, §9.2): an incremental, bounded
 * parser and the matching encoder. The forwarding engine reads a server's SSE answer event by event with it and
 * writes each event again after the outbound transforms.
 *
 * Pure: no I/O. The parser takes the stream in chunks of any size and split anywhere (a line, a CRLF pair or a
 * UTF-8 sequence cut between two chunks), accepts CR, LF and CRLF line ends and a leading byte order mark, joins
 * multi-line `data`, and keeps comments (keep-alives), `id`, `event` and `retry`. It holds at most one event:
 * a line or an event longer than its bound is a refusal, never memory growth.
 */

/** One event: the fields it set. `data` is its `data` lines joined with `\n`; absent when it had none. */
export interface SseEvent {
  readonly type: 'event';
  readonly data?: string;
  readonly event?: string;
  readonly id?: string;
  readonly retry?: number;
}

/** A comment line (`:` and the text after it, as it is), e.g. a keep-alive. */
export interface SseComment {
  readonly type: 'comment';
  readonly text: string;
}

export type SseItem = SseEvent | SseComment;

/** Why the parser stopped. Stable: the engine logs it. */
export interface SseRefusal {
  readonly ok: false;
  readonly reason: 'event_too_large';
  readonly message: string;
}

/** What one {@link SseParser.push} yields: the items completed by the chunk, or the refusal that stopped it. */
export type SseParseResult = { readonly ok: true; readonly items: SseItem[] } | SseRefusal;

/** The default bound of one event (the sum of its lines) and of one line, in characters. */
export const DEFAULT_MAX_EVENT_CHARS = 4 * 1024 * 1024;

/** A `retry` value: ASCII digits only, bounded so the number stays exact. */
const RETRY = /^[0-9]{1,15}$/;

/**
 * An incremental SSE parser. Feed it the stream's chunks in order with {@link push}; each call returns the items
 * the chunk completed. An event is complete at the blank line after it; what is left when the stream ends is
 * discarded, as the standard says.
 * @example
 * ```ts
 * const parser = new SseParser();
 * const out = parser.push('data: {"jsonrpc":"2.0",\ndata: "method":"ping"}\n\n');
 * if (out.ok) console.log(out.items); // [{ type: 'event', data: '{"jsonrpc":"2.0",\n"method":"ping"}' }]
 * ```
 */
export class SseParser {
  readonly #max: number;
  readonly #decoder = new TextDecoder('utf-8', { ignoreBOM: true });
  /** The start of a line not yet ended. */
  #pending = '';
  /** A chunk ended with CR: a LF at the start of the next one belongs to it. */
  #afterCR = false;
  #started = false;
  #failed: SseRefusal | undefined = undefined;
  /** The event being read: its data lines, their size, and its other fields. */
  #data: string[] | undefined = undefined;
  #size = 0;
  #event: string | undefined = undefined;
  #id: string | undefined = undefined;
  #retry: number | undefined = undefined;
  #any = false;

  /** `maxEventChars`: the longest line, and the most characters one event may hold (default 4 Mi). */
  constructor(maxEventChars: number = DEFAULT_MAX_EVENT_CHARS) {
    this.#max = maxEventChars;
  }

  /** Parse the next chunk (bytes, decoded as UTF-8 across chunks, or text). */
  push(chunk: Uint8Array | string): SseParseResult {
    if (this.#failed) return this.#failed;
    let text = typeof chunk === 'string' ? chunk : this.#decoder.decode(chunk, { stream: true });
    if (!this.#started && text !== '') {
      this.#started = true;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    if (text === '') return { ok: true, items: [] };
    if (this.#afterCR && text.charCodeAt(0) === 0x0a) text = text.slice(1);
    this.#afterCR = false;
    const items: SseItem[] = [];
    let from = 0;
    for (;;) {
      const end = lineEnd(text, from);
      if (end < 0) break;
      const line = this.#pending === '' ? text.slice(from, end) : this.#pending + text.slice(from, end);
      this.#pending = '';
      if (line.length > this.#max) return this.#fail();
      const failed = this.#line(line, items);
      if (failed) return failed;
      const crlf = text.charCodeAt(end) === 0x0d && text.charCodeAt(end + 1) === 0x0a;
      if (text.charCodeAt(end) === 0x0d && end + 1 === text.length) this.#afterCR = true;
      from = crlf ? end + 2 : end + 1;
    }
    const rest = text.length - from;
    if (rest > 0) {
      if (this.#pending.length + rest > this.#max) return this.#fail();
      this.#pending += text.slice(from);
    }
    return { ok: true, items };
  }

  #line(line: string, items: SseItem[]): SseRefusal | undefined {
    if (line === '') {
      this.#dispatch(items);
      return undefined;
    }
    if (line.charCodeAt(0) === 0x3a) {
      items.push({ type: 'comment', text: line.slice(1) });
      return undefined;
    }
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 0x20) value = value.slice(1);
    switch (field) {
      case 'data':
        this.#size += value.length + 1;
        if (this.#size > this.#max) return this.#fail();
        (this.#data ??= []).push(value);
        this.#any = true;
        break;
      case 'event':
        this.#event = value;
        this.#any = true;
        break;
      case 'id':
        if (!value.includes('\0')) {
          this.#id = value;
          this.#any = true;
        }
        break;
      case 'retry':
        if (RETRY.test(value)) {
          this.#retry = Number(value);
          this.#any = true;
        }
        break;
      default:
        break;
    }
    return undefined;
  }

  #dispatch(items: SseItem[]): void {
    if (this.#any) {
      const e: { type: 'event'; data?: string; event?: string; id?: string; retry?: number } = {
        type: 'event',
      };
      if (this.#data !== undefined) e.data = this.#data.join('\n');
      if (this.#event !== undefined) e.event = this.#event;
      if (this.#id !== undefined) e.id = this.#id;
      if (this.#retry !== undefined) e.retry = this.#retry;
      items.push(e);
    }
    this.#data = undefined;
    this.#size = 0;
    this.#event = undefined;
    this.#id = undefined;
    this.#retry = undefined;
    this.#any = false;
  }

  #fail(): SseRefusal {
    this.#pending = '';
    this.#data = undefined;
    this.#failed = {
      ok: false,
      reason: 'event_too_large',
      message: `An SSE line or event is longer than ${this.#max} characters`,
    };
    return this.#failed;
  }
}

/** The index of the next CR or LF at or after `from`, or -1. */
function lineEnd(text: string, from: number): number {
  const lf = text.indexOf('\n', from);
  const cr = text.indexOf('\r', from);
  if (cr < 0) return lf;
  if (lf < 0) return cr;
  return cr < lf ? cr : lf;
}

/** True when `v` holds a CR or LF (which would end the line it is written on). */
function hasLineEnd(v: string): boolean {
  return v.includes('\n') || v.includes('\r');
}

/**
 * Encode one event. `data` is split into one `data:` line per line (CR, LF or CRLF); `event`, `id` and `retry`
 * are written when set. Throws a TypeError for an `event` or `id` that holds a line end, or an `id` with NUL,
 * which no parser would read back.
 * @example
 * ```ts
 * console.log(encodeSseEvent({ event: 'message', data: '{"jsonrpc":"2.0","method":"ping"}' }));
 * // event: message\ndata: {"jsonrpc":"2.0","method":"ping"}\n\n
 * ```
 */
export function encodeSseEvent(e: Omit<SseEvent, 'type'>): string {
  let out = '';
  if (e.id !== undefined) {
    if (hasLineEnd(e.id) || e.id.includes('\0'))
      throw new TypeError('encodeSseEvent: id holds a line end or NUL');
    out += `id: ${e.id}\n`;
  }
  if (e.event !== undefined) {
    if (hasLineEnd(e.event)) throw new TypeError('encodeSseEvent: event holds a line end');
    out += `event: ${e.event}\n`;
  }
  if (e.retry !== undefined) {
    if (!Number.isSafeInteger(e.retry) || e.retry < 0)
      throw new TypeError('encodeSseEvent: retry must be a non-negative integer');
    out += `retry: ${e.retry}\n`;
  }
  if (e.data !== undefined) {
    let from = 0;
    for (;;) {
      const end = lineEnd(e.data, from);
      if (end < 0) break;
      out += `data: ${e.data.slice(from, end)}\n`;
      from = e.data.charCodeAt(end) === 0x0d && e.data.charCodeAt(end + 1) === 0x0a ? end + 2 : end + 1;
    }
    out += `data: ${e.data.slice(from)}\n`;
  }
  return out + '\n';
}

/** Encode a comment line (`:` and `text`); a TypeError for text holding a line end. */
export function encodeSseComment(text: string): string {
  if (hasLineEnd(text)) throw new TypeError('encodeSseComment: text holds a line end');
  return `:${text}\n`;
}
