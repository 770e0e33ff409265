/**
 * A stand-in for the dispatcher's side of tasks, for the tests of limits, audit and metrics: `req.locals.task` is
 * a data contract (core/types.ts TaskTrack), so a tiny final handler sets a hand-made one the test ends at will.
 *
 * The server: the `before` middlewares (audit, metrics), a stand-in authenticator (`x-user` header), `parse()`,
 * the `after` middlewares (limits), then the final handler:
 *   - `tools/call` → a task (`task-<n>`, tool `params.name`) on `req.locals.task`, answered with a
 *     CreateTaskResult-like body, `locals.response.resultType` `task`; `app.task(id)` ends it or charges it work;
 *   - `tasks/get` with `params.lost: true` → `locals.task` already ended (`failed`, `lost`), as the dispatcher
 *     sets it for a task whose worker is gone;
 *   - anything else → an empty result.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { addCharge } from '../../core/charge';
import { localsOf } from '../../core/respond';
import type { Middleware, RequestLocals, TaskEnd, TaskTrack } from '../../core/types';
import { parse } from '../../middleware/parse/index';

/** A TaskTrack the test ends by hand. */
export class HandTask implements TaskTrack {
  ended: TaskEnd | undefined;
  private listeners: ((end: TaskEnd) => void)[] = [];

  constructor(
    readonly taskId: string,
    readonly tool: string | undefined,
    private readonly locals: RequestLocals,
  ) {}

  onEnd(listener: (end: TaskEnd) => void): void {
    if (this.ended !== undefined) return listener(this.ended);
    this.listeners.push(listener);
  }

  /** Work the task's `ctx.charge` would add to the creating request. */
  charge(ms: number): void {
    addCharge(this.locals, ms);
  }

  end(end: TaskEnd): void {
    if (this.ended !== undefined) return;
    this.ended = end;
    for (const l of this.listeners.splice(0)) {
      try {
        l(end);
      } catch {
        // as the contract says: a listener's exception is ignored
      }
    }
  }
}

export const COMPLETED: TaskEnd = { status: 'completed', outcome: 'ok', elapsedMs: 12 };

export interface TaskApp {
  port: number;
  /** The task made by the n-th tools/call (`task-<n>`). */
  task(id: string): HandTask;
  close(): Promise<void>;
}

function chain(
  mws: readonly Middleware[],
  req: IncomingMessage,
  res: ServerResponse,
  last: () => void,
): void {
  const step = (i: number): void => {
    if (i === mws.length) return last();
    mws[i]!(req, res, (err?: unknown) => {
      if (err) {
        res.statusCode = 500;
        res.end();
        return;
      }
      step(i + 1);
    });
  };
  step(0);
}

export async function startTaskApp(o: { before?: Middleware[]; after?: Middleware[] }): Promise<TaskApp> {
  const tasks = new Map<string, HandTask>();
  let n = 0;
  const answer = (res: ServerResponse, id: unknown, result: unknown): void => {
    res.statusCode = 200;
    res.setHeader('Content-Type', 'application/json');
    res.end(JSON.stringify({ jsonrpc: '2.0', id, result }));
  };
  const final = (req: IncomingMessage, res: ServerResponse): void => {
    const locals = localsOf(req);
    const mcp = locals.mcp!;
    const params = (mcp.params ?? {}) as Record<string, unknown>;
    if (mcp.method === 'tools/call') {
      const tool = typeof params.name === 'string' ? params.name : undefined;
      const t = new HandTask(`task-${++n}`, tool, locals);
      tasks.set(t.taskId, t);
      locals.tool = tool;
      locals.task = t;
      locals.response = { resultType: 'task' };
      return answer(res, mcp.id, { resultType: 'task', taskId: t.taskId, status: 'working' });
    }
    if (mcp.method === 'tasks/get' && params.lost === true) {
      const t = new HandTask(String(params.taskId), 'slow', locals);
      t.end({ status: 'failed', outcome: 'lost', code: -32603, elapsedMs: 5000 });
      locals.task = t;
    }
    locals.response = { resultType: 'complete' };
    answer(res, mcp.id, {});
  };
  const mid: Middleware[] = [
    ...(o.before ?? []),
    (req, _res, next) => {
      const user = req.headers['x-user'];
      if (typeof user === 'string')
        localsOf(req).principal = { userId: user, groups: [], roles: [], method: 'test' };
      next();
    },
    parse(),
    ...(o.after ?? []),
  ];
  const server = http.createServer((req, res) => chain(mid, req, res, () => final(req, res)));
  server.keepAliveTimeout = 1000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    task(id) {
      const t = tasks.get(id);
      if (!t) throw new Error(`no task ${id}`);
      return t;
    },
    close() {
      server.closeAllConnections();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}

export interface RpcResp {
  status: number;
  body: { id?: unknown; result?: Record<string, unknown>; error?: { code: number; data?: unknown } };
}

/** One JSON-RPC request over HTTP as `user`. */
export function rpc(
  port: number,
  user: string,
  method: string,
  params: object = {},
  id = 1,
): Promise<RpcResp> {
  const body = JSON.stringify({ jsonrpc: '2.0', id, method, params });
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/mcp',
        agent: false,
        headers: {
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(body)),
          'x-user': user,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as RpcResp['body'],
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
