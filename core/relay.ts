/**
 * The answer side of the forwarding engine: a server's web `Response` written to the client's node response
 * through the outbound transforms (redaction), with the outcome recorded for audit and metrics. A JSON answer
 * is read whole (bounded); an SSE answer is relayed event by event, reading the server's stream only as fast as
 * the client takes it. Only the server's MCP headers pass.
 *
 * @see docs/architecture.md
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { classifyAnswer } from '../lib/answer.js';
import { type RequestId, refusal } from '../lib/errors.js';
import type { JsonObject } from '../lib/jsonrpc.js';
import { isPlainHeaderValue } from '../lib/sentinel.js';
import { type SseEvent, SseParser, encodeSseComment, encodeSseEvent } from '../lib/sse.js';
import { errorMeta, log } from './log.js';
import { applyOutbound } from './outbound.js';
import { localsOf, sendInternalError, sendRefusal } from './respond.js';
import type { Logger, RequestLocals, ResponseRecord } from './types.js';
import { UpstreamError } from './upstream-error.js';

/** What the relay of one answer needs to know about the exchange. */
export interface RelayContext {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  /** The factory's name (refusals are recorded as by it, and log lines start with it). */
  readonly by: string;
  readonly logger: Logger;
  readonly maxAnswerBytes: number;
  /** The request's JSON-RPC method; `''` for a GET stream or a DELETE. */
  readonly method: string;
  /** The request's id; `undefined` for a notification, a posted response, GET and DELETE. */
  readonly id: RequestId | undefined;
  /** Aborted when the exchange ends early (client gone, timeout, close): the server's body is cancelled. */
  readonly signal: AbortSignal;
  /** Applied to a result before the outbound transforms (the tool views on `tools/list`); `undefined` refuses it. */
  readonly viewResult?: (result: JsonObject) => JsonObject | undefined;
  /** The client's `Mcp-Session-Id` for the server's session id (the engine's signed token); undefined withholds it. */
  readonly wrapSession?: (serverId: string) => string | undefined;
}

/** The server headers that pass to the client (lower case). Every other one stays behind. */
const PASSED_HEADERS = ['mcp-session-id', 'mcp-protocol-version', 'retry-after'] as const;
const NAMES: Readonly<Record<(typeof PASSED_HEADERS)[number], string>> = {
  'mcp-session-id': 'Mcp-Session-Id',
  'mcp-protocol-version': 'MCP-Protocol-Version',
  'retry-after': 'Retry-After',
};
/** The longest value of a passed header. */
const MAX_HEADER_VALUE = 256;

/**
 * The allow-listed headers of a server's answer, as a flat list of names and values. The server's
 * `Mcp-Session-Id` reaches the client only as `wrapSession` wraps it (bound to the caller); without it, never.
 */
export function passedHeaders(
  response: Response,
  wrapSession?: (serverId: string) => string | undefined,
): (string | number)[] {
  const out: (string | number)[] = [];
  for (const name of PASSED_HEADERS) {
    const v = response.headers.get(name);
    if (v === null || v.length > MAX_HEADER_VALUE || !isPlainHeaderValue(v)) continue;
    if (name !== 'mcp-session-id') out.push(NAMES[name], v);
    else {
      const wrapped = wrapSession?.(v);
      if (wrapped !== undefined) out.push(NAMES[name], wrapped);
    }
  }
  return out;
}

/** The media type of a Content-Type value, lower case, without parameters. */
export function mediaType(response: Response): string {
  const ct = response.headers.get('content-type') ?? '';
  const semi = ct.indexOf(';');
  return (semi < 0 ? ct : ct.slice(0, semi)).trim().toLowerCase();
}

/** Decodes a whole answer (never streaming, so it holds no state between answers); invalid UTF-8 throws. */
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** Cancel a body nobody will read (its errors are of no interest). */
export function discard(response: Response): void {
  if (response.body !== null && !response.bodyUsed) response.body.cancel().catch(() => undefined);
}

/**
 * Read a JSON body whole, up to `max` bytes, and parse it. An `UpstreamError('upstream_invalid')` for a larger
 * body or invalid JSON. Stops (and cancels the body) when `signal` aborts.
 */
