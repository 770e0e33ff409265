/**
 * Helpers for streaming tests: a raw SSE reader over node:http (so a test can read one event, act, read the
 * next, and close the connection mid-stream), modern request builders, and waiting on conditions.
 */
import http, { type IncomingHttpHeaders } from 'node:http';
import type { JsonObject } from '../../lib/jsonrpc';
import { parseSse } from '../../testing/client';

export const MODERN = '2026-07-28';

/** The modern `_meta` envelope. */
export function envelope(caps: JsonObject = {}, extra: JsonObject = {}): JsonObject {
  return {
    'io.modelcontextprotocol/protocolVersion': MODERN,
    'io.modelcontextprotocol/clientCapabilities': caps,
    'io.modelcontextprotocol/clientInfo': { name: 'streaming-test', version: '0' },
    ...extra,
  };
}

/** Headers of a modern request for `method` (Mcp-Name when given). */
export function modernHeaders(method: string, name?: string): Record<string, string> {
  const h: Record<string, string> = {
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
    'MCP-Protocol-Version': MODERN,
    'Mcp-Method': method,
  };
  if (name !== undefined) h['Mcp-Name'] = name;
  return h;
}

/** Headers of a legacy (2025-11-25) request. */
export function legacyHeaders(accept = 'application/json, text/event-stream'): Record<string, string> {
  return { 'Content-Type': 'application/json', Accept: accept, 'MCP-Protocol-Version': '2025-11-25' };
}

/** An open HTTP answer read incrementally. */
export interface Stream {
  status: number;
  headers: IncomingHttpHeaders;
  /** The next JSON-RPC message of the SSE answer (or the JSON body). Rejects when the answer ends first. */
  next(): Promise<JsonObject>;
  /** Everything received so far. */
  text(): string;
  /** Resolves when the answer has ended (or the connection closed). */
  ended: Promise<void>;
  /** Close the connection now (the client going away). */
  close(): void;
}

/** POST `message` to `url` on a fresh connection and return as soon as the status line arrives. */
export function openStream(url: string, message: unknown, headers: Record<string, string>): Promise<Stream> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify(message);
    const req = http.request(
      url,
      { method: 'POST', agent: false, headers: { ...headers, 'Content-Length': Buffer.byteLength(body) } },
      (res) => {
        res.setEncoding('utf8');
        let raw = '';
        let consumed = 0;
        const queue: JsonObject[] = [];
        const waiters: { resolve: (m: JsonObject) => void; reject: (e: Error) => void }[] = [];
        let done = false;
        const drain = (): void => {
          while (queue.length > 0 && waiters.length > 0) waiters.shift()!.resolve(queue.shift()!);
          if (done) while (waiters.length > 0) waiters.shift()!.reject(new Error('the answer ended'));
        };
        const isSse = String(res.headers['content-type'] ?? '').startsWith('text/event-stream');
        res.on('data', (chunk: string) => {
          raw += chunk;
          if (!isSse) return;
          // Only complete events (terminated by a blank line) are parsed.
          const end = raw.lastIndexOf('\n\n');
          if (end + 2 > consumed) {
            queue.push(...parseSse(raw.slice(consumed, end + 2)));
            consumed = end + 2;
            drain();
          }
        });
        let endedResolve!: () => void;
        const ended = new Promise<void>((r) => (endedResolve = r));
        const finish = (): void => {
          if (done) return;
          if (!isSse && raw !== '') {
            try {
              queue.push(JSON.parse(raw) as JsonObject);
            } catch {
              // not JSON: nothing to queue
            }
          }
          done = true;
          drain();
          endedResolve();
        };
        res.on('end', finish);
        res.on('close', finish);
        res.on('error', finish);
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          next: () =>
            new Promise<JsonObject>((ok, ko) => {
              waiters.push({ resolve: ok, reject: ko });
              drain();
            }),
          text: () => raw,
          ended,
          close: () => {
            req.destroy();
            res.destroy();
          },
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** POST and read the whole answer: status, headers, every SSE message (or the JSON body as the only one). */
export async function post(
  url: string,
  message: unknown,
  headers: Record<string, string>,
): Promise<{ status: number; headers: IncomingHttpHeaders; messages: JsonObject[]; text: string }> {
  const s = await openStream(url, message, headers);
  await s.ended;
  const text = s.text();
  const sse = String(s.headers['content-type'] ?? '').startsWith('text/event-stream');
  let messages: JsonObject[] = [];
  if (sse) messages = parseSse(text);
  else if (text !== '') messages = [JSON.parse(text) as JsonObject];
  return { status: s.status, headers: s.headers, messages, text };
}

/** Wait until `cond()` holds, checking after each turn of the event loop (no clock involved in the verdict). */
export async function until(cond: () => boolean, what: string, maxTurns = 20000): Promise<void> {
  for (let i = 0; i < maxTurns; i++) {
    if (cond()) return;
    await new Promise((r) => setTimeout(r, 1));
  }
  throw new Error(`never happened: ${what}`);
}

/** A deferred promise. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** Send a request and keep a handle on it, to close the connection before any answer arrives. */
export function startRequest(
  url: string,
  message: unknown,
  headers: Record<string, string>,
): { abort(): void } {
  const body = JSON.stringify(message);
  const req = http.request(url, {
    method: 'POST',
    agent: false,
    headers: { ...headers, 'Content-Length': Buffer.byteLength(body) },
  });
  req.on('error', () => undefined); // the abort below is the point of the exercise
  req.end(body);
  return { abort: () => req.destroy() };
}
