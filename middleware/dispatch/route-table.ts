/**
 * The route table: (namespace, member) → the handler method that answers it, built once from the `handlers`
 * option. Only callable members are reachable (see `HandlerObject` in handlers/contract.ts): the ones a handler
 * object lists under `HANDLER_METHODS`, or else its own function-valued properties.
 *
 * @see docs/middleware/dispatch.md
 */
import { HANDLER_METHODS, type HandlerMethod } from '../../handlers/contract.js';
import { badOption } from '../internal/options.js';
import { TOOL_VIEWS_APPLIED } from '../tool-filter/views.js';

/** A handler method and the object it is called on. */
export interface Bound {
  readonly fn: HandlerMethod;
  /** `this` for the call. */
  readonly self: object | undefined;
}

export interface RouteTable {
  get(namespace: string, member: string): Bound | undefined;
  has(namespace: string, member: string): boolean;
  /** Whether `handlers.tools` applies tool filter views itself (a ToolRegistry does). */
  readonly viewsAware: boolean;
}

const isObj = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

/** Build the table; throws a TypeError naming the handler that is not one. */
export function buildTable(handlers: unknown): RouteTable {
  if (!isObj(handlers)) throw badOption('dispatch', 'handlers', handlers, 'an object of handler objects');
  const table = new Map<string, Map<string, Bound>>();
  const add = (ns: string, member: string, b: Bound): void => {
    let m = table.get(ns);
    if (!m) table.set(ns, (m = new Map()));
    m.set(member, b);
  };
  let viewsAware = false;
  for (const ns of Object.keys(handlers)) {
    const h = handlers[ns];
    if (typeof h === 'function') {
      if (ns === '' || ns.includes('/'))
        throw badOption(
          'dispatch',
          `handlers.${ns}`,
          h,
          'a handler object (root methods are named without "/")',
        );
      add('', ns, { fn: h as HandlerMethod, self: undefined });
      continue;
    }
    if (!isObj(h)) throw badOption('dispatch', `handlers.${ns}`, h, 'a handler object or a function');
    if (ns.includes('/'))
      throw badOption('dispatch', `handlers.${ns}`, h, 'registered under a namespace without "/"');
    for (const m of membersOf(ns, h)) add(ns, m, { fn: h[m] as HandlerMethod, self: h });
    if (ns === 'tools' && (h as Record<symbol, unknown>)[TOOL_VIEWS_APPLIED] === true) viewsAware = true;
  }
  return {
    get: (ns, member) => table.get(ns)?.get(member),
    has: (ns, member) => table.get(ns)?.has(member) === true,
    viewsAware,
  };
}

/** The callable members of one handler object. */
function membersOf(ns: string, obj: Record<string | symbol, unknown>): readonly string[] {
  if (!(HANDLER_METHODS in obj)) return Object.keys(obj).filter((k) => typeof obj[k] === 'function');
  const listed = obj[HANDLER_METHODS];
  if (!Array.isArray(listed) || listed.some((m) => typeof m !== 'string')) {
    throw badOption('dispatch', `handlers.${ns}[HANDLER_METHODS]`, listed, 'an array of member names');
  }
  for (const m of listed as string[]) {
    if (typeof obj[m] !== 'function')
      throw badOption(
        'dispatch',
        `handlers.${ns}.${m}`,
        obj[m],
        'a function (it is listed in HANDLER_METHODS)',
      );
  }
  return listed as string[];
}
