/**
 * The answer to one request. It is one JSON body, unless something is sent before the response (a notification,
 * or a legacy server-to-client request) while the client accepts `text/event-stream`: the answer then becomes a
 * request-scoped SSE stream carrying those messages in order and, last, the response (2026-07-28 and 2025-11-25
 * Streamable HTTP alike). No event ids: the stream is not resumable.
 *
 * @see docs/middleware/dispatch.md
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Era } from '../../lib/errors.js';
import type { JsonObject } from '../../lib/jsonrpc.js';
import type { McpRequest } from '../../lib/request.js';
import { errorMeta, log } from '../../core/log.js';
import { localsOf } from '../../core/respond.js';
import type { RequestLocals } from '../../core/types.js';
import type { DispatchConfig } from './options.js';
import { applyOutbound } from '../../core/outbound.js';
import { clip } from '../../lib/clip.js';

/** The `MCP-Protocol-Version` answered: the request's, when it named a revision spoken in that era. */
export function spokenVersion(
  config: DispatchConfig,
  mcp: McpRequest,
  era: Era | undefined,
): string | undefined {
  const h = mcp.headers.protocolVersion;
  if (h === undefined) return undefined;
  const spoken =
    era === 'modern'
      ? config.modernVersions
      : era === 'legacy'
        ? config.legacyVersions
        : config.supportedVersions;
  return spoken.includes(h) ? h : undefined;
}

/**
 * Write a whole answer: the status, the `MCP-Protocol-Version` header when `version` is given, and the JSON
 * `text` (or an empty body). Headers other middlewares set are kept. Only ends the response when its headers
 * were already sent.
 */
export function writeAnswer(
  res: ServerResponse,
  status: number,
  text: string | undefined,
  version?: string,
): void {
  if (res.headersSent || res.writableEnded || res.destroyed) {
    if (!res.writableEnded && !res.destroyed) res.end();
    return;
  }
  // The headers as one flat list to writeHead, which merges them with any set earlier: with none set earlier,
  // node writes them as they are and builds no header map. see docs/performance.md#one-writehead-per-answer
  const headers: (string | number)[] = [];
  if (version !== undefined) headers.push('MCP-Protocol-Version', version);
  if (text === undefined) {
    headers.push('Content-Length', 0);
    res.writeHead(status, headers);
    res.end();
    return;
  }
  headers.push('Content-Type', 'application/json', 'Content-Length', Buffer.byteLength(text));
  res.writeHead(status, headers);
  res.end(text);
}

/** One SSE event carrying a JSON-RPC message. */
function sseEvent(text: string): string {
  return `event: message\ndata: ${text}\n\n`;
}

/** Whether the Accept header lists `text/event-stream`. */
function acceptsEventStream(req: IncomingMessage): boolean {
  const a = req.headers.accept;
  if (typeof a !== 'string') return false;
  return a.split(',').some((part) => {
    const semi = part.indexOf(';');
    return (semi < 0 ? part : part.slice(0, semi)).trim().toLowerCase() === 'text/event-stream';
  });
}

export class Reply {
  readonly locals: RequestLocals;
  /** Whether the client accepts an SSE answer (read from Accept on first use). */
  #accepts: boolean | undefined = undefined;
  #streaming = false;
  #closed = false;
  /** Messages sent before the response, in order; made only when there is one. */
  #queue: Promise<void> | undefined = undefined;
  /** Stops the keep-alive timer of a stream (see #keepAlive). */
  #stopKeepAlive: (() => void) | undefined = undefined;

  constructor(
    readonly config: DispatchConfig,
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    readonly mcp: McpRequest,
    readonly era: Era,
  ) {
    this.locals = localsOf(req);
  }

  /** Whether the final response has been handed to {@link send} (it may still wait behind queued messages). */
  get answered(): boolean {
    return this.#closed;
  }

  /** Whether the client accepts an SSE answer. */
  canStream(): boolean {
    return (this.#accepts ??= acceptsEventStream(this.req));
  }

  #gone(): boolean {
    return this.res.destroyed || this.res.writableEnded;
  }

