/**
 * Standard header consistency for modern (2026-07-28) requests: `MCP-Protocol-Version`, `Mcp-Method` and
 * `Mcp-Name`. Header names are case-insensitive (Node lower-cases them); values are case-sensitive. Node trims
 * optional whitespace around values, so `Mcp-Name:  foo ` matches `foo`.
 */
import { type Refusal, refusal } from './errors.js';
import { decodeHeaderValue } from './sentinel.js';
import { clip } from './clip.js';
import { METHOD_TARGETS, type MethodTarget } from './routing.js';

/**
 * Methods whose target is mirrored into `Mcp-Name`, and the params member it mirrors: `tools/call` and
 * `prompts/get` (`name`), `resources/read` (`uri`), and the tasks extension's `tasks/get`, `tasks/update` and
 * `tasks/cancel` (`taskId`).
 */
export const NAME_MEMBER: Readonly<Record<string, MethodTarget['member']>> = Object.freeze(
  Object.fromEntries([...METHOD_TARGETS].filter(([, t]) => t.mcpName).map(([m, t]) => [m, t.member])),
);

/** {@link NAME_MEMBER} as a Map: a method from the request is a key of nothing else (`constructor`, `__proto__`). */
const NAME_MEMBER_OF: ReadonlyMap<string, MethodTarget['member']> = new Map(Object.entries(NAME_MEMBER));

export interface StandardHeaders {
  protocolVersion?: string | undefined;
  method?: string | undefined;
  name?: string | undefined;
}

export interface HeaderCheckInput {
  method: string;
  params: Record<string, unknown> | undefined;
  headers: StandardHeaders;
}

/** Visible ASCII, space and tab only (what an RFC 9110 field value may hold, minus obs-text). */
function invalidChars(v: string): boolean {
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (c === 0x09 || (c >= 0x20 && c <= 0x7e)) continue;
    return true;
  }
  return false;
}

function missing(header: string, why: string): Refusal {
  return refusal('missing_header', { message: `${header} header is missing (${why})`, data: { header } });
}

/**
 * Check the standard headers of a modern request whose envelope was already classified. The
 * `MCP-Protocol-Version`/`_meta` equality is the classifier's job; this checks presence and the method/name
 * mirrors. Returns `undefined` when every header is consistent.
 */
export function checkStandardHeaders(input: HeaderCheckInput): Refusal | undefined {
  const { method, params, headers } = input;
  if (headers.protocolVersion === undefined)
    return missing('MCP-Protocol-Version', 'required on every request');
  const hm = headers.method;
  // Empty only for the empty method (an unknown method, answered -32601 by the dispatcher).
  if (hm === undefined || (hm === '' && method !== ''))
    return missing('Mcp-Method', 'required on every request');
  if (invalidChars(hm)) {
    return refusal('header_malformed', {
      message: 'Mcp-Method header contains invalid characters',
      data: { header: 'Mcp-Method' },
    });
  }
  if (hm !== method) {
    return refusal('header_mismatch', {
      message: `Mcp-Method header "${clip(hm)}" does not match the body method "${clip(method)}"`,
      data: { header: 'Mcp-Method', headerValue: hm, bodyValue: method },
    });
  }
  const member = NAME_MEMBER_OF.get(method);
  if (member === undefined) return undefined;
  const hn = headers.name;
  if (hn === undefined) return missing('Mcp-Name', `required for ${method}`);
  if (invalidChars(hn)) {
    return refusal('header_malformed', {
      message: 'Mcp-Name header contains invalid characters',
      data: { header: 'Mcp-Name' },
    });
  }
  const decoded = decodeHeaderValue(hn);
  const bodyRaw = params?.[member];
  const bodyValue = typeof bodyRaw === 'string' ? bodyRaw : '';
  if (!decoded.ok) {
    return refusal('header_malformed', {
      message: 'Mcp-Name header holds a malformed Base64 sentinel',
      data: { header: 'Mcp-Name', headerValue: hn, bodyValue },
    });
  }
  if (typeof bodyRaw !== 'string' || decoded.value !== bodyRaw) {
    return refusal('header_mismatch', {
      message: `Mcp-Name header does not match params.${member}`,
      data: { header: 'Mcp-Name', headerValue: decoded.value, bodyValue },
    });
  }
  return undefined;
}
