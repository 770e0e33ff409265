/**
 * Protocol revisions: the supported list, revision-shape checks, and `initialize` negotiation.
 */

/** The modern (per-request envelope, stateless) revisions this library speaks, newest first. */
export const MODERN_VERSIONS: readonly string[] = Object.freeze(['2026-07-28']);
/** The legacy (`initialize` handshake) revisions this library speaks, newest first. */
export const LEGACY_VERSIONS: readonly string[] = Object.freeze([
  '2025-11-25',
  '2025-06-18',
  '2025-03-26',
  '2024-11-05',
]);
/** Every supported revision, newest first. */
export const SUPPORTED_VERSIONS: readonly string[] = Object.freeze([...MODERN_VERSIONS, ...LEGACY_VERSIONS]);
/** The newest modern revision. */
export const LATEST_MODERN_VERSION = '2026-07-28';
/** The newest legacy revision. */
export const LATEST_LEGACY_VERSION = '2025-11-25';
/** The first modern revision: any revision-shaped version at or after it is a modern claim. */
export const FIRST_MODERN_VERSION = '2026-07-28';
/** What a legacy request without an `MCP-Protocol-Version` header is assumed to speak (2025-11-25 transport). */
export const DEFAULT_LEGACY_VERSION = '2025-03-26';

/** Exactly `DDDD-DD-DD`: the shape of a revision. No calendar check. */
export function isRevision(v: unknown): v is string {
  if (typeof v !== 'string' || v.length !== 10) return false;
  for (let i = 0; i < 10; i++) {
    const c = v.charCodeAt(i);
    if (i === 4 || i === 7) {
      if (c !== 0x2d) return false;
    } else if (c < 0x30 || c > 0x39) return false;
  }
  return true;
}

/** True when `v` names a revision at or after the first modern one (so `2027-01-01` is a modern claim). */
export function isModernClaim(v: unknown): boolean {
  return isRevision(v) && v >= FIRST_MODERN_VERSION;
}

/**
 * `initialize` negotiation (2025-11-25 lifecycle): a supported legacy revision is answered with itself; any other
 * revision-shaped request gets the newest supported legacy revision below it; anything older than every
 * supported revision, or not a revision at all, gets the newest legacy revision (the server MUST answer with a
 * version it supports, never an error). `initialize` only ever negotiates legacy revisions.
 */
export function negotiateVersion(requested: unknown, legacy: readonly string[] = LEGACY_VERSIONS): string {
  const newest = legacy[0] ?? LATEST_LEGACY_VERSION;
  if (!isRevision(requested)) return newest;
  for (const v of legacy) if (v <= requested) return v;
  return newest;
}
