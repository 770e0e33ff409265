/**
 * The route table: (namespace, member) → the handler method that answers it, built once from the `handlers`
 * option. Only callable members are reachable (see `HandlerObject` in core/contract.ts): the ones a handler
 * object lists under `HANDLER_METHODS`, or else the methods the object and its classes define (its own
 * function-valued properties and those of its prototypes, up to the first built-in prototype).
 *
 * @see docs/middleware/dispatch.md
 */
import { EventEmitter } from 'node:events';
import { HANDLER_METHODS, type HandlerMethod } from '../../core/contract.js';
import { badOption } from '../../core/options.js';
import { TOOL_VIEWS_APPLIED } from '../../core/tool-views.js';
import { isJsonObject } from '../../lib/json.js';

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

/** Build the table; throws a TypeError naming the handler that is not one. */
export function buildTable(handlers: unknown): RouteTable {
  if (!isJsonObject(handlers))
    throw badOption('dispatch', 'handlers', handlers, 'an object of handler objects');
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
    if (!isJsonObject(h)) throw badOption('dispatch', `handlers.${ns}`, h, 'a handler object or a function');
    if (ns.includes('/'))
      throw badOption('dispatch', `handlers.${ns}`, h, 'registered under a namespace without "/"');
    for (const [m, fn] of membersOf(ns, h)) add(ns, m, { fn, self: h });
    if (ns === 'tools' && (h as Record<symbol, unknown>)[TOOL_VIEWS_APPLIED] === true) viewsAware = true;
  }
  return {
    get: (ns, member) => table.get(ns)?.get(member),
    has: (ns, member) => table.get(ns)?.has(member) === true,
    viewsAware,
  };
}

/** The callable members of one handler object, each with the function a call of that name runs. */
function membersOf(ns: string, obj: Record<string | symbol, unknown>): [string, HandlerMethod][] {
  if (!(HANDLER_METHODS in obj)) return definedMethods(obj);
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
  return (listed as string[]).map((m) => [m, obj[m] as HandlerMethod]);
}

/**
 * Prototypes whose members are never a handler's: `Object.prototype`, `Function.prototype` (its `call` and
 * `apply` would otherwise answer `tools/call`), and the EventEmitter a handler class may extend.
 */
const FOREIGN: ReadonlySet<object> = new Set<object>([
  Object.prototype,
  Function.prototype,
  EventEmitter.prototype,
]);

const NATIVE = /\{\s*\[native code\]\s*\}\s*$/;

/** A built-in prototype: one listed in FOREIGN, or one whose own constructor is native (Map, Array, Error, …). */
function isForeign(proto: object): boolean {
  if (FOREIGN.has(proto)) return true;
  const ctor = Object.getOwnPropertyDescriptor(proto, 'constructor')?.value;
  return typeof ctor === 'function' && NATIVE.test(Function.prototype.toString.call(ctor));
}

/**
 * The methods an object defines: its own function-valued properties (an own getter is read, as an object
 * literal's members are), then its prototypes' function-valued data properties (class methods, enumerable or
 * not), the nearest definition of a name winning, up to the first built-in prototype. `constructor` is never a
 * method.
 */
function definedMethods(obj: object): [string, HandlerMethod][] {
  const seen = new Set<string>(['constructor']);
  const out: [string, HandlerMethod][] = [];
  for (
    let p: object | null = obj;
    p !== null && !isForeign(p);
    p = Object.getPrototypeOf(p) as object | null
  ) {
    for (const name of Object.getOwnPropertyNames(p)) {
      if (seen.has(name)) continue;
      seen.add(name);
      const d = Object.getOwnPropertyDescriptor(p, name)!;
      const v = 'value' in d ? d.value : p === obj ? (obj as Record<string, unknown>)[name] : undefined;
      if (typeof v === 'function') out.push([name, v as HandlerMethod]);
    }
  }
  return out;
}
