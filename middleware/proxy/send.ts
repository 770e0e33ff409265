/**
 * The proxy's {@link Send}: one HTTP request to the upstream per exchange, over `node:http` / `node:https` with a
 * keep-alive `Agent` of the proxy's own (at most `maxSockets` connections), or over the caller's `fetch` when one
 * is configured. The engine's headers (the client's MCP headers, allow-listed) plus the configured ones; never the
 * client's credentials. Redirects are not followed (a redirect is not an MCP answer), and a connection that cannot
 * be made, or is cut before the answer, becomes `upstream_unreachable`.
 */
import {
  Agent as HttpAgent,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  request as httpRequest,
} from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { Readable } from 'node:stream';
import type { ForwardRequest, Send } from '../../core/forward.js';
import { UpstreamError } from '../../core/upstream-error.js';
import type { ProxyFetch, ResolvedProxyOwnOptions } from './options.js';

/** Client headers that never go upstream, even if the engine's allow-list ever let them through. */
const NEVER_FORWARDED = ['authorization', 'cookie', 'proxy-authorization', 'host'] as const;

/** The proxy's connection to its upstream: the engine's {@link Send}, and the release of its sockets. */
export interface ProxyTransport {
  readonly send: Send;
  /** Destroys the transport's sockets (idle and in use); called once the engine has closed. */
  close(): void;
}

/** The Node error codes (`error.cause.code`) of a connection that could not be made or was cut. */
function causeCode(error: unknown): string | undefined {
  const cause = (error as { cause?: { code?: unknown } } | null)?.cause;
  return typeof cause?.code === 'string' ? cause.code : undefined;
}

function headersFor(request: ForwardRequest, configured: ResolvedProxyOwnOptions['headers']): Headers {
  const headers = new Headers(request.headers);
  for (const name of NEVER_FORWARDED) headers.delete(name);
  for (const [name, value] of configured) headers.set(name, value);
  return headers;
}

/** A redirect answer: refused, its body cancelled. */
function isRedirect(status: number): boolean {
  return status >= 300 && status < 400;
}

/** The adapter over a caller's `fetch(url, …)`, with `redirect: 'manual'`, errors mapped to {@link UpstreamError}. */
export function fetchSend(options: ResolvedProxyOwnOptions, doFetch: ProxyFetch): Send {
  const { url, headers: configured } = options;
  const origin = new URL(url).origin;
  return async function proxySend(request: ForwardRequest): Promise<Response> {
    let response: Response;
    try {
      response = await doFetch(url, {
        method: request.method,
        headers: headersFor(request, configured),
        body: request.method === 'POST' ? request.body : undefined,
        signal: request.signal,
        redirect: 'manual',
      });
    } catch (error) {
      // The engine aborted (client gone, its timeout, close): its own reason tells it which.
      if (request.signal.aborted) throw request.signal.reason ?? error;
      if (error instanceof UpstreamError) throw error;
      // fetch() reports a network failure as `TypeError: fetch failed` (its cause says which); the name, not
      // `instanceof`, since the global fetch may belong to another realm than this module.
      if ((error as { name?: unknown } | null)?.name === 'TypeError') {
        const code = causeCode(error) ?? String((error as Error).message);
        throw new UpstreamError('upstream_unreachable', `${origin}: ${code}`, { cause: error });
      }
      throw error;
    }
    if (response.type === 'opaqueredirect' || isRedirect(response.status)) {
      await response.body?.cancel().catch(() => undefined);
      throw new UpstreamError('upstream_invalid', `${origin}: a redirect (${response.status})`);
    }
    return response;
  };
}

/** How long an idle kept-alive socket stays open. */
const IDLE_SOCKET_MS = 4000;

/** Statuses whose answer has no body (a web `Response` refuses one for them). */
const NULL_BODY = new Set([204, 205, 304]);

/** The upstream's answer as a web `Response`: status, headers from `rawHeaders`, the body as a web stream. */
function toResponse(res: IncomingMessage, origin: string): Response {
  const status = res.statusCode ?? 0;
  const headers = new Headers();
  const raw = res.rawHeaders;
  try {
    for (let i = 0; i + 1 < raw.length; i += 2) headers.append(raw[i]!, raw[i + 1]!);
    const empty = NULL_BODY.has(status) || res.headers['content-length'] === '0';
    if (empty) res.resume();
    // Readable.toWeb pauses the message while its queue is full: the engine reads only as fast as the client takes.
    const body = empty ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>);
    return new Response(body, { status, headers });
  } catch (err) {
    res.destroy();
    throw new UpstreamError('upstream_invalid', `${origin}: an answer that is not HTTP (${status})`, {
      cause: err,
    });
  }
}