export async function readJsonBody(response: Response, max: number, signal: AbortSignal): Promise<unknown> {
  const body = response.body;
  if (body === null) throw new UpstreamError('upstream_invalid', 'the answer has no body');
  const reader = body.getReader();
  const stop = (): void => void reader.cancel().catch(() => undefined);
  signal.addEventListener('abort', stop, { once: true });
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > max) {
        stop();
        throw new UpstreamError('upstream_invalid', `the answer is larger than ${max} bytes`);
      }
      chunks.push(value);
    }
  } finally {
    signal.removeEventListener('abort', stop);
  }
  if (signal.aborted) throw signal.reason;
  try {
    return JSON.parse(UTF8.decode(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
  } catch (err) {
    throw new UpstreamError('upstream_invalid', 'the answer is not JSON', { cause: err });
  }
}

/** Why a status is a failure of the server (not the client's request), or `undefined`. */
function failureOf(status: number, media: string): UpstreamError | undefined {
  if (status === 401 || status === 403 || status >= 500)
    return new UpstreamError('upstream_error', `the server answered ${status}`);
  if (status >= 300 && status < 400)
    return new UpstreamError('upstream_invalid', `the server redirected (${status})`);
  if (status >= 200 && status < 300 && status !== 200 && status !== 202 && status !== 204)
    return new UpstreamError('upstream_invalid', `the server answered ${status}`);
  if (status === 200 && media !== 'application/json' && media !== 'text/event-stream')
    return new UpstreamError('upstream_invalid', 'the answer is neither JSON nor an event stream');
  return undefined;
}

/**
 * Read the server's response message to the request `id` from its answer (JSON, or the response event of an SSE
 * stream, other events dropped), bounded by `max` per answer or event. An {@link UpstreamError} for a failed
 * status or an answer that holds no such response. The engine's list aggregation reads pages with it.
 */
export async function readAnswer(
  response: Response,
  id: RequestId,
  max: number,
  signal: AbortSignal,
): Promise<JsonObject> {
  const media = mediaType(response);
  const failure =
    failureOf(response.status, media) ??
    (response.status === 200
      ? undefined
      : new UpstreamError('upstream_invalid', `the server answered ${response.status}`));
  if (failure !== undefined) {
    discard(response);
    throw failure;
  }
  if (media === 'application/json') {
    const value = await readJsonBody(response, max, signal);
    const a = classifyAnswer(value);
    if ((a.kind === 'result' || a.kind === 'error') && (a.id === undefined || a.id === id))
      return value as JsonObject;
    throw new UpstreamError('upstream_invalid', 'the answer is not the JSON-RPC response to the request');
  }
  if (response.body === null) throw new UpstreamError('upstream_invalid', 'the answer has no body');
  const reader = response.body.getReader();
  const stop = (): void => void reader.cancel().catch(() => undefined);
  signal.addEventListener('abort', stop, { once: true });
  const parser = new SseParser(max);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const parsed = parser.push(value);
      if (!parsed.ok) throw new UpstreamError('upstream_invalid', parsed.message);
      for (const item of parsed.items) {
        if (item.type !== 'event' || item.data === undefined) continue;
        const message = parseOrUndefined(item.data);
        const a = classifyAnswer(message);
        if ((a.kind === 'result' || a.kind === 'error') && a.id === id) {
          stop();
          return message as JsonObject;
        }
      }
    }
  } finally {
    signal.removeEventListener('abort', stop);
  }
  if (signal.aborted) throw signal.reason;
  throw new UpstreamError('upstream_invalid', 'the event stream ended without the response');
}

function parseOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Write a whole JSON answer with the passed headers. */
export function writeJson(
  res: ServerResponse,
  status: number,
  headers: (string | number)[],
  text: string,
): void {
  if (res.headersSent || res.destroyed) return;
  headers.push('Content-Type', 'application/json', 'Content-Length', Buffer.byteLength(text));
  res.writeHead(status, headers);
  res.end(text);
}