  #startStream(): void {
    const res = this.res;
    this.#streaming = true;
    this.#keepAlive();
    res.statusCode = 200;
    res.setHeader('Content-Type', 'text/event-stream');
    res.setHeader('Cache-Control', 'no-cache');
    res.setHeader('X-Accel-Buffering', 'no');
    const version = spokenVersion(this.config, this.mcp, this.era);
    if (version !== undefined) res.setHeader('MCP-Protocol-Version', version);
    res.flushHeaders();
  }

  /**
   * Queue a message before the response; false when it cannot be delivered (no SSE, answered, client gone). A
   * message that fails its outbound transform is dropped; when it is `critical` (the stream makes no sense
   * without it) the connection is closed instead.
   */
  push(message: JsonObject, critical = false): boolean {
    const { res } = this;
    if (this.#closed || !this.canStream() || this.#gone() || (res.headersSent && !this.#streaming))
      return false;
    this.#queue = (this.#queue ?? Promise.resolve()).then(() => this.#write(message, critical));
    return true;
  }

  async #write(message: JsonObject, critical: boolean): Promise<void> {
    const { res, mcp, locals } = this;
    if (this.#gone()) return;
    let text: string;
    try {
      text = JSON.stringify(await applyOutbound(locals, message, mcp.method ?? '', 'notification'));
    } catch (err) {
      // Fail closed: a message that could not be transformed (redaction) or encoded is not sent.
      const what = typeof message.method === 'string' ? message.method : 'message';
      log(
        this.config.logger,
        'error',
        `dispatch: a ${clip(what, 128)} message of ${clip(mcp.method ?? '', 128)} was dropped`,
        {
          error: errorMeta(err),
        },
      );
      if (critical) res.destroy();
      return;
    }
    // The client may have gone while the transform ran: then nothing more is written.
    if (this.#gone()) return;
    if (!this.#streaming) this.#startStream();
    locals.streamed = (locals.streamed ?? 0) + 1;
    res.write(sseEvent(text));
  }

  /**
   * Every SSE answer (listen stream or request-scoped) writes a `: keep-alive` comment at the `keepAliveMs`
   * interval while it lasts, so idle-timeout proxies keep a silent stream open; the timer stops when the answer
   * is delivered or the connection closes.
   */
  #keepAlive(): void {
    const ms = this.config.keepAliveMs;
    if (ms <= 0) return;
    const timer = setInterval(() => this.comment('keep-alive'), ms);
    timer.unref?.();
    const stop = (): void => clearInterval(timer);
    this.#stopKeepAlive = stop;
    this.res.once('close', stop);
  }

  /**
   * Start the SSE answer before any message (a session's GET stream, whose headers tell the client it is open);
   * false when the client does not accept one, is gone, or the answer has started otherwise.
   */
  openStream(): boolean {
    if (this.#streaming) return true;
    if (this.#closed || !this.canStream() || this.#gone() || this.res.headersSent) return false;
    this.#startStream();
    return true;
  }

  /** Queue a notification (see push). */
  notify(method: string, params: JsonObject): boolean {
    return this.push({ jsonrpc: '2.0', method, params });
  }

  /** Queue an SSE comment line (keep-alive); only on a stream already started. */
  comment(text: string): void {
    if (this.#closed || !this.#streaming) return;
    this.#queue = (this.#queue ?? Promise.resolve()).then(() => {
      if (!this.#gone()) this.res.write(`: ${text}\n\n`);
    });
  }

  /** Write the final response (JSON, or the last SSE event) after the queued messages. */
  send(status: number, text: string, record: RequestLocals['response']): void | Promise<void> {
    this.#closed = true;
    // see docs/performance.md#synchronous-answers
    if (this.#queue) return this.#queue.then(() => this.#deliver(status, text, record));
    this.#deliver(status, text, record);
  }

  /** Bytes written but not yet flushed to the client. */
  buffered(): number {
    return this.res.writableLength;
  }

  #deliver(status: number, text: string, record: RequestLocals['response']): void {
    const { res, locals } = this;
    if (this.#streaming) {
      this.#stopKeepAlive?.();
      // The ResponseRecord contract: `stream` marks an SSE answer (an error keeps its code).
      locals.response = { ...record, resultType: 'stream' };
      if (!this.#gone()) res.end(sseEvent(text));
      return;
    }
    locals.response = record;
    writeAnswer(res, status, text, status < 300 ? spokenVersion(this.config, this.mcp, this.era) : undefined);
  }
}
