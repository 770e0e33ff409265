/**
 * `rejectBatch()`: refuse a JSON-RPC batch. A body that parses as a JSON array → 400 / -32600 with no id,
 * whatever the Content-Type. A body that begins with `[` but is not JSON is no batch: it gets the parse step's
 * answer (400 / -32700 Parse error, as JSON-RPC 2.0 says of invalid JSON). Batching was removed in MCP
 * 2025-06-18 and the modern revision requires one message per POST; no handler ever sees a batch.
 * @see docs/middleware/reject-batch.md
 */
import { refusal } from '../../lib/errors.js';
import { type BodyOptions, isBatch, onParsed, parsed, resolveBodyOptions } from '../../core/parse-step.js';
import { sendInternalError, sendRefusal, stderrLogger } from '../../core/respond.js';
import { notPost } from '../../core/post-only.js';
import { knownKeys, loggerOption, optionsObject } from '../../core/options.js';
import type { Logger, Middleware } from '../../core/types.js';

export interface RejectBatchOptions extends BodyOptions {
  /** Where unexpected errors are logged. Default: stderr. */
  logger?: Logger;
}

const OPTIONS = ['limit', 'maxDepth', 'logger'] as const;

/**
 * Refuse a JSON-RPC batch (a body that is a JSON array) with -32600 before it is parsed: MCP has no batches.
 * @param options - {@link RejectBatchOptions}
 * @see docs/middleware/reject-batch.md
 * @example
 * ```ts
 * import { parse } from 'mcpware/parse';
 * import { rejectBatch } from 'mcpware/reject-batch';
 *
 * app.use('/mcp', rejectBatch(), parse());
 * ```
 */
export function rejectBatch(options?: RejectBatchOptions): Middleware {
  const o = optionsObject('rejectBatch', options);
  knownKeys('rejectBatch', o, OPTIONS);
  const body = resolveBodyOptions('rejectBatch', o);
  const logger = loggerOption('rejectBatch', o.logger, stderrLogger);
  return function mcpRejectBatch(req, res, next) {
    if (req.method !== 'POST') return notPost(req, res, next, 'rejectBatch');
    // Parsed already into one message (parse() ran before): certainly not a batch.
    const now = parsed(req);
    if (now !== undefined && 'kind' in now) return next();
    isBatch(req, body).then(
      (batch) => {
        if (batch === true) return sendRefusal(req, res, refusal('batch'), 'rejectBatch', { id: undefined });
        if (batch === false) return next();
        // The body could not be read (over the limit, aborted) or is not JSON: the shared parse step writes that
        // refusal (415 for a body that is not JSON-typed, else 413, 400 -32700...).
        onParsed(req, res, 'rejectBatch', logger, () => next(), body);
      },
      (err: unknown) => sendInternalError(req, res, err, 'rejectBatch', logger),
    );
  };
}
