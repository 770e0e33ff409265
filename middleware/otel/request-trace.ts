/**
 * One request's trace ({@link RequestTrace}): made at arrival, its span started when the shared parse step has
 * read the message (`parsed()`), or at the response's end for a request refused before that, and ended at the
 * response's end with the outcome's attributes; the duration metric is recorded then too.
 * @see docs/middleware/otel.md
 */
import type { IncomingMessage } from 'node:http';
import {
  type Attributes,
  type Context,
  type Histogram,
  type Link,
  type Span,
  SpanKind,
  type Tracer,
  context,
  isSpanContextValid,
  trace,
} from '@opentelemetry/api';
import type { McpRequest } from '../../lib/request.js';
import { formatTraceparent, parseTraceparent } from '../../lib/trace-context.js';
import { type RequestTrace, TRACE_REDACTOR, type TraceAttributes, type WorkTrace } from '../../core/trace.js';
import type { RequestLocals } from '../../core/types.js';
import {
  MAX_NAME,
  MAX_SESSION,
  MAX_URI,
  bounded,
  captured,
  errorMessage,
  methodName,
  revisionOf,
  spanName,
  targetOf,
} from './attributes.js';
import type { OtelConfig } from './options.js';
import { parentFromMeta } from './propagation.js';
import { type Ending, WorkSpan, nowMs, writeEnding } from './work.js';

/** What one `otel()` instance shares with its requests' traces. */
export interface Shared {
  readonly config: OtelConfig;
  /** Log, once per instance, that a capture was asked for without `redact()` in the stack. */
  warnNoRedactor(): void;
}

/** Most events, links or attributes kept before the span starts. */
const MAX_PENDING = 64;
/** Most links kept before the span starts. */
const MAX_PENDING_LINKS = 8;

interface PendingEvent {
  readonly name: string;
  readonly attributes: TraceAttributes | undefined;
  readonly time: number;
}

/** The request's trace (see the module comment). */
export class OtelRequestTrace implements RequestTrace {
  /** The request's span, once started. */
  private span: Span | undefined;
  private ctx: Context | undefined;
  private ids: { traceId: string; spanId: string; flags: number } | undefined;
  private ended = false;
  private events: PendingEvent[] | undefined;
  private links: Link[] | undefined;
  private attrs: Attributes | undefined;
  /** The `tools/call` arguments to capture (a reference to the parsed message's). */
  private args: unknown;
  private answered: { value: unknown } | undefined;
  /** Whether the authentication middleware added its `mcpware.auth` event itself (else otel() adds it). */
  private told = false;

  constructor(
    private readonly shared: Shared,
    private readonly req: IncomingMessage,
    private readonly tracer: Tracer | undefined,
    private readonly histogram: Histogram | undefined,
    /** `performance.now()` at arrival. */
    private readonly start: number,
    private readonly ambient: Context,
  ) {}

  get context(): Context | undefined {
    return this.ctx;
  }

  get traceId(): string | undefined {
    return this.ids?.traceId;
  }

  get spanId(): string | undefined {
    return this.ids?.spanId;
  }

  get traceparent(): string | undefined {
    const ids = this.ids;
    return ids === undefined
      ? undefined
      : formatTraceparent({ traceId: ids.traceId, spanId: ids.spanId, traceFlags: ids.flags });
  }

  parsed(mcp: McpRequest): void {
    if (this.span !== undefined || this.ended || this.tracer === undefined) return;
    try {
      this.begin(mcp);
    } catch {
      // Telemetry must never affect the answer: the parse step goes on without a span.
    }
  }

  run<T>(fn: () => T): T {
    const ctx = this.ctx;
    return ctx === undefined ? fn() : context.with(ctx, fn);
  }

  event(name: string, attributes?: TraceAttributes): void {
    if (this.ended) return;
    if (name === 'mcpware.auth') this.told = true;
    if (this.span !== undefined) this.span.addEvent(name, attributes, nowMs());
    else if ((this.events ??= []).length < MAX_PENDING) this.events.push({ name, attributes, time: nowMs() });
  }

  result(value: unknown): void {
    if (this.shared.config.captureResults && !this.ended) this.answered = { value };
  }

  link(traceparent: string, attributes?: TraceAttributes): void {
    if (this.ended) return;
    const tp = parseTraceparent(traceparent);
    if (!tp.ok) return;
    const l: Link = {
      context: {
        traceId: tp.value.traceId,
        spanId: tp.value.spanId,
        traceFlags: tp.value.traceFlags & 1,
        isRemote: true,
      },
      ...(attributes === undefined ? {} : { attributes }),
    };
    if (this.span !== undefined) this.span.addLink(l);
    else if ((this.links ??= []).length < MAX_PENDING_LINKS) this.links.push(l);
  }

