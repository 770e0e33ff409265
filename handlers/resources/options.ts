/**
 * The options of `resources()`, validated once when the handler object is built: unknown names are refused with
 * the closest known one, and templates are parsed here, so a request never meets a bad template.
 *
 * @see docs/handlers/resources.md
 */
import { LEGACY_RESOURCE_NOT_FOUND } from '../../lib/encode.js';
import { type ParsedTemplate, parseTemplate } from '../../lib/uritemplate.js';
import type { ChangeFeed } from '../changes/index.js';
import type { CacheHint } from '../../core/contract.js';
import { checkCache, checkChanges, checkPageSize, checkSources } from '../shared.js';
import { isJsonObject } from '../../lib/json.js';
import { badOption, fnOption, intOption, knownKeys, optionsObject } from '../../core/options.js';
import type { ResourceSource, ResourceTemplate, ResourcesOptions } from './types.js';

const F = 'resources';
const OPTIONS: readonly (keyof ResourcesOptions)[] = [
  'sources',
  'templates',
  'pageSize',
  'templatesPageSize',
  'visible',
  'cache',
  'maxUriLength',
  'legacyNotFoundCode',
  'changes',
];

/** A template with its parsed form. */
export interface Template {
  def: ResourceTemplate;
  parsed: ParsedTemplate;
}

/** The options of `resources()`, checked and with their defaults. */
export interface ResourcesConfig {
  sources: readonly ResourceSource[];
  templates: readonly Template[];
  pageSize: number;
  templatesPageSize: number;
  visible: ResourcesOptions['visible'];
  cache: CacheHint | undefined;
  maxUriLength: number;
  legacyNotFoundCode: -32002 | -32602;
  changes: ChangeFeed | undefined;
}

/** Validate every option of `resources()`; throws a TypeError naming the option. */
export function resolveResourcesOptions(options: ResourcesOptions | undefined): ResourcesConfig {
  const o = optionsObject(F, options);
  knownKeys(F, o, OPTIONS);
  const visible = fnOption<NonNullable<ResourcesOptions['visible']>>(F, 'visible', o.visible);
  const cache = checkCache(F, o.cache, visible !== undefined);
  const legacyNotFoundCode = o.legacyNotFoundCode ?? LEGACY_RESOURCE_NOT_FOUND;
  if (legacyNotFoundCode !== -32002 && legacyNotFoundCode !== -32602) {
    throw badOption(F, 'legacyNotFoundCode', legacyNotFoundCode, '-32002 or -32602');
  }
  const changes = checkChanges(F, o.changes);
  return {
    sources: checkSources<ResourceSource>(F, o.sources, ['list', 'read']),
    templates: checkTemplates(o.templates),
    pageSize: checkPageSize(F, 'pageSize', o.pageSize),
    templatesPageSize: checkPageSize(F, 'templatesPageSize', o.templatesPageSize),
    visible,
    cache,
    maxUriLength: intOption(F, 'maxUriLength', o.maxUriLength, 8192, 1),
    legacyNotFoundCode,
    changes,
  };
}

/** Each template well formed, level 1, and unique by `uriTemplate`. */
function checkTemplates(raw: unknown): Template[] {
  if (raw === undefined) return [];
  if (!Array.isArray(raw)) throw badOption(F, 'templates', raw, 'an array of resource templates');
  const templates: Template[] = [];
  raw.forEach((t: unknown, i) => {
    const d = t as ResourceTemplate;
    if (
      !isJsonObject(t) ||
      typeof d.uriTemplate !== 'string' ||
      typeof d.name !== 'string' ||
      typeof d.read !== 'function'
    ) {
      throw badOption(
        F,
        `templates[${i}]`,
        t,
        'an object with string uriTemplate and name and a read() function',
      );
    }
    const parsed = parseTemplate(d.uriTemplate);
    if (!parsed.ok) {
      const expected = `a level-1 URI template (${parsed.message})`;
      throw badOption(F, `templates[${i}].uriTemplate`, d.uriTemplate, expected);
    }
    if (templates.some((x) => x.def.uriTemplate === d.uriTemplate)) {
      throw badOption(F, `templates[${i}].uriTemplate`, d.uriTemplate, 'unique among templates');
    }
    templates.push({ def: d, parsed });
  });
  return templates;
}
