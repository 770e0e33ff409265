/**
 * The options of `loadCatalogue()`, validated before anything is read: unknown names are refused with the
 * closest known one.
 *
 * @see docs/handlers/catalogue.md
 */
import { badOption, boolOption, intOption, knownKeys, optionsObject } from '../../core/options.js';
import type { CatalogueOptions } from './types.js';

export const F = 'loadCatalogue';
const OPTIONS: readonly (keyof CatalogueOptions)[] = [
  'scheme',
  'promptsDir',
  'maxFileBytes',
  'maxFiles',
  'maxTotalBytes',
  'maxDepth',
  'descriptionMaxLength',
  'strictPlaceholders',
];
const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]{0,31}$/;
const PREFIX = /^[A-Za-z][A-Za-z0-9+.-]{0,31}:\/\/[^\s]{0,200}$/;

/** The options of a load, checked and with their defaults. */
export interface CatalogueConfig {
  prefix: string;
  promptsDir: string | false;
  maxFileBytes: number;
  maxFiles: number;
  maxTotalBytes: number;
  maxDepth: number;
  descMax: number;
  strict: boolean;
}

/** Validate every option of `loadCatalogue()`; throws a TypeError naming the option. */
export function resolveCatalogueOptions(options: CatalogueOptions | undefined): CatalogueConfig {
  const o = optionsObject(F, options);
  knownKeys(F, o, OPTIONS);
  return {
    prefix: prefixOf(o.scheme ?? 'docs'),
    promptsDir: promptsDirOf(o.promptsDir ?? 'prompts'),
    maxFileBytes: intOption(F, 'maxFileBytes', o.maxFileBytes, 1024 * 1024, 1),
    maxFiles: intOption(F, 'maxFiles', o.maxFiles, 1000, 1),
    maxTotalBytes: intOption(F, 'maxTotalBytes', o.maxTotalBytes, 32 * 1024 * 1024, 1),
    maxDepth: intOption(F, 'maxDepth', o.maxDepth, 8, 1),
    descMax: intOption(F, 'descriptionMaxLength', o.descriptionMaxLength, 240, 1),
    strict: boolOption(F, 'strictPlaceholders', o.strictPlaceholders, true),
  };
}

function prefixOf(scheme: unknown): string {
  if (typeof scheme === 'string' && SCHEME.test(scheme)) return scheme.toLowerCase() + '://';
  if (typeof scheme === 'string' && PREFIX.test(scheme) && scheme.endsWith('/')) return scheme;
  const expected = 'a URI scheme such as "docs", or a prefix ending in "/" such as "srv://catalog/"';
  throw badOption(F, 'scheme', scheme, expected);
}

function promptsDirOf(pd: unknown): string | false {
  if (pd === false) return false;
  if (typeof pd !== 'string' || pd === '' || pd.startsWith('.') || /[\\]|\/\/|^\/|\/$/.test(pd)) {
    throw badOption(F, 'promptsDir', pd, 'a relative folder name such as "prompts", or false');
  }
  return pd;
}