/** Relay a server's answer to the client. Throws an {@link UpstreamError} for an answer that is not MCP. */
export async function relay(ctx: RelayContext, response: Response): Promise<void> {
  const media = mediaType(response);
  // A session's end carries no message: the SDK v1 answers a DELETE 200 without a body.
  if (ctx.req.method === 'DELETE' && response.status === 200 && media === '') {
    discard(response);
    return writeEmpty(ctx.res, 200, passedHeaders(response, ctx.wrapSession));
  }
  const failure = failureOf(response.status, media);
  if (failure !== undefined) {
    discard(response);
    throw failure;
  }
  const headers = passedHeaders(response, ctx.wrapSession);
  if (response.status === 202 || response.status === 204) {
    discard(response);
    return writeEmpty(ctx.res, response.status, headers);
  }
  if (response.status === 200 && media === 'text/event-stream') return relayStream(ctx, response, headers);
  if (media !== 'application/json') {
    discard(response);
    throw new UpstreamError('upstream_invalid', `the server answered ${response.status} without JSON`);
  }
  const value = await readJsonBody(response, ctx.maxAnswerBytes, ctx.signal);
  const a = classifyAnswer(value);
  // A 4xx passes only as the server's own JSON-RPC refusal.
  if (response.status !== 200 && a.kind !== 'error')
    throw new UpstreamError(
      'upstream_invalid',
      `the server answered ${response.status} without a JSON-RPC error`,
    );
  if ((a.kind !== 'result' && a.kind !== 'error') || (a.id !== undefined && a.id !== ctx.id))
    throw new UpstreamError('upstream_invalid', 'the answer is not the JSON-RPC response to the request');
  const text = await answerText(ctx, value as JsonObject);
  if (text === undefined) return;
  writeJson(ctx.res, response.status, headers, text);
}

function writeEmpty(res: ServerResponse, status: number, headers: (string | number)[]): void {
  if (res.headersSent || res.destroyed) return;
  headers.push('Content-Length', 0);
  res.writeHead(status, headers);
  res.end();
}

/**
 * The response message (a result or an error for the request) after the views and the outbound transforms,
 * encoded, with its outcome recorded on `req.locals.response`. `undefined` once an internal error was answered.
 * An error passes as the server sent it (code, message, data).
 */
export async function answerText(
  ctx: RelayContext,
  message: JsonObject,
  streamed = false,
): Promise<string | undefined> {
  const locals = localsOf(ctx.req);
  const a = classifyAnswer(message);
  if (a.kind === 'error') {
    const error = message.error as JsonObject;
    const e: JsonObject = { message: error.message };
    if (Object.hasOwn(error, 'data')) e.data = error.data;
    // The server's own words may carry what redaction masks: its message and data go through the transforms too.
    let masked: JsonObject;
    try {
      masked = (await applyOutbound(locals, e, ctx.method, 'error')) as JsonObject;
    } catch (err) {
      return failedTransform(ctx, locals, a.id, err, streamed);
    }
    const out: JsonObject = { code: error.code, message: masked.message };
    if (Object.hasOwn(masked, 'data')) out.data = masked.data;
    record(locals, { code: a.code }, streamed);
    return JSON.stringify(
      a.id === undefined ? { jsonrpc: '2.0', error: out } : { jsonrpc: '2.0', id: a.id, error: out },
    );
  }
  if (a.kind !== 'result') throw new UpstreamError('upstream_invalid', 'not a JSON-RPC response');
  let result: unknown = a.result;
  if (ctx.viewResult !== undefined) {
    result = ctx.viewResult(a.result);
    if (result === undefined)
      throw new UpstreamError('upstream_invalid', `a ${ctx.method} result the views cannot read`);
  }
  try {
    const out = await applyOutbound(locals, result, ctx.method, 'result');
    const rec: ResponseRecord = { resultType: a.resultType };
    if (ctx.method === 'tools/call') rec.toolError = a.toolError;
    const text = JSON.stringify({ jsonrpc: '2.0', id: a.id, result: out });
    record(locals, rec, streamed);
    return text;
  } catch (err) {
    return failedTransform(ctx, locals, a.id, err, streamed);
  }
}

/**
 * Fail closed: an answer the transforms (redaction) could not handle is not sent. On a stream, a generic error
 * event in its place; else the generic -32603 answer (`undefined`: already written).
 */
function failedTransform(
  ctx: RelayContext,
  locals: RequestLocals,
  id: RequestId | undefined,
  err: unknown,
  streamed: boolean,
): string | undefined {
  if (streamed) {
    log(ctx.logger, 'error', `${ctx.by}: an answer to ${ctx.method} failed its outbound transform`, {
      error: errorMeta(err),
    });
    record(locals, { code: -32603 }, streamed);
    const error = { code: -32603, message: 'Internal error' };
    return JSON.stringify(id === undefined ? { jsonrpc: '2.0', error } : { jsonrpc: '2.0', id, error });
  }
  sendInternalError(ctx.req, ctx.res, err, ctx.by, ctx.logger);
  return undefined;
}

