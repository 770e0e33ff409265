/**
 * The options of `prompts()`, validated once when the handler object is built: unknown names are refused with
 * the closest known one, and in-memory prompts are checked here.
 *
 * @see docs/handlers/prompts.md
 */
import { DEFAULT_MAX_RENDERED } from '../../lib/render.js';
import type { ChangeFeed } from '../changes/index.js';
import type { CacheHint } from '../../core/contract.js';
import { checkCache, checkChanges, checkPageSize, checkSources } from '../shared.js';
import { badOption, fnOption, intOption, knownKeys, optionsObject } from '../../core/options.js';
import { checkDefinition } from './render.js';
import type { PromptDefinition, PromptSource, PromptsOptions } from './types.js';

const F = 'prompts';
const OPTIONS: readonly (keyof PromptsOptions)[] = [
  'prompts',
  'sources',
  'pageSize',
  'visible',
  'cache',
  'maxRenderedLength',
  'changes',
];

/** The options of `prompts()`, checked and with their defaults. */
export interface PromptsConfig {
  /** In-memory prompts by name, in the order given. */
  memory: ReadonlyMap<string, PromptDefinition>;
  sources: readonly PromptSource[];
  pageSize: number;
  visible: PromptsOptions['visible'];
  cache: CacheHint | undefined;
  maxRenderedLength: number;
  changes: ChangeFeed | undefined;
}

/** Validate every option of `prompts()`; throws a TypeError naming the option. */
export function resolvePromptsOptions(options: PromptsOptions | undefined): PromptsConfig {
  const o = optionsObject(F, options);
  knownKeys(F, o, OPTIONS);
  const visible = fnOption<NonNullable<PromptsOptions['visible']>>(F, 'visible', o.visible);
  const cache = checkCache(F, o.cache, visible !== undefined);
  const changes = checkChanges(F, o.changes);
  return {
    memory: memoryPrompts(o.prompts),
    sources: checkSources<PromptSource>(F, o.sources, ['list']),
    pageSize: checkPageSize(F, 'pageSize', o.pageSize),
    visible,
    cache,
    maxRenderedLength: intOption(F, 'maxRenderedLength', o.maxRenderedLength, DEFAULT_MAX_RENDERED, 1),
    changes,
  };
}

function memoryPrompts(raw: unknown): Map<string, PromptDefinition> {
  const memory = new Map<string, PromptDefinition>();
  if (raw === undefined) return memory;
  if (!Array.isArray(raw)) throw badOption(F, 'prompts', raw, 'an array of prompt definitions');
  raw.forEach((d: unknown, i) => {
    checkDefinition(d, `prompts[${i}]`);
    if (memory.has(d.name)) throw badOption(F, `prompts[${i}].name`, d.name, 'unique');
    memory.set(d.name, d);
  });
  return memory;
}
