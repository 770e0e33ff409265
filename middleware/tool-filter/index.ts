/**
 * `toolFilter()`: an allow-list of tools and per-tool overrides (rename, re-describe), as ToolHive's
 * tool-filter / tool-call-filter pair does it for a proxy.
 *
 * The middleware itself only installs a *tool view* on the request (under `Symbol.for('mcpware.toolViews')` in
 * `req.locals`); `dispatch()` applies it to any tools handler: it filters and renames `tools/list` results, maps
 * a `tools/call` name back to the actual tool, and refuses a filtered name exactly as it refuses an unknown one
 * (a ToolRegistry's refusal then hints only the names this view exposes). So it needs mcpware's `dispatch()`
 * downstream.
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
import { mountOrderCheck } from '../../core/mount-order.js';
import { notPost } from '../../core/post-only.js';
import type { Middleware } from '../../core/types.js';
import { addToolView } from '../../core/tool-views.js';
import { type ToolFilterOptions, createToolView } from './create-view.js';

export type { ExposedTool, ToolView } from '../../core/tool-views.js';
export type { ToolFilterOptions, ToolOverride } from './create-view.js';

/**
 * The middleware. Validates its options at construction (a TypeError naming the option, and the closest known
 * name for an unknown one) and installs the view on every POST; `dispatch()` enforces it.
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
 *   }),
 * );
 * ```
 */
export function toolFilter(options: ToolFilterOptions): Middleware {
  const view = createToolView(options);
  const late = mountOrderCheck('toolFilter');
  return function mcpToolFilter(req, res, next) {
    if (late(req, res)) return next();
    if (req.method !== 'POST') return notPost(req, res, next, 'toolFilter');
    addToolView(req, view);
    next();
  };
}
