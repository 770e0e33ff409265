/**
 * The request side of the forwarding engine: which requests it forwards and how (the parse step, the tool views
 * on `tools/call`, the header allow-list, the body), the exchanges in flight (timeout, client gone, legacy
 * cancellation, shutdown), and the failures turned into refusals. The answer side is core/relay.ts.
 *
 * @see docs/architecture.md
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { clip } from '../lib/clip.js';
import { ErrorCode, type RefusalReason, type RequestId, isRequestId, refusal } from '../lib/errors.js';
import {
  type ForwardSessionVerifyReason,
  signForwardSession,
  verifyForwardSession,
} from '../lib/forward-session.js';
import type { JsonObject } from '../lib/jsonrpc.js';
import { principalKey } from '../lib/principal.js';
import type { McpRequest } from '../lib/request.js';
import { encodeHeaderValue } from '../lib/sentinel.js';
import { stateIfAny } from './body.js';
import type { ForwardRequest, ResolvedForwardOptions, Send } from './forward.js';
import { UpstreamError } from './upstream-error.js';
import { aggregateList, isAggregated, viewListResult } from './forward-lists.js';
import { errorMeta, log } from './log.js';
import { onParsed } from './parse-step.js';
import { type RelayContext, refuseUpstream, relay } from './relay.js';
import { localsOf, sendError, sendInternalError, sendRefusal } from './respond.js';
import { resolveThrough, toolViewsOf } from './tool-views.js';
import type { Middleware } from './types.js';

/** The client headers that go to the server (lower case), besides every `Mcp-Param-*`. */
export const FORWARDED_HEADERS: readonly string[] = [
  'accept',
  'mcp-protocol-version',
  'mcp-session-id',
  'mcp-method',
  'mcp-name',
  'last-event-id',
];
/** The prefix of the mirrored parameter headers, every one of which goes to the server. */
export const PARAM_PREFIX = 'mcp-param-';
/** What a client that sends no Accept gets from the server: either of MCP's two answers. */
const DEFAULT_ACCEPT = 'application/json, text/event-stream';
/** The most exchanges a legacy `notifications/cancelled` can name at once (the rest cannot be cancelled so). */
const MAX_CANCELLABLE = 10_000;
/** The longest request id kept for cancellation. */
const MAX_CANCEL_ID = 256;

/** How a forwarded session token that fails verification is refused (all 404, the transport's "start over"). */
const SESSION_REFUSALS: Readonly<Record<ForwardSessionVerifyReason, RefusalReason>> = {
  malformed: 'session_invalid',
  too_large: 'session_invalid',
  bad_signature: 'session_invalid',
  expired: 'session_expired',
  foreign: 'session_foreign',
};

/**
 * The headers for the server, from the client's request: the MCP ones, nothing else. `Mcp-Session-Id` is the
 * server's own id (`serverSession`, unwrapped from the client's verified token), never the client's value.
 */
export function forwardHeaders(
  req: IncomingMessage,
  post: boolean,
  actualName?: string,
  serverSession?: string,
): Headers {
  const h = new Headers();
  for (const name of FORWARDED_HEADERS) {
    const v = req.headers[name];
    if (typeof v === 'string') h.set(name, v);
  }
  for (const name of Object.keys(req.headers)) {
    const v = req.headers[name];
    if (name.startsWith(PARAM_PREFIX) && typeof v === 'string') h.set(name, v);
  }
  if (post) {
    h.set('content-type', 'application/json');
    if (!h.has('accept')) h.set('accept', DEFAULT_ACCEPT);
  }
  if (actualName !== undefined && h.has('mcp-name')) h.set('mcp-name', encodeHeaderValue(actualName));
  h.delete('mcp-session-id');
  if (serverSession !== undefined) h.set('mcp-session-id', serverSession);
  return h;
}

/** One exchange in flight. */
interface Exchange {
  readonly controller: AbortController;
  timer: NodeJS.Timeout | undefined;
  /** Why it was aborted, when it was. */
  aborted: 'client' | 'timeout' | 'cancelled' | 'closing' | undefined;
  cancelKey: string | undefined;
  readonly ended: Promise<void>;
  end(): void;
}