/** A request whose answer is a stream that lasts: a GET stream, or `subscriptions/listen`. */
function isStream(request: ForwardRequest): boolean {
  if (request.method === 'GET') return true;
  const message = request.parsedBody as { method?: unknown } | undefined;
  return message?.method === 'subscriptions/listen';
}

/** The request's headers as a flat list: the engine's, minus the client's credentials, plus the configured ones. */
function outgoingHeaders(
  request: ForwardRequest,
  configured: ResolvedProxyOwnOptions['headers'],
  configuredNames: ReadonlySet<string>,
  host: string,
): string[] {
  const out = ['host', host];
  for (const [name, value] of request.headers) {
    if (configuredNames.has(name) || (NEVER_FORWARDED as readonly string[]).includes(name)) continue;
    out.push(name, value);
  }
  for (const [name, value] of configured) out.push(name, value);
  if (request.method === 'POST') out.push('content-length', String(request.body?.byteLength ?? 0));
  return out;
}

/**
 * The default transport: `node:http` / `node:https` `request()` over a keep-alive agent of at most `maxSockets`
 * connections. The engine's signal aborts the request (its socket is destroyed, not reused).
 */
export function nodeTransport(options: ResolvedProxyOwnOptions): ProxyTransport {
  const { url, headers: configured, maxSockets } = options;
  const target = new URL(url);
  const origin = target.origin;
  const secure = target.protocol === 'https:';
  // An idle socket is closed before a server's usual keep-alive timeout (a server's `Keep-Alive: timeout=` hint,
  // when shorter, is honoured by the agent): the server rarely closes a socket a request is being written to.
  const agentOptions = { keepAlive: true, maxSockets, timeout: IDLE_SOCKET_MS };
  const agent = secure ? new HttpsAgent(agentOptions) : new HttpAgent(agentOptions);
  // Streams (a GET stream, `subscriptions/listen`) hold their connection for as long as they last: they get one of
  // their own, outside `maxSockets`, so open streams never starve the exchanges (the limiter bounds them).
  const streamOptions = { keepAlive: false };
  const streamAgent = secure ? new HttpsAgent(streamOptions) : new HttpAgent(streamOptions);
  const doRequest = secure ? httpsRequest : httpRequest;
  const hostname = target.hostname.startsWith('[') ? target.hostname.slice(1, -1) : target.hostname;
  const port = target.port === '' ? (secure ? 443 : 80) : Number(target.port);
  const path = target.pathname + target.search;
  const configuredNames = new Set(configured.map(([name]) => name));

  function send(request: ForwardRequest): Promise<Response> {
    return new Promise<Response>((resolve, reject) => {
      const headers = outgoingHeaders(request, configured, configuredNames, target.host);
      const req = doRequest({
        hostname,
        port,
        path,
        method: request.method,
        // A flat list: node:http writes it as given (the Host and Content-Length are in it).
        headers: headers as unknown as OutgoingHttpHeaders,
        agent: isStream(request) ? streamAgent : agent,
        signal: request.signal,
      });
      req.on('response', (res) => {
        if (isRedirect(res.statusCode ?? 0)) {
          res.resume();
          return reject(new UpstreamError('upstream_invalid', `${origin}: a redirect (${res.statusCode})`));
        }
        try {
          resolve(toResponse(res, origin));
        } catch (err) {
          reject(err);
        }
      });
      req.on('error', (error: NodeJS.ErrnoException) => {
        // The engine aborted (client gone, its timeout, close): its own reason tells it which.
        if (request.signal.aborted) return reject(request.signal.reason ?? error);
        const code = typeof error.code === 'string' ? error.code : error.message;
        reject(new UpstreamError('upstream_unreachable', `${origin}: ${code}`, { cause: error }));
      });
      req.end(request.method === 'POST' ? request.body : undefined);
    });
  }

  return {
    send,
    close: () => {
      agent.destroy();
      streamAgent.destroy();
    },
  };
}

/** The transport for `options`: the caller's `fetch` when given, else {@link nodeTransport}. */
export function proxyTransport(options: ResolvedProxyOwnOptions): ProxyTransport {
  if (options.fetch !== undefined) return { send: fetchSend(options, options.fetch), close: () => undefined };
  return nodeTransport(options);
}
