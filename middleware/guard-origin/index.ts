/**
 * `guardOrigin()`: DNS-rebinding protection. Any `Origin` not on the allow-list → 403 (default: none allowed,
 * so any request carrying an Origin is refused; `'*'` allows any one origin), and two Origin lines → 403. An
 * optional `Host` allow-list (host:port, compared case-insensitively) → 403, checked against the authority of
 * an absolute-form target when there is one. Two Host lines, or a target naming another host than the Host
 * header → 400 (RFC 9112 §3.2). All run before any other work, for every HTTP method. A Host or Origin refusal
 * names what arrived and what is allowed, in the error's `data` and in a warning through the logger.
 * @see docs/middleware/guard-origin.md
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type Refusal, refusal } from '../../lib/errors.js';
import { cleanText } from '../../lib/sanitize.js';
import { log } from '../../core/log.js';
import { sendRefusal, stderrLogger } from '../../core/respond.js';
import { badOption, knownKeys, loggerOption, optionsObject } from '../../core/options.js';
import type { Logger, Middleware } from '../../core/types.js';
import { isName, scanHost } from './host.js';

export interface GuardOriginOptions {
  /** Allowed `Origin` values (`scheme://host[:port]`), or `'*'` for any. Default: none. */
  allowedOrigins?: readonly string[] | '*';
  /** Allowed `Host` values (`host:port` as sent), or `'*'`/unset for no Host check. */
  allowedHosts?: readonly string[] | '*';
  /** Where a Host or Origin refusal is reported (a warning). Default: stderr. */
  logger?: Logger;
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

const OPTIONS = ['allowedOrigins', 'allowedHosts', 'logger'] as const;

const HOST_DUPLICATED = refusal('host_duplicated');
const HOST_NOT_ALLOWED = refusal('host_not_allowed');
const HOST_MISMATCH = refusal('host_mismatch');
const ORIGIN_NOT_ALLOWED = refusal('origin_not_allowed');
/** A browser sends one Origin; two lines name no origin the allow-list could admit, `'*'` included. */
const ORIGIN_TWICE = refusal('origin_not_allowed', { message: 'Origin must be sent once' });

/** Longest received value (code points) a refusal repeats; the client chose it, so it is clipped and cleaned. */
const RECEIVED_CAP = 256;
/** Most received lines, and most allow-list entries, a refusal repeats; the rest are counted. */
const LIST_CAP = 32;

/** At most {@link LIST_CAP} items, the rest counted in a last `… N more`. */
function capped(items: readonly string[]): string[] {
  if (items.length <= LIST_CAP) return [...items];
  return [...items.slice(0, LIST_CAP), `… ${items.length - LIST_CAP} more`];
}

/** The values of every `name` line (lower-case name) of the request, as they arrived. */
function linesOf(req: IncomingMessage, name: string): string[] {
  const out: string[] = [];
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length && out.length <= LIST_CAP; i += 2) {
    if (isName(raw[i]!, name)) out.push(raw[i + 1]!);
  }
  return out;
}

/** What arrived, for a refusal's data and log line: clipped, sanitized, `null` when nothing did. */
function shownReceived(v: string | readonly string[] | undefined): string | string[] | null {
  if (v === undefined) return null;
  if (typeof v === 'string') return cleanText(v, RECEIVED_CAP);
  return capped(v).map((x) => cleanText(x, RECEIVED_CAP));
}

interface Refuser {
  /** Refuse before the body is read: no id to echo. */
  plain(req: IncomingMessage, res: ServerResponse, r: Refusal): void;
  /** Refuse against an allow-list: `data` and the log line name what arrived and what is allowed. */
  against(
    req: IncomingMessage,
    res: ServerResponse,
    r: Refusal,
    received: string | readonly string[] | undefined,
    allowed: readonly string[],
  ): void;
}

function refuser(logger: Logger): Refuser {
  const plain = (req: IncomingMessage, res: ServerResponse, r: Refusal): void =>
    sendRefusal(req, res, r, 'guardOrigin', { id: undefined });
  return {
    plain,
    against(req, res, r, received, allowed) {
      const data = { received: shownReceived(received), allowed };
      log(logger, 'warn', `guardOrigin: ${r.message}`, { reason: r.reason, ...data });
      plain(req, res, { ...r, data });
    },
  };
}

/** The allow-list as a refusal shows it: `'*'` or unset as `['*']`, else its entries (capped). */
const shownList = (list: Set<string> | '*' | undefined): readonly string[] =>
  list === undefined || list === '*' ? ['*'] : capped([...list]);

/**
 * Refuse with 403 a request whose `Origin` or `Host` is not on the allow-lists, as the spec requires against
 * DNS rebinding. List every name clients use to reach the server in `allowedHosts`.
 * @param options - {@link GuardOriginOptions}
 * @see docs/middleware/guard-origin.md
 * @example
 * ```ts
 * import { guardOrigin } from 'mcpware/guard-origin';
 *
 * app.use('/mcp', guardOrigin({ allowedOrigins: [], allowedHosts: ['localhost:3000', '127.0.0.1:3000'] }));
 * ```
 */
export function guardOrigin(options?: GuardOriginOptions): Middleware {
  const o = optionsObject('guardOrigin', options);
  knownKeys('guardOrigin', o, OPTIONS);
  const origins = normalizeList('guardOrigin', 'allowedOrigins', o.allowedOrigins) ?? new Set<string>();
  const hosts = normalizeList('guardOrigin', 'allowedHosts', o.allowedHosts);
  const refuse = refuser(loggerOption('guardOrigin', o.logger, stderrLogger));
  const allowedHosts = shownList(hosts);
  const allowedOrigins = shownList(origins);
  return function mcpGuardOrigin(req, res, next) {
    const seen = scanHost(req.rawHeaders, req.url);
    if (seen.hosts > 1) return refuse.plain(req, res, HOST_DUPLICATED);
    if (hosts !== undefined && hosts !== '*') {
      // The target's authority is the request's host when the target names one (RFC 9112 §3.2.2).
      const host = seen.target ?? seen.host;
      if (host === undefined || !hosts.has(host)) {
        return refuse.against(req, res, HOST_NOT_ALLOWED, host, allowedHosts);
      }
    }
    if (seen.target !== undefined && seen.target !== seen.host) return refuse.plain(req, res, HOST_MISMATCH);
    if (seen.origins > 1) {
      return refuse.against(req, res, ORIGIN_TWICE, linesOf(req, 'origin'), allowedOrigins);
    }
    const origin = req.headers.origin;
    if (origin !== undefined && origins !== '*' && !origins.has(origin.toLowerCase())) {
      return refuse.against(req, res, ORIGIN_NOT_ALLOWED, origin, allowedOrigins);
    }
    next();
  };
}
