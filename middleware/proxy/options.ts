/**
 * `proxy()`'s own options (`url`, `headers`, `maxSockets`, `fetch`), checked at construction with the options kit. The options it
 * shares with `sdk()` (`timeoutMs`, `pageSize`, `maxAnswerBytes`, …) are the engine's, checked by
 * `resolveForwardOptions()`.
 */
import { isJsonObject } from '../../lib/json.js';
import {
  OPTION_ERRORS,
  badOption,
  fnOption,
  intOption,
  missingOption,
  optionError,
} from '../../core/options.js';
import { FORWARDED_HEADERS, PARAM_PREFIX } from '../../core/forward-request.js';

/** A `fetch`-compatible function of the caller's (a custom agent, a test), used instead of `node:http`. */
export type ProxyFetch = (input: string, init: RequestInit) => Promise<Response>;

/** What {@link checkProxyOptions} resolves. */
export interface ResolvedProxyOwnOptions {
  /** The upstream's URL, normalized (`URL.href`). */
  readonly url: string;
  /** The configured headers, names in lower case, in the order given. */
  readonly headers: ReadonlyArray<readonly [string, string]>;
  /** The most connections to the upstream at once (the default transport's agent). */
  readonly maxSockets: number;
  /** The caller's `fetch`, when given: used instead of the default transport. */
  readonly fetch: ProxyFetch | undefined;
}

/** The default of `maxSockets`. */
export const DEFAULT_MAX_SOCKETS = 64;

/** `proxy()`'s own option names, next to the engine's `FORWARD_OPTION_NAMES`. */
export const PROXY_OWN_OPTION_NAMES: readonly string[] = Object.freeze([
  'url',
  'headers',
  'maxSockets',
  'fetch',
]);

/**
 * Header names `headers` may not set: the hop-by-hop headers (RFC 9110 §7.6.1), the framing and the target
 * (`Host`, `Content-Length`, `Content-Encoding`), and the MCP headers the engine writes from the client's request.
 */
const REFUSED_HEADERS: ReadonlySet<string> = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'content-length',
  'content-encoding',
  'content-type',
  ...FORWARDED_HEADERS,
]);

/** An RFC 9110 token: what a header name may be. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** What a header value may not hold: a line break or NUL would split or end the header. */
const UNSAFE_VALUE = /[\r\n\0]/;

function checkUrl(value: unknown): string {
  if (value === undefined) throw missingOption('proxy', 'url', "the upstream's URL, http: or https:");
  const text = value instanceof URL ? value.href : value;
  if (typeof text !== 'string') throw badOption('proxy', 'url', value, 'a URL string or a URL');
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw badOption('proxy', 'url', value, 'an absolute http: or https: URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw badOption('proxy', 'url', value, 'an http: or https: URL');
  }
  if (url.username !== '' || url.password !== '') {
    // The credentials would be repeated in every log line that names the URL: they belong in `headers`.
    throw badOption('proxy', 'url', url.host, 'a URL without userinfo (give credentials in "headers")');
  }
  if (text.includes('#')) throw badOption('proxy', 'url', value, 'a URL without a fragment');
  return url.href;
}

function checkHeaders(value: unknown): Array<[string, string]> {
  if (value === undefined) return [];
  if (!isJsonObject(value))
    throw badOption('proxy', 'headers', value, 'an object of header names to strings');
  const out: Array<[string, string]> = [];
  const seen = new Set<string>();
  for (const [name, v] of Object.entries(value)) {
    const lower = name.toLowerCase();
    if (!TOKEN.test(name)) throw badOption('proxy', 'headers', name, 'header names that are HTTP tokens');
    if (REFUSED_HEADERS.has(lower) || lower.startsWith(PARAM_PREFIX)) {
      throw optionError(
        OPTION_ERRORS.invalid,
        'proxy',
        `proxy: option "headers" may not set "${name}": mcpware writes it (hop-by-hop, framing or MCP header)`,
      );
    }
    if (seen.has(lower)) throw badOption('proxy', 'headers', name, 'each header name once');
    if (typeof v !== 'string' || UNSAFE_VALUE.test(v)) {
      throw badOption('proxy', `headers.${name}`, '…', 'a string without CR, LF or NUL');
    }
    seen.add(lower);
    out.push([lower, v]);
  }
  return out;
}

/** Checks `url`, `headers`, `maxSockets` and `fetch`; throws the kit's TypeError for the first mistake. */
export function checkProxyOptions(o: Record<string, unknown>): ResolvedProxyOwnOptions {
  const url = checkUrl(o.url);
  const headers = checkHeaders(o.headers);
  const maxSockets = intOption('proxy', 'maxSockets', o.maxSockets, DEFAULT_MAX_SOCKETS, 1, 65_536);
  const fetch = fnOption<ProxyFetch>('proxy', 'fetch', o.fetch);
  return { url, headers, maxSockets, fetch };
}
