/**
 * Revision classification: which era a request belongs to, and whether its modern envelope is sound.
 *
 * Body-primary: the `_meta` envelope decides, the `MCP-Protocol-Version` header is a cross-check. Precedence
 * (MCP 2026-07-28 and its conformance suite; where the ToolHive seed differs, the spec wins):
 *
 * 1. `initialize` without a `_meta` protocol version is legacy, whatever the headers say (a legacy handshake).
 *    An `initialize` that carries a modern envelope is a modern request for a method the modern revision
 *    removed; the dispatcher answers it 404 / -32601.
 * 2. No modern signal (no signal key in `_meta`, and no modern-looking header) → legacy. A legacy request whose
 *    header names a revision we do not support → 400 (2025-11-25 transport rule).
 * 3. Signal keys but no `_meta` protocol version: legacy when the header names a legacy revision (clients that
 *    send reserved keys while speaking 2025-11-25), otherwise 400 / -32602 (missing envelope).
 * 4. Header present and different from the `_meta` version → 400 / -32020 (before the support check).
 * 5. `clientCapabilities` missing or not an object, `clientInfo` or `logLevel` malformed → 400 / -32602.
 * 6. `_meta` version not a supported modern revision → 400 / -32022 with `{supported, requested}`.
 *
 * Notifications are never refused here: their era is read from the same signals.
 */
import { type Era, type Refusal, refusal } from './errors.js';
import { META, MODERN_SIGNAL_KEYS, isLogLevel } from './meta.js';
import { LEGACY_VERSIONS, MODERN_VERSIONS, isModernClaim } from './revisions.js';
import { clip } from './clip.js';
import { isJsonObject } from './json.js';

export interface ClassifyInput {
  method: string;
  /** `params._meta` when it is an object. */
  meta: Record<string, unknown> | undefined;
  /** The `MCP-Protocol-Version` header value, if any. */
  header: string | undefined;
  /** Notifications are classified but never refused. */
  notification?: boolean;
}

export interface ClassifyOptions {
  modernVersions?: readonly string[];
  legacyVersions?: readonly string[];
}

export interface Classification {
  ok: true;
  era: Era;
  /** The revision the request speaks: the `_meta` version (modern), or the header / assumed default (legacy). */
  version: string | undefined;
}

export type ClassifyResult = Classification | (Refusal & { era: Era });

function refuse(era: Era, r: Refusal): Refusal & { era: Era } {
  return { ...r, era };
}

/**
 * Classify one request's era (legacy or modern) from its method, `params._meta` and `MCP-Protocol-Version`
 * header by the rules above, or the refusal the request gets; `classifyRevision()` is this over HTTP.
 * @param opts - {@link ClassifyOptions}
 * @see docs/lib.md
 * @example
 * ```ts
 * import { classifyEnvelope } from 'mcpware/lib';
 *
 * const meta = {
 *   'io.modelcontextprotocol/protocolVersion': '2026-07-28',
 *   'io.modelcontextprotocol/clientCapabilities': {},
 * };
 * const result = classifyEnvelope({ method: 'tools/list', meta, header: '2026-07-28' });
 * console.log(result.ok ? result.era : result.reason); // 'modern'
 * ```
 */
export function classifyEnvelope(input: ClassifyInput, opts: ClassifyOptions = {}): ClassifyResult {
  const modern = opts.modernVersions ?? MODERN_VERSIONS;
  const legacy = opts.legacyVersions ?? LEGACY_VERSIONS;
  const { method, meta, header } = input;
  const pv = meta?.[META.protocolVersion];
  // Any string, the empty one included: an empty version is a version no server supports (-32022).
  const bodyVersion = typeof pv === 'string' ? pv : undefined;
  const headerModern = header !== undefined && (isModernClaim(header) || modern.includes(header));

  if (input.notification) {
    const era: Era = bodyVersion !== undefined || headerModern ? 'modern' : 'legacy';
    return { ok: true, era, version: bodyVersion ?? header };
  }

  if (method === 'initialize' && bodyVersion === undefined)
    return { ok: true, era: 'legacy', version: undefined };

  if (!headerModern && (meta === undefined || !hasSignal(meta))) return legacyResult(method, header, legacy);

  if (bodyVersion === undefined) {
    if (header !== undefined && header !== '' && !headerModern) return legacyResult(method, header, legacy);
    return refuse(
      'modern',
      refusal('missing_envelope', {
        message: `Request is missing params._meta["${META.protocolVersion}"]`,
      }),
    );
  }

  if (header !== undefined && header !== bodyVersion) {
    return refuse(
      'modern',
      refusal('protocol_version_mismatch', {
        message: `MCP-Protocol-Version header "${clip(header)}" does not match _meta protocol version "${clip(bodyVersion)}"`,
        data: { header: 'MCP-Protocol-Version', headerValue: header, bodyValue: bodyVersion },
      }),
    );
  }

  const caps = meta![META.clientCapabilities];
  if (!isJsonObject(caps)) {
    return refuse(
      'modern',
      refusal(Object.hasOwn(meta!, META.clientCapabilities) ? 'invalid_envelope' : 'missing_envelope', {
        message: `params._meta["${META.clientCapabilities}"] must be an object`,
      }),
    );
  }
  if (Object.hasOwn(meta!, META.clientInfo)) {
    const ci = meta![META.clientInfo];
    if (!isJsonObject(ci)) {
      return refuse(
        'modern',
        refusal('invalid_envelope', { message: `params._meta["${META.clientInfo}"] must be an object` }),
      );
    }
  }
  if (Object.hasOwn(meta!, META.logLevel) && !isLogLevel(meta![META.logLevel])) {
    return refuse(
      'modern',
      refusal('invalid_envelope', { message: `params._meta["${META.logLevel}"] is not a logging level` }),
    );
  }

  if (!modern.includes(bodyVersion)) {
    return refuse(
      'modern',
      refusal('unsupported_protocol_version', {
        message: `Unsupported protocol version "${clip(bodyVersion)}"`,
        data: { supported: [...modern], requested: bodyVersion },
      }),
    );
  }
  return { ok: true, era: 'modern', version: bodyVersion };
}

/** Whether `_meta` holds any of the keys only a modern request carries (own members only). */
function hasSignal(meta: Record<string, unknown>): boolean {
  for (let i = 0; i < MODERN_SIGNAL_KEYS.length; i++)
    if (Object.hasOwn(meta, MODERN_SIGNAL_KEYS[i]!)) return true;
  return false;
}

/** A request classified legacy: refused when its header names a revision this server does not speak. */
function legacyResult(method: string, header: string | undefined, legacy: readonly string[]): ClassifyResult {
  if (header !== undefined && header !== '' && method !== 'initialize' && !legacy.includes(header)) {
    return refuse(
      'legacy',
      refusal('unsupported_legacy_version', {
        data: { supported: [...legacy], requested: header },
        era: 'legacy',
      }),
    );
  }
  return { ok: true, era: 'legacy', version: header || undefined };
}