  set(attributes: TraceAttributes): void {
    if (this.ended) return;
    if (this.span !== undefined) {
      this.span.setAttributes(attributes);
      return;
    }
    const kept = (this.attrs ??= {});
    for (const key of Object.keys(attributes)) {
      if (Object.hasOwn(kept, key) || Object.keys(kept).length < MAX_PENDING)
        Object.defineProperty(kept, key, { value: attributes[key], enumerable: true, writable: true });
    }
  }

  work(name: string, attributes?: TraceAttributes): WorkTrace | undefined {
    if (this.ids === undefined || this.ctx === undefined || this.tracer === undefined) return undefined;
    const span = this.tracer.startSpan(
      bounded(name, 2 * MAX_NAME),
      { kind: SpanKind.INTERNAL, ...(attributes === undefined ? {} : { attributes }) },
      this.ctx,
    );
    return new WorkSpan(span, this.ctx);
  }

  /** Start the span: `mcp` is the parsed message, or undefined for a request refused before it was read. */
  private begin(mcp: McpRequest | undefined): void {
    const req = this.req;
    const method = methodName(mcp?.method ?? headerMethod(req));
    const target = mcp === undefined ? undefined : targetOf(mcp, this.shared.config.resourceUriInSpanName);
    const parent = parentFromMeta(mcp?.meta, this.ambient);
    const links: Link[] = [];
    if (parent.remote) {
      const ambient = trace.getSpanContext(this.ambient);
      if (ambient !== undefined && isSpanContextValid(ambient)) links.push({ context: ambient });
    }
    if (this.links !== undefined) links.push(...this.links);
    const attributes = spanAttributes(req, mcp, method);
    const span = this.tracer!.startSpan(
      spanName(method, target),
      {
        kind: SpanKind.SERVER,
        startTime: performance.timeOrigin + this.start,
        attributes,
        ...(links.length > 0 ? { links } : {}),
      },
      parent.context,
    );
    this.span = span;
    this.ctx = trace.setSpan(parent.context, span);
    this.links = undefined;
    if (span.isRecording()) {
      const sc = span.spanContext();
      this.ids = { traceId: sc.traceId, spanId: sc.spanId, flags: sc.traceFlags };
    }
    if (this.attrs !== undefined) span.setAttributes(this.attrs);
    this.attrs = undefined;
    const auth = this.req.locals?.auth;
    if (auth !== undefined && !this.told) this.authEvent(span, auth);
    for (const e of this.events ?? []) span.addEvent(e.name, e.attributes, e.time);
    this.events = undefined;
    if (mcp?.method === 'tools/call' && this.shared.config.captureArguments) this.args = mcp.arguments;
  }

  private authEvent(span: Span, auth: NonNullable<RequestLocals['auth']>): void {
    this.told = true;
    const attributes: Attributes = { outcome: String(auth.outcome) };
    if (typeof auth.method === 'string') attributes.method = bounded(auth.method, MAX_NAME);
    span.addEvent('mcpware.auth', attributes, nowMs());
  }

  /** The response has ended (`finished`: completely written): end the span, record the metric. */
  end(finished: boolean): void {
    if (this.ended) return;
    const locals: RequestLocals = this.req.locals ?? {};
    const mcp = locals.mcp;
    if (this.span === undefined && this.tracer !== undefined && (mcp !== undefined || locals.refusal))
      this.begin(mcp);
    this.ended = true;
    const span = this.span;
    const ending = endingOf(locals, finished);
    const metric: Attributes | undefined = this.histogram === undefined ? undefined : {};
    if (span !== undefined) {
      try {
        this.finishSpan(span, locals, ending);
      } finally {
        writeEnding(span, ending, metric);
        span.end(nowMs());
      }
    } else writeEnding(undefined, ending, metric);
    if (metric !== undefined) {
      metricAttributes(this.req, locals, metric);
      this.histogram!.record((performance.now() - this.start) / 1000, metric);
    }
  }

  /** The attributes and events known only at the end. */
  private finishSpan(span: Span, locals: RequestLocals, ending: Ending): void {
    const mcp = locals.mcp;
    const version = revisionOf(mcp?.version);
    if (version !== undefined) span.setAttribute('mcp.protocol.version', version);
    const session = this.req.headers['mcp-session-id'];
    if (mcp?.era === 'legacy' && typeof session === 'string' && session !== '')
      span.setAttribute('mcp.session.id', bounded(session, MAX_SESSION));
    if (locals.auth !== undefined && !this.told) this.authEvent(span, locals.auth);
    this.capture(span, locals, ending);
  }

