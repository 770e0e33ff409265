/**
 * The forwarding engine's lists: the tool views on a server's `tools/list` page, and, with `pageSize`, a list
 * read whole from the server (following its cursors, within `maxListPages` and `maxListItems`), filtered by the
 * views and paged with mcpware's own cursors (lib/cursor.ts), so the pages a caller sees hold only what that
 * caller may see.
 *
 * @see docs/architecture.md
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { classifyAnswer } from '../lib/answer.js';
import { decodeCursor, paginate } from '../lib/cursor.js';
import { ErrorCode, type RequestId } from '../lib/errors.js';
import type { JsonObject } from '../lib/jsonrpc.js';
import { isJsonObject } from '../lib/json.js';
import type { McpRequest } from '../lib/request.js';
import { UpstreamError } from './upstream-error.js';
import type { Engine, Outgoing } from './forward-request.js';
import { log } from './log.js';
import { applyOutbound } from './outbound.js';
import { passedHeaders, readAnswer, writeJson } from './relay.js';
import { localsOf, sendInternalError } from './respond.js';
import { exposeList, toolViewsOf } from './tool-views.js';

/** The list methods: the member holding the entries, the key of an entry, the name cursors are minted for. */
const LISTS: ReadonlyMap<string, { member: string; key: string; list: string }> = new Map([
  ['tools/list', { member: 'tools', key: 'name', list: 'tools' }],
  ['resources/list', { member: 'resources', key: 'uri', list: 'resources' }],
  [
    'resources/templates/list',
    { member: 'resourceTemplates', key: 'uriTemplate', list: 'resources/templates' },
  ],
  ['prompts/list', { member: 'prompts', key: 'name', list: 'prompts' }],
]);

/** Whether `pageSize` makes the engine read `method`'s list whole. */
export function isAggregated(method: string): boolean {
  return LISTS.has(method);
}

/**
 * A `tools/list` result through the request's tool views (hidden tools dropped, the rest renamed), the actual
 * names remembered (bounded) for metrics' `tool` label. `undefined` for a result whose `tools` the views cannot
 * read (fail closed).
 */
export function viewListResult(
  engine: Engine,
  req: IncomingMessage,
  result: JsonObject,
): JsonObject | undefined {
  const tools = result.tools;
  if (!Array.isArray(tools)) return undefined;
  remember(engine, tools);
  const views = toolViewsOf(req.locals);
  if (views.length === 0) return result;
  const exposed = exposeList(tools, views);
  return exposed === undefined ? undefined : { ...result, tools: exposed };
}

function remember(engine: Engine, tools: readonly unknown[]): void {
  const cap = engine.options.maxListItems;
  for (const t of tools) {
    if (engine.listed.size >= cap) return;
    if (isJsonObject(t) && typeof t.name === 'string' && t.name.length <= 128) engine.listed.add(t.name);
  }
}

/** What one aggregated list request needs. */
export interface ListExchange {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly mcp: McpRequest;
  readonly out: Outgoing;
  readonly signal: AbortSignal;
}

/** -32602 for a cursor mcpware did not mint or that went stale, as a handler's `pageOrThrow` answers it. */
function badCursor(x: ListExchange, what: string, message: string, reason: string): void {
  localsOf(x.req).response = { code: ErrorCode.InvalidParams };
  const error = { code: ErrorCode.InvalidParams, message: `${what}/list: ${message}`, data: { reason } };
  writeJson(x.res, 200, [], JSON.stringify({ jsonrpc: '2.0', id: x.mcp.id, error }));
}

/** Read the server's whole list, page by page, within the bounds. The last page's answer is kept for its fields. */
async function readWhole(
  engine: Engine,
  x: ListExchange,
  spec: { member: string },
): Promise<{ items: unknown[]; last: JsonObject; headers: (string | number)[] } | { error: JsonObject }> {
  const { maxListPages, maxListItems, maxAnswerBytes, logger } = engine.options;
  const params: JsonObject = { ...x.mcp.params };
  delete params.cursor;
  const items: unknown[] = [];
  let cursor: string | undefined;
  for (let page = 0; ; page++) {
    const message: JsonObject = {
      ...x.mcp.message.raw,
      params: cursor === undefined ? params : { ...params, cursor },
    };
    const response = await engine.sendOnce(x.req, x.out, x.signal, message);
    const headers = passedHeaders(response);
    const answer = await readAnswer(response, x.mcp.id as RequestId, maxAnswerBytes, x.signal);
    const a = classifyAnswer(answer);
    if (a.kind === 'error') return { error: answer };
    if (a.kind !== 'result') throw new UpstreamError('upstream_invalid', 'not a list result');
    const entries = a.result[spec.member];
    if (!Array.isArray(entries))
      throw new UpstreamError('upstream_invalid', `a ${x.mcp.method} result without ${spec.member}`);
    for (const e of entries) {
      if (items.length >= maxListItems) break;
      items.push(e);
    }
    const next = a.result.nextCursor;
    const more = typeof next === 'string' && next !== '';
    if (!more) return { items, last: a.result, headers };
    if (items.length >= maxListItems || page + 1 >= maxListPages) {
      log(
        logger,
        'warn',
        `${x.mcp.method}: the server's list is longer than the bounds; the rest is not listed`,
        {
          pages: page + 1,
          items: items.length,
        },
      );
      return { items, last: a.result, headers };
    }
    cursor = next;
  }
}

/** Answer a list request from the server's whole list, paged with mcpware's cursors. */
export async function aggregateList(engine: Engine, x: ListExchange): Promise<void> {
  const method = x.mcp.method ?? '';
  const spec = LISTS.get(method)!;
  const clientCursor = x.mcp.params?.cursor;
  if (typeof clientCursor === 'string' && clientCursor !== '') {
    const d = decodeCursor(clientCursor, spec.list);
    if (!d.ok) return badCursor(x, spec.list, d.message, d.reason);
  }
  const whole = await readWhole(engine, x, spec);
  const locals = localsOf(x.req);
  if ('error' in whole) {
    const a = classifyAnswer(whole.error);
    locals.response = { code: a.kind === 'error' ? a.code : ErrorCode.InternalError };
    return writeJson(x.res, 200, [], JSON.stringify(whole.error));
  }
  let items: unknown[] = whole.items;
  if (method === 'tools/list') {
    const viewed = viewListResult(engine, x.req, { tools: items });
    if (viewed === undefined)
      throw new UpstreamError('upstream_invalid', 'a tools/list result the views cannot read');
    items = viewed.tools as unknown[];
  }
  const keyOf = (e: unknown): string => {
    const k = isJsonObject(e) ? e[spec.key] : undefined;
    return typeof k === 'string' ? k : '';
  };
  const p = paginate(items, keyOf, clientCursor, engine.options.pageSize, spec.list);
  if (!p.ok) return badCursor(x, spec.list, p.message, p.reason);
  const result: JsonObject = { ...whole.last, [spec.member]: p.page };
  delete result.nextCursor;
  if (p.nextCursor !== undefined) result.nextCursor = p.nextCursor;
  let out: unknown;
  try {
    out = await applyOutbound(locals, result, method, 'result');
  } catch (err) {
    return sendInternalError(x.req, x.res, err, engine.by, engine.options.logger);
  }
  const rt = result.resultType;
  locals.response = { resultType: typeof rt === 'string' ? rt : 'complete' };
  writeJson(x.res, 200, whole.headers, JSON.stringify({ jsonrpc: '2.0', id: x.mcp.id, result: out }));
}
