/**
 * `mcpware/prompts`: the prompts handler object (`prompts/list`, `prompts/get`) over small
 * {@link PromptSource}s (in-memory definitions, the markdown catalogue, or your own code).
 *
 * A prompt is a `{{arg}}` template sent as one user message, or a `render` function building the messages.
 * Unknown (or hidden) prompts and missing required arguments answer -32602, in-band.
 *
 * @see docs/handlers/prompts.md
 */
import { ErrorCode, McpError } from '../../lib/errors.js';
import type { JsonObject } from '../../lib/jsonrpc.js';
import { CHANGES } from '../changes/index.js';
import type { CallContext } from '../../core/contract.js';
import { COMPLETER, pageOrThrow, withCache } from '../shared.js';
import { type PromptsConfig, resolvePromptsOptions } from './options.js';
import { checkDefinition, getPrompt, publicPrompt, readArguments } from './render.js';
import type { PromptDefinition, PromptsHandler, PromptsOptions } from './types.js';
import { clip } from '../../lib/clip.js';

export type {
  PromptArgument,
  PromptDefinition,
  PromptGetResult,
  PromptMessage,
  PromptSource,
  PromptsHandler,
  PromptsOptions,
} from './types.js';

function isVisible(c: PromptsConfig, p: PromptDefinition, ctx: CallContext): boolean {
  return c.visible ? c.visible(p, ctx) === true : true;
}

/** Every visible prompt: in-memory ones first, then each source's; the first to list a name owns it. */
async function listAll(c: PromptsConfig, ctx: CallContext): Promise<PromptDefinition[]> {
  const seen = new Set<string>();
  const out: PromptDefinition[] = [];
  const add = (d: PromptDefinition): void => {
    if (seen.has(d.name)) return;
    seen.add(d.name);
    if (isVisible(c, d, ctx)) out.push(d);
  };
  c.memory.forEach(add);
  for (const s of c.sources) {
    for (const d of await s.list(ctx)) {
      checkDefinition(d, 'a source prompt');
      add(d);
    }
  }
  return out;
}

/** The definition this caller sees by that name, or `undefined` (unknown and hidden alike). */
async function find(c: PromptsConfig, name: string, ctx: CallContext): Promise<PromptDefinition | undefined> {
  let def: PromptDefinition | undefined = c.memory.get(name);
  if (def === undefined) {
    for (const s of c.sources) {
      if (s.get) def = await s.get(name, ctx);
      else def = (await s.list(ctx)).find((d) => d?.name === name);
      if (def !== undefined) {
        checkDefinition(def, 'a source prompt');
        break;
      }
    }
  }
  return def !== undefined && isVisible(c, def, ctx) ? def : undefined;
}

/**
 * Create the prompts handler object. Throws a TypeError for an unknown or invalid option.
 * @param options - {@link PromptsOptions}
 * @see docs/handlers/prompts.md
 * @example
 * ```ts
 * import { dispatch } from 'mcpware/dispatch';
 * import { prompts } from 'mcpware/prompts';
 *
 * const pr = prompts({
 *   prompts: [{ name: 'summarize', arguments: [{ name: 'topic', required: true }], template: 'Summarize {{topic}}.' }],
 * });
 * app.use('/mcp', dispatch({ handlers: { prompts: pr }, serverInfo: { name: 'my-server', version: '1.0.0' } }));
 * ```
 */
export function prompts(options: PromptsOptions = {}): PromptsHandler {
  const c = resolvePromptsOptions(options);
  return {
    async list(params, ctx) {
      const all = await listAll(c, ctx);
      const p = pageOrThrow('prompts', all, (d) => d.name, params, c.pageSize);
      const body: { prompts: JsonObject[]; nextCursor?: string } = { prompts: p.page.map(publicPrompt) };
      if (p.nextCursor !== undefined) body.nextCursor = p.nextCursor;
      return withCache(body, c.cache);
    },

    async get(params, ctx) {
      const name = params.name;
      if (typeof name !== 'string' || name === '') {
        throw new McpError(ErrorCode.InvalidParams, 'prompts/get: "name" must be a non-empty string');
      }
      const args = readArguments(params.arguments);
      const def = await find(c, name, ctx);
      if (def === undefined) {
        throw new McpError(ErrorCode.InvalidParams, `Unknown prompt: ${clip(name)}`, {
          name: clip(name, 256),
        });
      }
      return getPrompt(name, def, args, c.maxRenderedLength, ctx);
    },

    [CHANGES]: c.changes,

    [COMPLETER]: {
      async complete(ref, argument, value, context, ctx) {
        if (ref.type !== 'ref/prompt' || typeof ref.name !== 'string') return undefined;
        const def = await find(c, ref.name, ctx);
        if (def === undefined) return undefined;
        if (!def.complete || !(def.arguments ?? []).some((a) => a.name === argument)) return [];
        return def.complete(argument, value, ctx, context);
      },
    },
  };
}
