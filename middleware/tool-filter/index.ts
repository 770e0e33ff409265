/**
 * `toolFilter()`: an allow-list of tools, per-tool overrides (rename, re-describe), as ToolHive's
 * tool-filter / tool-call-filter pair does it for a proxy, and per-group visibility.
 *
 * The middleware itself only installs a *tool view* on the request (under `Symbol.for('mcpware.toolViews')` in
 * `req.locals`), chosen by the principal's groups; `dispatch()` applies it to any tools handler (as `sdk()` and
 * `proxy()` apply it to their server's answers): it filters and renames `tools/list` results, maps a
 * `tools/call` name back to the actual tool, and refuses a filtered name exactly as it refuses an unknown one
 * (a ToolRegistry's refusal then hints only the names this view exposes). So it needs one of those final
 * handlers downstream; the first answered request shows whether one applied it, and a warning says so once
 * when none did.
 *
 * Semantics (ToolHive's, with one deliberate difference):
 * - `allow` holds user-facing (post-override) names; empty or absent means every tool.
 * - `override` maps an actual name to `{name?, description?}`; an empty field keeps the original.
 * - Difference: what you see is what you can call. The original name of a renamed tool is not callable (ToolHive
 *   lets it through when no allow-list is set). When a rename lands on the name of another, un-renamed tool,
 *   the renamed one wins and the other is hidden, so list and call agree.
 *
 * @see docs/middleware/tool-filter.md
 */
import { finalHandlerCheck } from '../../core/final-handler.js';
import { mountOrderCheck } from '../../core/mount-order.js';
import { notPost } from '../../core/post-only.js';
import type { Middleware } from '../../core/types.js';
import { addToolView } from '../../core/tool-views.js';
import { F, type ToolFilterOptions, resolveToolFilter } from './create-view.js';
import { viewsFor } from './groups.js';

export type { ExposedTool, ToolView } from '../../core/tool-views.js';
export type { ToolFilterOptions, ToolOverride } from './create-view.js';

/**
 * The middleware. Validates its options at construction (a TypeError naming the option, and the closest known
 * name for an unknown one) and installs the view for the request's principal on every POST; `dispatch()`,
 * `sdk()` and `proxy()` enforce it.
 * @param options - {@link ToolFilterOptions}
 * @see docs/middleware/tool-filter.md
 * @example
 * ```ts
 * import { toolFilter } from 'mcpware/tool-filter';
 *
 * app.use(
 *   '/mcp',
 *   toolFilter({
 *     allow: ['fetch_page', 'search'],
 *     override: { fetch: { name: 'fetch_page', description: 'Fetch one page' } },
 *     groups: { admin_report: ['admin'] },
 *   }),
 * );
 * ```
 */
export function toolFilter(options: ToolFilterOptions): Middleware {
  const config = resolveToolFilter(options);
  const viewFor = viewsFor(config);
  const late = mountOrderCheck(F, config.logger);
  const check = finalHandlerCheck({
    by: F,
    lacks: 'does not apply the tool views',
    consequence: 'the filter is not enforced',
    docs: 'docs/middleware/tool-filter.md#when-nothing-applies-the-views',
    logger: config.logger,
  });
  return function mcpToolFilter(req, res, next) {
    if (late(req, res)) return next();
    if (req.method !== 'POST') return notPost(req, res, next, F);
    addToolView(req, viewFor(req.locals?.principal));
    if (check.pending && typeof res.once === 'function') res.once('finish', () => check.finished(req, res));
    next();
  };
}
