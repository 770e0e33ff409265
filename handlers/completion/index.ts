/**
 * `mcpware/completion`: `completion/complete`, argument suggestions for prompts (`ref/prompt`) and
 * resource-template variables (`ref/resource`), answered by the `complete` functions of the definitions the
 * prompts and resources handler objects serve. Register it as `handlers.completion` and advertise
 * `capabilities.completions`.
 *
 * @see docs/handlers/completion.md
 */
import { ErrorCode, McpError } from '../../lib/errors.js';
import type { JsonObject } from '../../lib/jsonrpc.js';
import type { CallContext } from '../../core/contract.js';
import { badOption, knownKeys, optionsObject } from '../../core/options.js';
import { COMPLETER, type Completer } from '../shared.js';
import { isJsonObject } from '../../lib/json.js';
import { clip } from '../../lib/clip.js';

/** The most values one completion carries (the spec's cap). */
export const MAX_COMPLETION_VALUES = 100;

export interface CompletionOptions {
  /** The handler object from `prompts()`. */
  prompts?: { [COMPLETER]: Completer };
  /** The handler object from `resources()`. */
  resources?: { [COMPLETER]: Completer };
}

export interface CompletionResult {
  completion: { values: string[]; total?: number; hasMore?: boolean };
}

// A type alias, not an interface: only aliases get the implicit index signature `Handlers` asks for.
export type CompletionHandler = {
  complete(params: JsonObject, ctx: CallContext): Promise<CompletionResult>;
};

const F = 'completion';
const OPTIONS = ['prompts', 'resources'] as const;

/**
 * Create the completion handler object. Throws a TypeError for an unknown or invalid option.
 * @param options - {@link CompletionOptions}
 * @see docs/handlers/completion.md
 * @example
 * ```ts
 * import { completion } from 'mcpware/completion';
 * import { dispatch } from 'mcpware/dispatch';
 * import { prompts } from 'mcpware/prompts';
 *
 * const pr = prompts({
 *   prompts: [
 *     {
 *       name: 'weather',
 *       arguments: [{ name: 'city', required: true }],
 *       template: 'What is the weather in {{city}}?',
 *       complete: (_argument, value) => ['Berlin', 'Bern'].filter((c) => c.startsWith(value)),
 *     },
 *   ],
 * });
 * const handlers = { prompts: pr, completion: completion({ prompts: pr }) };
 * app.use('/mcp', dispatch({ handlers, serverInfo: { name: 'my-server', version: '1.0.0' } }));
 * ```
 */
export function completion(options: CompletionOptions = {}): CompletionHandler {
  const o = optionsObject(F, options);
  knownKeys(F, o, OPTIONS);
  const completers: Completer[] = [];
  for (const key of OPTIONS) {
    const h = o[key];
    if (h === undefined) continue;
    const c = isJsonObject(h) ? (h as { [COMPLETER]?: Completer })[COMPLETER] : undefined;
    if (!c || typeof c.complete !== 'function')
      throw badOption(F, key, h, `the handler object returned by ${key}()`);
    completers.push(c);
  }

  return {
    async complete(params, ctx) {
      const ref = params.ref;
      const arg = params.argument;
      if (!isJsonObject(ref) || typeof ref.type !== 'string') {
        throw new McpError(
          ErrorCode.InvalidParams,
          'completion/complete: "ref" must be an object with a "type"',
        );
      }
      if (!isJsonObject(arg) || typeof arg.name !== 'string' || typeof arg.value !== 'string') {
        throw new McpError(
          ErrorCode.InvalidParams,
          'completion/complete: "argument" must be {name: string, value: string}',
        );
      }
      const context: Record<string, string> = Object.create(null) as Record<string, string>;
      const given = isJsonObject(params.context) ? params.context.arguments : undefined;
      if (isJsonObject(given))
        for (const k of Object.keys(given)) if (typeof given[k] === 'string') context[k] = given[k];

      for (const c of completers) {
        const values = await c.complete(ref, arg.name, arg.value, context, ctx);
        if (values === undefined) continue;
        const all = Array.from(values).filter((v): v is string => typeof v === 'string');
        const out: CompletionResult = { completion: { values: all.slice(0, MAX_COMPLETION_VALUES) } };
        if (all.length > MAX_COMPLETION_VALUES) {
          out.completion.total = all.length;
          out.completion.hasMore = true;
        }
        return out;
      }
      const what =
        ref.type === 'ref/prompt'
          ? `prompt ${clip(String(ref.name))}`
          : ref.type === 'ref/resource'
            ? `resource template ${clip(String(ref.uri))}`
            : `reference type ${clip(ref.type)}`;
      throw new McpError(ErrorCode.InvalidParams, `completion/complete: unknown ${what}`);
    },
  };
}
