/**
 * A server that remembers, per request, whether anything read its body before the answer ended, and a POST
 * that declares its whole body but may send only its start: the tests of what is refused unread.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Served {
  url: string;
  /** One entry per request, in arrival order: true once something listens for or has read its body. */
  bodyRead: (() => boolean)[];
  close(): Promise<void>;
}

/** `listener` on a loopback server at `/mcp`, each request's body watched. */
export async function serveWatchingBody(listener: http.RequestListener): Promise<Served> {
  const bodyRead: (() => boolean)[] = [];
  const server = http.createServer((req, res) => {
    let atAnswer: boolean | undefined;
    const now = () => req.listenerCount('data') > 0 || req.readableEnded;
    // Ahead of node's own 'finish' listener, which drains what is left of an unread body.
    res.prependOnceListener('finish', () => (atAnswer = now()));
    bodyRead.push(() => atAnswer ?? now());
    listener(req, res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    bodyRead,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Record<string, unknown>;
}

/**
 * POST `body` with `headers`, declaring its full length but sending only its first `sent` bytes (all by
 * default). The answer is read whole; then the connection is closed, the rest of the body never sent.
 */
export function sendPartial(
  url: string,
  headers: Record<string, string>,
  body: Buffer | string,
  sent?: number,
): { done: Promise<Answer>; answered: () => boolean; abort: () => void } {
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(body);
  let answer: Answer | undefined;
  const req = http.request(url, {
    method: 'POST',
    agent: false,
    headers: { ...headers, 'Content-Length': bytes.length },
  });
  const done = new Promise<Answer>((resolve, reject) => {
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => {
        answer = { status: res.statusCode ?? 0, headers: res.headers, body: JSON.parse(text) };
        req.destroy();
        resolve(answer);
      });
    });
    req.on('error', (e) => (answer ? undefined : reject(e)));
  });
  if (sent === undefined) req.end(bytes);
  else req.write(bytes.subarray(0, sent));
  return { done, answered: () => answer !== undefined, abort: () => req.destroy() };
}
