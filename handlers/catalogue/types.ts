/**
 * The types of the markdown catalogue: its options, what a load returns, and the error a load fails with.
 *
 * @see docs/handlers/catalogue.md
 */
import { McpwareError } from '../../lib/errors.js';
import type { PromptDefinition, PromptSource } from '../prompts/types.js';
import type { ResourceEntry, ResourceSource } from '../resources/types.js';

export interface CatalogueOptions {
  /**
   * URI scheme (`docs` → `docs://getting-started.md`), or a whole prefix ending in `/` (`srv://catalog/`).
   * Default `docs`.
   */
  scheme?: string;
  /** The subfolder whose markdown files are prompts. Default `prompts`; `false` turns prompts off. */
  promptsDir?: string | false;
  /** Largest file accepted, in bytes; a larger one fails the load. Default 1 MiB. */
  maxFileBytes?: number;
  /** Most files accepted. Default 1000. */
  maxFiles?: number;
  /** Most bytes accepted over all files. Default 32 MiB. */
  maxTotalBytes?: number;
  /** Deepest folder nesting walked below the root. Default 8. */
  maxDepth?: number;
  /** Longest description kept (characters; a longer fallback paragraph is cut with `…`). Default 240. */
  descriptionMaxLength?: number;
  /**
   * Refuse a prompt whose body has a `{{placeholder}}` that is not a declared argument (catches typos).
   * Default true.
   */
  strictPlaceholders?: boolean;
}

/** The resources half of a catalogue: a {@link ResourceSource} plus its entries for inspection. */
export interface CatalogueResources extends ResourceSource {
  readonly entries: readonly ResourceEntry[];
}
/** The prompts half of a catalogue: a {@link PromptSource} plus its definitions for inspection. */
export interface CataloguePrompts extends PromptSource {
  readonly definitions: readonly PromptDefinition[];
}

export interface Catalogue {
  resources: CatalogueResources;
  prompts: CataloguePrompts;
  /** The URI prefix, e.g. `docs://`. */
  prefix: string;
  /** The relative paths loaded, in walk order. */
  files: readonly string[];
}

/**
 * A catalogue that cannot be loaded. `files` names the relative paths involved.
 * @see docs/handlers/catalogue.md
 * @example
 * ```ts
 * import { CatalogueError, loadCatalogue } from 'mcpware/catalogue';
 *
 * try {
 *   await loadCatalogue('./catalogue');
 * } catch (err) {
 *   if (err instanceof CatalogueError) console.error(err.message, err.files);
 *   else throw err;
 * }
 * ```
 */
export class CatalogueError extends McpwareError<'ERR_CATALOGUE'> {
  readonly files: readonly string[];
  constructor(message: string, files: readonly string[]) {
    super('ERR_CATALOGUE', message);
    this.files = files;
  }
}
