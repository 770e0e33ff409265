/**
 * Test harness for dispatch()'s tasks: a dispatcher over node:http behind a real apiKeyAuth (keys `alice-key…`
 * and `bob-key…`), a tools handler object whose `call` starts a task (`ctx.tasks.start`) for a declaring client
 * and runs the same work directly otherwise, and modern requests as the conformance suite sends them (`_meta`
 * envelope, client capabilities declaring the extension or not).
 */
import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { apiKeyAuth, hashKey } from '../../middleware/api-key-auth/index';
import { type DispatchMiddleware, type DispatchOptions, dispatch } from '../../middleware/dispatch/index';
import type { CallContext, TaskWork } from '../../core/contract';
import type { Middleware, RequestLocals, TaskTrack } from '../../core/types';
import type { JsonObject } from '../../lib/jsonrpc';
import { chain } from './dispatch-harness';

export const EXT = 'io.modelcontextprotocol/tasks';
export const KEYS = { alice: 'alice-key-0123456789abcdef', bob: 'bob-key-0123456789abcdef' } as const;
export type Who = keyof typeof KEYS;

/** The works by tool name; a test sets the ones it calls. */
export type Works = Map<string, TaskWork>;

/** The tools handler object: `call` starts a task for a declaring client, else runs the work in the request. */
export function taskTools(works: Works): object {
  return {
    list: () => ({
      tools: [...works.keys()].map((name) => ({ name, inputSchema: { type: 'object' } })),
    }),
    call: (params: JsonObject, ctx: CallContext) => {
      const name = String(params.name);
      const work = works.get(name);
      if (work === undefined) throw new Error(`no work ${name}`);
      if (ctx.tasks?.declared) return ctx.tasks.start(work, { tool: name });
      return work(ctx);
    },
  };
}

export interface TaskServer {
  base: string;
  mcp: DispatchMiddleware;
  /** The `locals.task` of each finished request, by the request's JSON-RPC method. */
  tracks: { method: string; task: TaskTrack | undefined; locals: RequestLocals | undefined }[];
  close(): Promise<void>;
}

/** A dispatcher with `tasks` behind apiKeyAuth, on node:http. */
export async function taskServer(
  works: Works,
  tasks: DispatchOptions['tasks'],
  extra: Partial<DispatchOptions> = {},
): Promise<TaskServer> {
  const quiet = { error() {}, warn() {} };
  const auth = apiKeyAuth({
    keys: [
      { userId: 'alice', hash: hashKey(KEYS.alice), groups: ['staff'] },
      { userId: 'bob', hash: hashKey(KEYS.bob), groups: ['staff'] },
    ],
    logger: quiet,
  });
  const mcp = dispatch({
    handlers: { tools: taskTools(works) as never },
    serverInfo: { name: 'tasks-test', version: '1.0.0' },
    logger: quiet,
    ...(tasks === undefined ? {} : { tasks }),
    ...extra,
  });
  const tracks: TaskServer['tracks'] = [];
  const watch: Middleware = (req, res, next) => {
    res.on('finish', () => {
      const m = req.locals?.mcp as { method?: string } | undefined;
      tracks.push({ method: m?.method ?? '', task: req.locals?.task, locals: req.locals });
    });
    next();
  };
  const server: Server = http.createServer(chain([watch, auth, mcp]));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  return {
    base,
    mcp,
    tracks,
    async close() {
      await mcp.close({ deadlineMs: 100 });
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

export interface Answer {
  status: number;
  body: {
    id?: unknown;
    result?: JsonObject & Record<string, any>;
    error?: { code: number; message: string; data?: any };
  };
}

let nextId = 1;

/** A modern request (`declare`: the client capabilities name the extension; default true). */
export async function rpc(
  base: string,
  method: string,
  params: JsonObject,
  opts: { who?: Who; declare?: boolean; caps?: JsonObject } = {},
): Promise<Answer> {
  const caps: JsonObject = { ...(opts.caps ?? {}) };
  if (opts.declare !== false) caps.extensions = { [EXT]: {} };
  const body = {
    jsonrpc: '2.0',
    id: nextId++,
    method,
    params: {
      ...params,
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientInfo': { name: 'tasks-test', version: '1' },
        'io.modelcontextprotocol/clientCapabilities': caps,
      },
    },
  };
  const name =
    typeof params.taskId === 'string'
      ? params.taskId
      : typeof params.name === 'string'
        ? params.name
        : undefined;
  const res = await fetch(base, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': '2026-07-28',
      'Mcp-Method': method,
      ...(name === undefined ? {} : { 'Mcp-Name': name }),
      Authorization: `Bearer ${KEYS[opts.who ?? 'alice']}`,
    },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Answer['body'] };
}

/** A legacy (2025-11-25) request, without a session. */
export async function legacyRpc(base: string, method: string, params: JsonObject): Promise<Answer> {
  const res = await fetch(base, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': '2025-11-25',
      Authorization: `Bearer ${KEYS.alice}`,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params }),
  });
  return { status: res.status, body: (await res.json()) as Answer['body'] };
}

/** Create a task with `tool`; its CreateTaskResult. */
export async function create(
  base: string,
  tool: string,
  opts: { who?: Who; caps?: JsonObject } = {},
): Promise<JsonObject & Record<string, any>> {
  const a = await rpc(base, 'tools/call', { name: tool, arguments: {} }, opts);
  if (a.body.result?.resultType !== 'task') throw new Error(`no task: ${JSON.stringify(a.body)}`);
  return a.body.result;
}

/** tasks/get until `until(task)` holds (polled; a bounded number of tries, no timing assertion). */
export async function pollTask(
  base: string,
  taskId: string,
  until: (t: Record<string, any>) => boolean,
  who: Who = 'alice',
): Promise<Record<string, any>> {
  let last: Answer | undefined;
  for (let i = 0; i < 500; i++) {
    last = await rpc(base, 'tasks/get', { taskId }, { who });
    if (last.body.result && until(last.body.result)) return last.body.result;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`task ${taskId} never got there: ${JSON.stringify(last?.body)}`);
}

export const terminal = (t: Record<string, any>): boolean =>
  t.status === 'completed' || t.status === 'failed' || t.status === 'cancelled';

/** A promise and its resolve. */
export function gate<T = void>(): { promise: Promise<T>; open: (v: T) => void } {
  let open!: (v: T) => void;
  const promise = new Promise<T>((r) => (open = r));
  return { promise, open };
}
