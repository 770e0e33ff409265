/**
 * Tool arguments against their `inputSchema`: the default schema compiler, and the tool error result that names
 * each bad field so the model can correct its call.
 *
 * @see docs/handlers/tools.md
 */
import Ajv2020 from 'ajv/dist/2020.js';
import type { AjvErrorLike, CallToolResult, SchemaCompiler } from './types.js';
import { clip } from '../../lib/clip.js';

/** The most fields one invalid-arguments result names. */
const MAX_REPORTED_ERRORS = 10;

/** A JSON Pointer instance path as a readable field name: `/a/0/b` → `a[0].b`. */
export function fieldName(pointer: string, extra?: string): string {
  const parts =
    pointer === ''
      ? []
      : pointer
          .slice(1)
          .split('/')
          .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (extra !== undefined) parts.push(extra);
  let out = '';
  for (const p of parts) out += /^\d{1,10}$/.test(p) ? `[${p}]` : out === '' ? p : `.${p}`;
  return clip(out, 128);
}

/** One ajv error as a field and what is wrong with it. */
function describeError(e: AjvErrorLike): { field: string; message: string } {
  if (e.keyword === 'required' && typeof e.params.missingProperty === 'string') {
    return { field: fieldName(e.instancePath, e.params.missingProperty), message: 'is required' };
  }
  if (e.keyword === 'additionalProperties' && typeof e.params.additionalProperty === 'string') {
    return { field: fieldName(e.instancePath, e.params.additionalProperty), message: 'is not allowed' };
  }
  return { field: fieldName(e.instancePath), message: e.message ?? 'is invalid' };
}

/** The tool error result for arguments that failed `inputSchema`: one line naming each bad field. */
export function invalidArguments(errors: readonly AjvErrorLike[] | null | undefined): CallToolResult {
  const seen = new Set<string>();
  const parts: string[] = [];
  const fields: { field: string; message: string }[] = [];
  for (const e of errors ?? []) {
    const { field, message } = describeError(e);
    const line = `${field || '(arguments)'}: ${message}`;
    if (seen.has(line)) continue;
    seen.add(line);
    if (parts.length < MAX_REPORTED_ERRORS) {
      parts.push(line);
      fields.push({ field: field || '(arguments)', message });
    }
  }
  if (parts.length === 0) parts.push('(arguments): do not match the input schema');
  return {
    content: [{ type: 'text', text: `Invalid arguments: ${parts.join('; ')}` }],
    isError: true,
    _meta: { 'mcpware/invalidArguments': fields },
  };
}

/**
 * A private Ajv 2020 instance: all errors, non-strict (so `x-mcp-header` and other annotations pass), formats not
 * validated, and own properties only: a declared property named `constructor` or `toString` is absent from
 * arguments that do not hold it, rather than found on `Object.prototype`.
 */
export function defaultCompiler(): SchemaCompiler {
  return new Ajv2020({
    allErrors: true,
    ownProperties: true,
    strict: false,
    validateFormats: false,
    logger: false,
  }) as unknown as SchemaCompiler;
}
