/**
 * What a request names as its host, read from what arrived rather than from the one value node:http keeps: it
 * keeps the first of two Host lines in `req.headers.host`, and an absolute-form target (`POST http://host/mcp`)
 * names its host in `req.url`, which RFC 9112 §3.2.2 makes the request's host whatever the Host header says.
 */

/** The Host and Origin lines of a request, and the authority of its target when it is in absolute form. */
export interface HostScan {
  /** How many Host lines arrived. */
  hosts: number;
  /** The first Host line's value, lower-cased. */
  host: string | undefined;
  /** The authority of an absolute-form target (`scheme://authority/...`), lower-cased. */
  target: string | undefined;
  /** How many Origin lines arrived. */
  origins: number;
}

/** `scheme://` at the start of an absolute-form target (RFC 3986 §3.1). */
const ABSOLUTE = /^[a-z][a-z0-9+.-]*:\/\//i;

/** The authority of an absolute-form target, or `undefined` for origin-form (`/path`) and the other forms. */
function targetAuthority(url: string | undefined): string | undefined {
  if (url === undefined || url.charCodeAt(0) === 0x2f /* / */) return undefined;
  const scheme = ABSOLUTE.exec(url);
  if (scheme === null) return undefined;
  const start = scheme[0].length;
  let end = start;
  while (end < url.length) {
    const c = url.charCodeAt(end);
    if (c === 0x2f /* / */ || c === 0x3f /* ? */ || c === 0x23 /* # */) break;
    end++;
  }
  return url.slice(start, end).toLowerCase();
}

/** Count the Host and Origin lines of `rawHeaders` (names at even positions, any case) and read the target. */
export function scanHost(rawHeaders: readonly string[], url: string | undefined): HostScan {
  let hosts = 0;
  let host: string | undefined;
  let origins = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    if (isName(name, 'host')) {
      if (hosts++ === 0) host = rawHeaders[i + 1]!.toLowerCase();
    } else if (isName(name, 'origin')) {
      origins++;
    }
  }
  return { hosts, host, target: targetAuthority(url), origins };
}

/** Is the header name `name` the lower-case ASCII `lower`, in any case? Compared in place, no copy made. */
export function isName(name: string, lower: string): boolean {
  if (name.length !== lower.length) return false;
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if ((c >= 0x41 && c <= 0x5a ? c + 0x20 : c) !== lower.charCodeAt(i)) return false;
  }
  return true;
}
