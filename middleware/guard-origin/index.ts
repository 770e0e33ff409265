/**
 * `guardOrigin()`: DNS-rebinding protection. Any `Origin` not on the allow-list → 403 (default: none allowed,
 * so any request carrying an Origin is refused; `'*'` allows any one origin), and two Origin lines → 403. An
 * optional `Host` allow-list (host:port, compared case-insensitively) → 403, checked against the authority of
 * an absolute-form target when there is one. Two Host lines, or a target naming another host than the Host
 * header → 400 (RFC 9112 §3.2). All run before any other work, for every HTTP method.
 * @see docs/middleware/guard-origin.md
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type Refusal, refusal } from '../../lib/errors.js';
import { sendRefusal } from '../internal/respond.js';
import { badOption, knownKeys, optionsObject } from '../internal/options.js';
import type { Middleware } from '../types.js';
import { scanHost } from './host.js';

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

const HOST_DUPLICATED = refusal('host_duplicated');
const HOST_NOT_ALLOWED = refusal('host_not_allowed');
const HOST_MISMATCH = refusal('host_mismatch');
const ORIGIN_NOT_ALLOWED = refusal('origin_not_allowed');
/** A browser sends one Origin; two lines name no origin the allow-list could admit, `'*'` included. */
const ORIGIN_TWICE = refusal('origin_not_allowed', { message: 'Origin must be sent once' });

/** Refuse before the body is read: no id to echo. */
function refuse(req: IncomingMessage, res: ServerResponse, r: Refusal): void {
  sendRefusal(req, res, r, 'guardOrigin', { id: undefined });
}

export function guardOrigin(options?: GuardOriginOptions): Middleware {
  const o = optionsObject('guardOrigin', options);
  knownKeys('guardOrigin', o, OPTIONS);
  const origins = normalizeList('guardOrigin', 'allowedOrigins', o.allowedOrigins) ?? new Set<string>();
  const hosts = normalizeList('guardOrigin', 'allowedHosts', o.allowedHosts);
  return function mcpGuardOrigin(req, res, next) {
    const seen = scanHost(req.rawHeaders, req.url);
    if (seen.hosts > 1) return refuse(req, res, HOST_DUPLICATED);
    if (hosts !== undefined && hosts !== '*') {
      // The target's authority is the request's host when the target names one (RFC 9112 §3.2.2).
      const host = seen.target ?? seen.host;
      if (host === undefined || !hosts.has(host)) return refuse(req, res, HOST_NOT_ALLOWED);
    }
    if (seen.target !== undefined && seen.target !== seen.host) return refuse(req, res, HOST_MISMATCH);
    if (seen.origins > 1) return refuse(req, res, ORIGIN_TWICE);
    const origin = req.headers.origin;
    if (origin !== undefined && origins !== '*' && !origins.has(origin.toLowerCase())) {
      return refuse(req, res, ORIGIN_NOT_ALLOWED);
    }
    next();
  };
}