  /** The opt-in captures: only what passed `redact()`. */
  private capture(span: Span, locals: RequestLocals, ending: Ending): void {
    const args = this.args;
    const answered = this.answered;
    this.args = undefined;
    this.answered = undefined;
    if (args === undefined && answered === undefined) return;
    const redactor = locals[TRACE_REDACTOR];
    if (typeof redactor !== 'function') {
      this.shared.warnNoRedactor();
      return;
    }
    if (args !== undefined) {
      let text: string | undefined;
      try {
        text = captured(redactor(args));
      } catch {
        text = undefined;
      }
      if (text !== undefined) span.setAttribute('gen_ai.tool.call.arguments', text);
    }
    const ok = ending.code === undefined && ending.failure === undefined;
    if (answered !== undefined && ok && locals.mcp?.method === 'tools/call') {
      // In warn mode the answer went out as it was: the span gets the masked copy all the same.
      let value = answered.value;
      if (locals.redaction?.mode === 'warn') {
        try {
          value = redactor(value);
        } catch {
          return;
        }
      }
      const text = captured(value);
      if (text !== undefined) span.setAttribute('gen_ai.tool.call.result', text);
    }
  }
}

/** The `Mcp-Method` header, for a request refused before its message was read. */
function headerMethod(req: IncomingMessage): string | undefined {
  const h = req.headers['mcp-method'];
  return typeof h === 'string' ? h : undefined;
}

/** The attributes a span starts with. */
function spanAttributes(req: IncomingMessage, mcp: McpRequest | undefined, method: string): Attributes {
  const a: Attributes = { 'mcp.method.name': method };
  if (mcp?.kind === 'request' && mcp.id !== undefined)
    a['jsonrpc.request.id'] = bounded(String(mcp.id), MAX_NAME);
  const target = mcp?.target;
  if (method === 'tools/call') {
    a['gen_ai.operation.name'] = 'execute_tool';
    if (target !== undefined) a['gen_ai.tool.name'] = bounded(target, MAX_NAME);
  } else if (method === 'prompts/get' && target !== undefined) {
    a['gen_ai.prompt.name'] = bounded(target, MAX_NAME);
  } else if (target !== undefined && method.startsWith('resources/')) {
    a['mcp.resource.uri'] = bounded(target, MAX_URI);
  }
  networkAttributes(req, a);
  const address = req.socket?.remoteAddress;
  if (typeof address === 'string') {
    a['client.address'] = address;
    const port = req.socket.remotePort;
    if (typeof port === 'number') a['client.port'] = port;
  }
  return a;
}

/** `network.*`: HTTP over TCP, and the HTTP version. */
function networkAttributes(req: IncomingMessage, a: Attributes): void {
  a['network.transport'] = 'tcp';
  a['network.protocol.name'] = 'http';
  const v = req.httpVersion;
  if (typeof v === 'string' && v.length > 0 && v.length <= 8) a['network.protocol.version'] = v;
}

/** How the request ended, from what the stack recorded. */
function endingOf(locals: RequestLocals, finished: boolean): Ending {
  const refusal = locals.refusal;
  if (refusal !== undefined) {
    const message = errorMessage(refusal.code, refusal.reason);
    return message === undefined ? { code: refusal.code } : { code: refusal.code, message };
  }
  const response = locals.response;
  if (response?.code !== undefined) {
    const message = errorMessage(response.code, undefined);
    return message === undefined ? { code: response.code } : { code: response.code, message };
  }
  if (response?.toolError === true) return { failure: 'tool_error' };
  if (response?.resultType === 'cancelled') return { failure: 'cancelled' };
  if (!finished && response === undefined) return { failure: 'aborted' };
  return {};
}

/** The metric's attributes beside the outcome's: bounded values only (the registered tool, never the request's). */
function metricAttributes(req: IncomingMessage, locals: RequestLocals, a: Attributes): void {
  const mcp = locals.mcp;
  const method = methodName(mcp?.method ?? (mcp === undefined ? headerMethod(req) : undefined));
  a['mcp.method.name'] = method;
  if (method === 'tools/call') {
    a['gen_ai.operation.name'] = 'execute_tool';
    if (typeof locals.tool === 'string') a['gen_ai.tool.name'] = bounded(locals.tool, MAX_NAME);
  }
  const version = revisionOf(mcp?.version);
  if (version !== undefined) a['mcp.protocol.version'] = version;
  networkAttributes(req, a);
}