/** What one forwarded message is. */
interface Outgoing {
  readonly method: 'POST' | 'GET' | 'DELETE';
  /** The JSON-RPC method (`''` for GET and DELETE). */
  readonly rpcMethod: string;
  readonly id: RequestId | undefined;
  readonly message?: JsonObject;
  /** The body as received, when the engine did not rewrite the message. */
  readonly raw?: Buffer;
  readonly headers: Headers;
  readonly timed: boolean;
  readonly viewResult?: RelayContext['viewResult'];
  /** The client's session, verified: its token and the server's id it carries. */
  readonly session?: ClientSession;
}

/** A client's verified forwarded session. */
interface ClientSession {
  readonly token: string;
  readonly serverId: string;
}

export class Engine {
  readonly #by: string;
  readonly #send: Send;
  readonly #o: ResolvedForwardOptions;
  readonly #inflight = new Set<Exchange>();
  readonly #cancellable = new Map<string, Exchange>();
  /** Open streams per caller (`principalKey()`), and in all: bounded by maxStreams. */
  readonly #streams = new Map<string, number>();
  #streamCount = 0;
  /** The actual tool names the server listed in a relayed `tools/list` answer (metrics' `tool` label). */
  readonly listed = new Set<string>();
  #closed = false;

  constructor(by: string, send: Send, options: ResolvedForwardOptions) {
    this.#by = by;
    this.#send = send;
    this.#o = options;
  }

  get options(): ResolvedForwardOptions {
    return this.#o;
  }

  /** The factory's name: refusals are recorded as by it, and log lines start with it. */
  get by(): string {
    return this.#by;
  }

