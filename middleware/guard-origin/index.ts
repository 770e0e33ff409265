/**
 * `guardOrigin()`: DNS-rebinding protection. Any `Origin` not on the allow-list → 403 (default: none allowed,
 * so any request carrying an Origin is refused; `'*'` switches the check off). An optional `Host` allow-list
 * (host:port, compared case-insensitively) → 403. Both run before any other work, for every HTTP method.
 * @see docs/middleware/guard-origin.md
 */
import { refusal } from '../../lib/errors.js';
import { sendRefusal } from '../internal/respond.js';
import { badOption, knownKeys, optionsObject } from '../internal/options.js';
import type { Middleware } from '../types.js';

export interface GuardOriginOptions {
  /** Allowed `Origin` values (`scheme://host[:port]`), or `'*'` for any. Default: none. */
  allowedOrigins?: readonly string[] | '*';
  /** Allowed `Host` values (`host:port` as sent), or `'*'`/unset for no Host check. */
  allowedHosts?: readonly string[] | '*';
}

function normalizeList(factory: string, name: string, v: unknown): Set<string> | '*' | undefined {
  if (v === undefined) return undefined;
  if (v === '*') return '*';
  if (!Array.isArray(v)) throw badOption(factory, name, v, "an array of strings or '*'");
  const out = new Set<string>();
  for (const item of v) {
    if (typeof item !== 'string' || item.length === 0 || /[\s,]/.test(item)) {
      throw badOption(factory, name, item, 'a non-empty string without spaces or commas');
    }
    if (item === '*') return '*';
    out.add(item.toLowerCase().replace(/\/+$/, ''));
  }
  return out;
}

const OPTIONS = ['allowedOrigins', 'allowedHosts'] as const;

export function guardOrigin(options?: GuardOriginOptions): Middleware {
  const o = optionsObject('guardOrigin', options);
  knownKeys('guardOrigin', o, OPTIONS);
  const origins = normalizeList('guardOrigin', 'allowedOrigins', o.allowedOrigins) ?? new Set<string>();
  const hosts = normalizeList('guardOrigin', 'allowedHosts', o.allowedHosts);
  return function mcpGuardOrigin(req, res, next) {
    if (hosts !== undefined && hosts !== '*') {
      const host = req.headers.host;
      if (host === undefined || !hosts.has(host.toLowerCase())) {
        return sendRefusal(req, res, refusal('host_not_allowed'), 'guardOrigin', { id: undefined });
      }
    }
    const origin = req.headers.origin;
    if (origin !== undefined && origins !== '*' && !origins.has(origin.toLowerCase())) {
      return sendRefusal(req, res, refusal('origin_not_allowed'), 'guardOrigin', { id: undefined });
    }
    next();
  };
}
