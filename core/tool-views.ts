/**
 * Tool views: what `toolFilter()` installs on a request and what `dispatch()` and `ToolRegistry` apply (filter
 * and rename `tools/list`, map a `tools/call` name back to the actual tool). Internal to the library.
 */
import type { IncomingMessage } from 'node:http';
import { localsOf } from './respond.js';
import type { RequestLocals } from './types.js';
import { isJsonObject } from '../lib/json.js';

/** How one tool is shown: its user-facing name, and a replacement description when one is configured. */
export interface ExposedTool {
  name: string;
  description?: string;
}

/** A per-request transformation of the tool namespace. */
export interface ToolView {
  /** How the actual tool `actualName` is shown, or `undefined` when this view hides it. */
  expose(actualName: string): ExposedTool | undefined;
  /** The actual name behind the user-facing `name`, or `undefined` when this view shows nothing by that name. */
  resolve(name: string): string | undefined;
}

/**
 * Where a request's tool views live on `req.locals`. A registered symbol: the ESM and CommonJS copies of the
 * package share it, and no JSON-RPC method name or application string key reaches it.
 */
const KEY: unique symbol = Symbol.for('mcpware.toolViews');
// The functions below read the module's own binding: the CommonJS build would otherwise read the symbol from
// `exports` at each call, which bench/ab.ts shows on every tools/call.
export { KEY as TOOL_VIEWS };

/**
 * Set to `true` on a tools handler object that applies the request's views itself (a ToolRegistry does, so its
 * cursors and unknown-tool hints never name a filtered tool). For other handlers `dispatch()` applies them.
 */
export const TOOL_VIEWS_APPLIED: unique symbol = Symbol.for('mcpware.toolViewsApplied');

/** The tool views installed on a request (`req.locals`), outermost (closest to the client) first. */
export function toolViewsOf(locals: RequestLocals | undefined): readonly ToolView[] {
  return locals?.[KEY] ?? [];
}

/** Install a view on a request (innermost last). Installing the same view twice is a no-op. */
export function addToolView(req: IncomingMessage, view: ToolView): void {
  const locals = localsOf(req);
  const list = locals[KEY] ?? [];
  if (!list.includes(view)) list.push(view);
  locals[KEY] = list;
}

/**
 * How an actual tool is shown through every view (innermost view first, the way the answer travels), or
 * `undefined` when one of them hides it.
 */
export function exposeThrough(actualName: string, views: readonly ToolView[]): ExposedTool | undefined {
  let name = actualName;
  let description: string | undefined;
  for (let i = views.length - 1; i >= 0; i--) {
    const e = views[i]!.expose(name);
    if (!e) return undefined;
    name = e.name;
    if (e.description !== undefined) description = e.description;
  }
  return description === undefined ? { name } : { name, description };
}

/** The actual tool behind a user-facing name (outermost view first), or `undefined` when a view refuses it. */
export function resolveThrough(name: string, views: readonly ToolView[]): string | undefined {
  let cur: string | undefined = name;
  for (const v of views) {
    cur = v.resolve(cur);
    if (cur === undefined) return undefined;
  }
  return cur;
}

/**
 * Apply views to a list of tool definitions: hidden ones dropped, the rest renamed and re-described, order
 * kept. Returns `undefined` when an entry has no string name (fail closed: such a list is not sent).
 */
export function exposeList(
  tools: readonly unknown[],
  views: readonly ToolView[],
): Record<string, unknown>[] | undefined {
  const out: Record<string, unknown>[] = [];
  for (const t of tools) {
    if (!isJsonObject(t)) return undefined;
    const tool = t as Record<string, unknown>;
    if (typeof tool.name !== 'string' || tool.name === '') return undefined;
    const e = exposeThrough(tool.name, views);
    if (!e) continue;
    const copy: Record<string, unknown> = { ...tool, name: e.name };
    if (e.description !== undefined) copy.description = e.description;
    out.push(copy);
  }
  return out;
}
