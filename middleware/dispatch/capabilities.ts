/**
 * The server's capabilities: derived from the handlers, or given and checked against them. A declared capability
 * is a promise to answer its methods, so each one needs its handler members, and a `listChanged`/`subscribe`
 * flag needs the change feed that carries it.
 *
 * @see docs/middleware/dispatch.md
 */
import { hasCapability } from '../../lib/routing.js';
import type { ServerCapabilities } from '../../core/contract.js';
import { type ChangeFeed, changesOf } from '../../core/change-feed.js';
import { OPTION_ERRORS, badOption, optionError } from '../../core/options.js';
import { isJsonObject } from '../../lib/json.js';
import { TASKS_EXTENSION } from '../../lib/tasks.js';

/** The (namespace, member) pairs each capability requires of the handlers. */
export const REQUIRED_MEMBERS: Readonly<Record<string, readonly (readonly [string, string])[]>> = {
  tools: [
    ['tools', 'list'],
    ['tools', 'call'],
  ],
  resources: [
    ['resources', 'list'],
    ['resources', 'read'],
  ],
  prompts: [
    ['prompts', 'list'],
    ['prompts', 'get'],
  ],
  completions: [['completion', 'complete']],
};

/** The change feeds of the three list-bearing handler objects. */
export interface Feeds {
  readonly tools?: ChangeFeed | undefined;
  readonly resources?: ChangeFeed | undefined;
  readonly prompts?: ChangeFeed | undefined;
}

/** The change feeds the handler objects carry (see core/change-feed.ts). */
export function feedsOf(handlers: unknown): Feeds {
  const h = handlers as Readonly<Record<string, unknown>>;
  return { tools: changesOf(h.tools), resources: changesOf(h.resources), prompts: changesOf(h.prompts) };
}

type Has = (ns: string, member: string) => boolean;

/** The capabilities to declare: `given` checked against the handlers, or derived from them. */
export function resolveCapabilities(given: unknown, has: Has, feeds: Feeds): ServerCapabilities {
  if (given === undefined) return deriveCapabilities(has, feeds);
  if (!isJsonObject(given))
    throw badOption('dispatch', 'capabilities', given, 'an object (ServerCapabilities)');
  for (const key of [
    'tools',
    'resources',
    'prompts',
    'completions',
    'logging',
    'experimental',
    'extensions',
  ]) {
    if (given[key] !== undefined && !isJsonObject(given[key]))
      throw badOption('dispatch', `capabilities.${key}`, given[key], 'an object');
  }
  for (const key of ['tools', 'resources', 'prompts'] as const) {
    const c = given[key];
    // A listChanged promise needs a channel: the handler object's change feed, read by subscriptions/listen.
    if (isJsonObject(c) && c.listChanged === true && !feeds[key]) {
      throw badOption(
        'dispatch',
        `capabilities.${key}.listChanged`,
        true,
        `false or absent unless handlers.${key} has a change feed (a ToolRegistry, or the changes option of resources()/prompts())`,
      );
    }
  }
  for (const cap of Object.keys(REQUIRED_MEMBERS)) {
    if (!hasCapability(given, cap)) continue;
    const missing = REQUIRED_MEMBERS[cap]!.filter(([ns, m]) => !has(ns, m)).map(
      ([ns, m]) => `handlers.${ns}.${m}`,
    );
    if (missing.length > 0) {
      throw optionError(
        OPTION_ERRORS.invalid,
        'dispatch',
        `dispatch: option "capabilities" declares ${cap}, a promise to answer it, but ${missing.join(' and ')} ${missing.length > 1 ? 'are' : 'is'} missing`,
      );
    }
  }
  if (
    hasCapability(given, 'resources.subscribe') &&
    !feeds.resources &&
    !(has('resources', 'subscribe') && has('resources', 'unsubscribe'))
  ) {
    throw optionError(
      OPTION_ERRORS.invalid,
      'dispatch',
      'dispatch: option "capabilities" declares resources.subscribe, but handlers.resources has no change feed (the changes option of resources()) and no subscribe and unsubscribe members',
    );
  }
  try {
    return structuredClone(given) as ServerCapabilities;
  } catch {
    throw badOption('dispatch', 'capabilities', given, 'plain JSON data');
  }
}

/** Each capability whose required members all exist; a capability half present is refused. */
function deriveCapabilities(has: Has, feeds: Feeds): ServerCapabilities {
  const caps: ServerCapabilities = {};
  for (const cap of ['tools', 'resources', 'prompts', 'completions'] as const) {
    const need = REQUIRED_MEMBERS[cap]!;
    const missing = need.filter(([ns, m]) => !has(ns, m));
    if (missing.length === 0) caps[cap] = {};
    else if (missing.length < need.length) {
      throw optionError(
        OPTION_ERRORS.invalid,
        'dispatch',
        `dispatch: option "handlers" has part of the ${cap} methods; add ${missing.map(([ns, m]) => `${ns}.${m}`).join(' and ')} (or declare capabilities explicitly)`,
      );
    }
  }
  if (caps.tools && feeds.tools) caps.tools = { listChanged: true };
  if (caps.prompts && feeds.prompts) caps.prompts = { listChanged: true };
  if (caps.resources) {
    if (feeds.resources) caps.resources = { subscribe: true, listChanged: true };
    else if (has('resources', 'subscribe') && has('resources', 'unsubscribe'))
      caps.resources = { subscribe: true };
  }
  return caps;
}

/**
 * The capabilities `server/discover` answers: the declared ones, plus `extensions["io.modelcontextprotocol/tasks"]`
 * when tasks are configured. A legacy `initialize` never names the extension (2025-11-25 has no extensions).
 */
export function discoverCapabilities(capabilities: ServerCapabilities, tasks: boolean): ServerCapabilities {
  const out = structuredClone(capabilities);
  if (!tasks) return out;
  const ext = isJsonObject(out.extensions) ? out.extensions : {};
  out.extensions = { ...ext, [TASKS_EXTENSION]: {} };
  return out;
}