  readonly handle: Middleware = (req, res) => {
    if (this.#closed) return sendRefusal(req, res, refusal('unavailable'), this.#by);
    const m = req.method;
    if (m === 'POST') return onParsed(req, res, this.#by, this.#o.logger, this.#onMessage, this.#o.body);
    if (m === 'GET' || m === 'DELETE') {
      // GET and DELETE carry no message: a refusal has no id.
      const session = this.#session(req, res, { id: undefined });
      if (session === null) return;
      const out: Outgoing = {
        method: m,
        rpcMethod: '',
        id: undefined,
        headers: forwardHeaders(req, false, undefined, session?.serverId),
        timed: m === 'DELETE',
        ...(session !== undefined ? { session } : {}),
      };
      return void this.#exchange(req, res, out);
    }
    sendRefusal(
      req,
      res,
      refusal('method_not_allowed', { message: 'Method not allowed: use POST, GET or DELETE' }),
      this.#by,
      {
        headers: { Allow: 'GET, POST, DELETE' },
      },
    );
  };

  #onMessage = (mcp: McpRequest, req: IncomingMessage, res: ServerResponse): void | Promise<void> => {
    const locals = localsOf(req);
    // A 2026-07-28 request (its envelope names the revision) has no session: the header is ignored, not sent on.
    const session = mcp.metaVersion !== undefined ? undefined : this.#session(req, res, {});
    if (session === null) return;
    const method = mcp.method ?? '';
    let message = mcp.message.raw;
    let actualName: string | undefined;
    if (mcp.kind === 'notification' && method === 'notifications/cancelled') this.#cancel(req, mcp.params);
    if (mcp.kind === 'request' && method === 'tools/call') {
      const name = mcp.params?.name;
      const views = toolViewsOf(locals);
      const actual = typeof name === 'string' && views.length > 0 ? resolveThrough(name, views) : name;
      if (typeof name === 'string' && actual === undefined) return this.#unknownTool(req, res, mcp, name);
      if (typeof actual === 'string' && actual !== name) {
        actualName = actual;
        message = { ...message, params: { ...mcp.params, name: actual } };
      }
      if (typeof name === 'string' && typeof actual === 'string' && this.listed.has(actual))
        locals.tool = name;
    }
    if (method === 'subscriptions/listen') locals.chargedMs = 0;
    const raw = actualName === undefined ? rawBody(req) : undefined;
    const out: Outgoing = {
      method: 'POST',
      rpcMethod: method,
      id: mcp.kind === 'request' ? mcp.id : undefined,
      message,
      ...(raw !== undefined ? { raw } : {}),
      headers: forwardHeaders(req, true, actualName, session?.serverId),
      timed: method !== 'subscriptions/listen',
      ...(session !== undefined ? { session } : {}),
      ...(mcp.kind === 'request' ? this.#listView(req, method) : {}),
    };
    if (mcp.kind === 'request' && this.#o.pageSize > 0 && isAggregated(method))
      return this.#aggregate(req, res, mcp, out);
    return this.#exchange(req, res, out);
  };

  /**
   * The client's `Mcp-Session-Id`, verified for this caller: its session (undefined when it carries none), or
   * null when refused (404 answered here, the server never called).
   */
  #session(
    req: IncomingMessage,
    res: ServerResponse,
    opts: { id?: undefined },
  ): ClientSession | undefined | null {
    const token = req.headers['mcp-session-id'];
    if (token === undefined) return undefined;
    const principal = principalKey(req.locals?.principal);
    const v = verifyForwardSession(token, principal, this.#o.sessionKeys, Date.now());
    if (v.ok) return { token: token as string, serverId: v.serverId };
    const r = refusal(SESSION_REFUSALS[v.reason], { era: 'legacy' });
    sendRefusal(req, res, r, this.#by, { ...opts, detail: v.reason });
    return null;
  }

  /**
   * The `Mcp-Session-Id` the client receives for the server's `serverId`: the client's own token when it
   * carries that id, else a new token for this caller; undefined (the header withheld) when it cannot be wrapped.
   */
  #wrapSession(req: IncomingMessage, out: Outgoing, serverId: string): string | undefined {
    if (out.session !== undefined && out.session.serverId === serverId) return out.session.token;
    const principal = principalKey(req.locals?.principal);
    const expiresAt = Date.now() + this.#o.sessionTtlMs;
    return signForwardSession(serverId, principal, expiresAt, this.#o.sessionKeys[0]!);
  }

  /** The tool views applied to a relayed `tools/list` page (and the names it lists remembered). */
  #listView(req: IncomingMessage, method: string): Pick<Outgoing, 'viewResult'> {
    if (method !== 'tools/list') return {};
    return { viewResult: (result) => viewListResult(this, req, result) };
  }

  /** -32602 for a tool no view resolves, as dispatch answers it; the server is never called. */
  #unknownTool(req: IncomingMessage, res: ServerResponse, mcp: McpRequest, name: string): void {
    const locals = localsOf(req);
    locals.response = { code: ErrorCode.InvalidParams };
    sendError(res, 200, mcp.id, {
      code: ErrorCode.InvalidParams,
      message: `Unknown tool: "${clip(name, 64)}"`,
      data: { tool: clip(name, 256) },
    });
  }

  /** A legacy `notifications/cancelled`: abort the exchange it names when this caller has it in flight. */
  #cancel(req: IncomingMessage, params: JsonObject | undefined): void {
    const id = params?.requestId;
    if (!isRequestId(id)) return;
    const key = cancelKey(req, id);
    if (key === undefined) return;
    const ex = this.#cancellable.get(key);
    if (ex === undefined || ex.aborted !== undefined) return;
    ex.aborted = 'cancelled';
    ex.controller.abort(new Error('cancelled by the client'));
  }

  /** Start an exchange: tracked, timed, aborted when the client goes away. */
  #start(req: IncomingMessage, res: ServerResponse, out: Outgoing): Exchange {
    const controller = new AbortController();
    let end!: () => void;
    const ended = new Promise<void>((resolve) => (end = resolve));
    const ex: Exchange = {
      controller,
      timer: undefined,
      aborted: undefined,
      cancelKey: undefined,
      ended,
      end,
    };
    this.#inflight.add(ex);
    const onClose = (): void => {
      if (ex.aborted !== undefined || res.writableFinished) return;
      ex.aborted = 'client';
      controller.abort(new Error('the client went away'));
    };
    res.once('close', onClose);
    ex.end = () => {
      clearTimeout(ex.timer);
      res.off('close', onClose);
      this.#inflight.delete(ex);
      if (ex.cancelKey !== undefined && this.#cancellable.get(ex.cancelKey) === ex)
        this.#cancellable.delete(ex.cancelKey);
      end();
    };
    if (out.timed && this.#o.timeoutMs > 0) {
      ex.timer = setTimeout(() => this.#timeout(req, res, ex), this.#o.timeoutMs);
      ex.timer.unref?.();
    }
    if (out.id !== undefined && this.#cancellable.size < MAX_CANCELLABLE) {
      const key = cancelKey(req, out.id);
      if (key !== undefined && !this.#cancellable.has(key)) {
        ex.cancelKey = key;
        this.#cancellable.set(key, ex);
      }
    }
    return ex;
  }

  #timeout(req: IncomingMessage, res: ServerResponse, ex: Exchange): void {
    if (ex.aborted !== undefined) return;
    ex.aborted = 'timeout';
    const err = new UpstreamError('upstream_timeout', `no complete answer within ${this.#o.timeoutMs} ms`);
    ex.controller.abort(err);
    refuseUpstream({ req, res, by: this.#by, logger: this.#o.logger }, err);
  }

  /** Send a message (through `send`) and resolve with the server's answer, or reject when aborted. */
  sendOnce(
    req: IncomingMessage,
    out: Outgoing,
    signal: AbortSignal,
    message = out.message,
  ): Promise<Response> {
    const body =
      message === undefined
        ? undefined
        : message === out.message && out.raw !== undefined
          ? out.raw
          : Buffer.from(JSON.stringify(message));
    const fr: ForwardRequest = {
      method: out.method,
      headers: out.headers,
      ...(body !== undefined ? { body: new Uint8Array(body.buffer, body.byteOffset, body.byteLength) } : {}),
      ...(message !== undefined ? { parsedBody: message } : {}),
      signal,
      ...(req.locals?.principal !== undefined ? { principal: req.locals.principal } : {}),
      req,
    };
    return new Promise<Response>((resolve, reject) => {
      if (signal.aborted) return reject(signal.reason);
      const onAbort = (): void => reject(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
      Promise.resolve()
        .then(() => this.#send(fr))
        .then(
          (r) => {
            signal.removeEventListener('abort', onAbort);
            if (!(r instanceof Response))
              reject(new UpstreamError('upstream_invalid', 'send() did not resolve with a Response'));
            else if (signal.aborted) {
              if (r.body !== null) r.body.cancel().catch(() => undefined);
              reject(signal.reason);
            } else resolve(r);
          },
          (err: unknown) => {
            signal.removeEventListener('abort', onAbort);
            reject(err);
          },
        );
    });
  }

  /**
   * Room for one more stream of this caller: its key (given back by `#releaseStream`), or
   * `null` when refused (429 at the caller's bound, checked first so a caller at it is told so; 503 when full).
   */
  #holdStream(req: IncomingMessage, res: ServerResponse): string | null {
    const key = principalKey(req.locals?.principal);
    const held = this.#streams.get(key) ?? 0;
    const per = this.#o.maxStreamsPerPrincipal;
    if (per > 0 && held >= per) {
      const r = refusal('rate_limited', {
        message: 'Too many streams are open for this caller; close one first',
        data: { limit: 'streams_per_principal', max: per },
      });
      sendRefusal(req, res, r, this.#by, { detail: 'streams_per_principal' });
      return null;
    }
    if (this.#streamCount >= this.#o.maxStreams) {
      const r = refusal('unavailable', { message: 'Too many streams are open; retry later' });
      sendRefusal(req, res, r, this.#by, { detail: 'streams' });
      return null;
    }
    this.#streams.set(key, held + 1);
    this.#streamCount++;
    return key;
  }

  #releaseStream(key: string): void {
    const held = (this.#streams.get(key) ?? 1) - 1;
    if (held > 0) this.#streams.set(key, held);
    else this.#streams.delete(key);
    this.#streamCount--;
  }

  async #exchange(req: IncomingMessage, res: ServerResponse, out: Outgoing): Promise<void> {
    const stream = out.timed ? undefined : this.#holdStream(req, res);
    if (stream === null) return;
    const ex = this.#start(req, res, out);
    const ctx: RelayContext = {
      req,
      res,
      by: this.#by,
      logger: this.#o.logger,
      maxAnswerBytes: this.#o.maxAnswerBytes,
      method: out.rpcMethod,
      id: out.id,
      signal: ex.controller.signal,
      ...(out.viewResult !== undefined ? { viewResult: out.viewResult } : {}),
      wrapSession: (serverId) => this.#wrapSession(req, out, serverId),
    };
    try {
      const response = await this.sendOnce(req, out, ex.controller.signal);
      await relay(ctx, response);
    } catch (err) {
      this.failed(req, res, ex.aborted, err);
    } finally {
      ex.end();
      if (stream !== undefined) this.#releaseStream(stream);
    }
  }

  /** Run a paged list request over the whole server list (core/forward-lists.ts). */
  async #aggregate(req: IncomingMessage, res: ServerResponse, mcp: McpRequest, out: Outgoing): Promise<void> {
    const ex = this.#start(req, res, out);
    try {
      await aggregateList(this, { req, res, mcp, out, signal: ex.controller.signal });
    } catch (err) {
      this.failed(req, res, ex.aborted, err);
    } finally {
      ex.end();
    }
  }

  /** An exchange that failed: answered by its cause, unless it was aborted (already answered, or nobody to tell). */
  failed(req: IncomingMessage, res: ServerResponse, aborted: Exchange['aborted'], err: unknown): void {
    if (aborted === 'timeout' || aborted === 'client') return;
    if (aborted === 'closing') return sendRefusal(req, res, refusal('unavailable'), this.#by);
    if (aborted === 'cancelled') {
      // The client cancelled: as dispatch, no answer is sent and the call is recorded as cancelled.
      localsOf(req).response = { resultType: 'cancelled' };
      if (!res.headersSent) res.writeHead(204).end();
      else if (!res.writableEnded) res.end();
      return;
    }
    if (isUpstreamError(err)) return refuseUpstream({ req, res, by: this.#by, logger: this.#o.logger }, err);
    if (res.destroyed) {
      log(this.#o.logger, 'warn', `${this.#by}: an exchange failed after the client left`, {
        error: errorMeta(err),
      });
      return;
    }
    sendInternalError(req, res, err, this.#by, this.#o.logger);
  }

  /** Abort every exchange in flight; resolves when they have ended. */
  async close(): Promise<void> {
    this.#closed = true;
    const all = [...this.#inflight];
    for (const ex of all) {
      if (ex.aborted !== undefined) continue;
      ex.aborted = 'closing';
      ex.controller.abort(new Error('the forwarder is closing'));
    }
    await Promise.all(all.map((ex) => ex.ended));
  }
}

/** An UpstreamError, also one from another copy of the package (CommonJS and ESM side by side). */
function isUpstreamError(e: unknown): e is UpstreamError {
  if (!(e instanceof UpstreamError) && !(e instanceof Error && e.name === 'UpstreamError')) return false;
  return UPSTREAM_REASONS.includes((e as UpstreamError).reason);
}

const UPSTREAM_REASONS: readonly unknown[] = [
  'upstream_unreachable',
  'upstream_timeout',
  'upstream_error',
  'upstream_invalid',
];

/** The key under which a legacy cancellation finds an exchange: the caller and the request id. */
function cancelKey(req: IncomingMessage, id: RequestId): string | undefined {
  const s = JSON.stringify(id);
  if (s.length > MAX_CANCEL_ID) return undefined;
  return `${principalKey(req.locals?.principal)}\u0000${s}`;
}

/** The body exactly as received, when the parse step still holds it. */
function rawBody(req: IncomingMessage): Buffer | undefined {
  const raw = stateIfAny(req)?.rawDone;
  return Buffer.isBuffer(raw) && raw.length > 0 ? raw : undefined;
}

export type { Outgoing };