function record(locals: RequestLocals, rec: ResponseRecord, streamed: boolean): void {
  // The ResponseRecord contract: `stream` marks an SSE answer (an error keeps its code).
  locals.response = streamed ? { ...rec, resultType: 'stream' } : rec;
}

/** Resolves once the response can take more (drain), or has closed. */
function writable(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/**
 * Relay an SSE answer: the headers at once, then each event as it completes, its JSON-RPC message through the
 * transforms; reading pauses while the client's socket is full. An event over the bound, or a stream that
 * fails, ends the answer (the failure is logged).
 */
async function relayStream(
  ctx: RelayContext,
  response: Response,
  headers: (string | number)[],
): Promise<void> {
  const { res } = ctx;
  const locals = localsOf(ctx.req);
  if (res.headersSent || res.destroyed) return discard(response);
  headers.push('Content-Type', 'text/event-stream', 'Cache-Control', 'no-cache', 'X-Accel-Buffering', 'no');
  res.writeHead(200, headers);
  res.flushHeaders();
  locals.response = { resultType: 'stream' };
  if (response.body === null) return void res.end();
  const reader = response.body.getReader();
  const stop = (): void => void reader.cancel().catch(() => undefined);
  ctx.signal.addEventListener('abort', stop, { once: true });
  const parser = new SseParser(ctx.maxAnswerBytes);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done || res.destroyed) break;
      const parsed = parser.push(value);
      if (!parsed.ok) {
        log(ctx.logger, 'warn', `${ctx.by}: the server's event stream was cut`, { reason: parsed.reason });
        stop();
        break;
      }
      let full = false;
      for (const item of parsed.items) {
        const text = item.type === 'comment' ? encodeSseComment(item.text) : await eventText(ctx, item);
        if (text === undefined || res.destroyed || res.writableEnded) continue;
        if (!res.write(text)) full = true;
      }
      if (full && !res.destroyed) await writable(res);
    }
  } catch (err) {
    if (!ctx.signal.aborted)
      log(ctx.logger, 'warn', `${ctx.by}: the server's event stream failed`, { error: errorMeta(err) });
  } finally {
    ctx.signal.removeEventListener('abort', stop);
    if (res.destroyed) stop();
  }
  if (!res.writableEnded && !res.destroyed) res.end();
}

/** One event re-encoded after its message went through the transforms; `undefined` to drop it. */
async function eventText(ctx: RelayContext, e: SseEvent): Promise<string | undefined> {
  if (e.data === undefined || e.data === '') return encodeSseEvent(e);
  let value: unknown;
  try {
    value = JSON.parse(e.data);
  } catch {
    log(ctx.logger, 'warn', `${ctx.by}: dropped an event of the server's stream that is not JSON`);
    return undefined;
  }
  const a = classifyAnswer(value);
  if ((a.kind === 'result' || a.kind === 'error') && ctx.id !== undefined && a.id === ctx.id) {
    try {
      const text = await answerText(ctx, value as JsonObject, true);
      return text === undefined ? undefined : encodeSseEvent({ ...e, data: text });
    } catch (err) {
      log(ctx.logger, 'warn', `${ctx.by}: dropped the server's response event`, { error: errorMeta(err) });
      return undefined;
    }
  }
  if (a.kind !== 'request' && a.kind !== 'notification') {
    log(
      ctx.logger,
      'warn',
      `${ctx.by}: dropped an event of the server's stream that is not for this request`,
    );
    return undefined;
  }
  const locals = localsOf(ctx.req);
  try {
    const out = await applyOutbound(locals, value, ctx.method, 'notification');
    locals.streamed = (locals.streamed ?? 0) + 1;
    return encodeSseEvent({ ...e, data: JSON.stringify(out) });
  } catch (err) {
    // Fail closed, as dispatch does: a message the transforms could not handle is not sent.
    log(ctx.logger, 'error', `${ctx.by}: a message of ${ctx.method} was dropped`, { error: errorMeta(err) });
    return undefined;
  }
}

/** Answer an upstream failure as its refusal (when nothing was written yet), logging the status only. */
export function refuseUpstream(
  ctx: Pick<RelayContext, 'req' | 'res' | 'by' | 'logger'>,
  err: UpstreamError,
): void {
  log(ctx.logger, 'warn', `${ctx.by}: upstream failure`, { reason: err.reason, message: err.message });
  if (ctx.res.headersSent) {
    if (!ctx.res.writableEnded) ctx.res.end();
    return;
  }
  sendRefusal(ctx.req, ctx.res, refusal(err.reason), ctx.by);
}
