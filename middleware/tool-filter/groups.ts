/**
 * Per-group visibility: which view a request gets, from its principal's groups. The group rules are fixed at
 * construction, so the views are too: one per combination of rules a caller's groups satisfy, built on first use
 * and kept (a bounded number of them). A caller's groups are request data: they are only looked up in a Map
 * built from the options, never used as keys of a plain object, and never retained.
 */
import type { ToolView } from '../../core/tool-views.js';
import type { Principal } from '../../core/types.js';
import { type ToolFilterConfig, restrictView } from './create-view.js';

/** Most views kept; past it a combination of rules still gets its view, built for the request alone. */
const MAX_CACHED_VIEWS = 256;

/** The view for a principal (or for a request without one). */
export type ViewFor = (principal: Principal | undefined) => ToolView;

/** The views of `config`: the base view for everyone, with each group rule's tool hidden from non-members. */
export function viewsFor(config: ToolFilterConfig): ViewFor {
  const { base, groups: rules } = config;
  const everyone = restrictView(base, new Set());
  if (rules.length === 0) return () => everyone;
  // Group name → the indexes of the rules it satisfies.
  const rulesOf = new Map<string, number[]>();
  rules.forEach((rule, i) => {
    for (const g of rule.groups) {
      const list = rulesOf.get(g);
      if (list === undefined) rulesOf.set(g, [i]);
      else list.push(i);
    }
  });
  const hiddenBy = (seen: readonly boolean[]): Set<string> => {
    // A tool named by two rules is hidden unless the caller satisfies one of them.
    const shown = new Set(rules.filter((_r, i) => seen[i]).map((r) => r.actual));
    return new Set(rules.map((r) => r.actual).filter((actual) => !shown.has(actual)));
  };
  const nobody = restrictView(base, hiddenBy([]));
  const cache = new Map<string, ToolView>();
  return (principal) => {
    const groups = principal?.groups;
    if (groups === undefined || groups.length === 0) return nobody;
    const seen: boolean[] = new Array<boolean>(rules.length).fill(false);
    let any = false;
    for (const g of groups) {
      const hits = typeof g === 'string' ? rulesOf.get(g) : undefined;
      if (hits === undefined) continue;
      any = true;
      for (const i of hits) seen[i] = true;
    }
    if (!any) return nobody;
    const key = seen.map((b) => (b ? '1' : '0')).join('');
    const cached = cache.get(key);
    if (cached !== undefined) return cached;
    const view = restrictView(base, hiddenBy(seen));
    if (cache.size < MAX_CACHED_VIEWS) cache.set(key, view);
    return view;
  };
}
