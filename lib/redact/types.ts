/**
 * The redactor's public types and constants, and the tally that counts what the rules found. Re-exported by
 * `lib/redact/index.ts`; kept apart so the engine and the rules can use them without importing the index.
 * @see docs/middleware/redact.md
 */

/** Rule names in the order they run. */
export const RULE_NAMES = Object.freeze(['jwt', 'pem', 'email', 'token', 'card', 'phone', 'ip'] as const);
export type RuleName = (typeof RULE_NAMES)[number];

/** `off`: nothing is scanned. `warn`: matches are counted, nothing changes. `mask`: matches are replaced. */
export type RedactMode = 'off' | 'warn' | 'mask';
export const REDACT_MODES: readonly RedactMode[] = Object.freeze(['off', 'warn', 'mask']);

/** Default cap on the characters scanned per string (1 MiB of UTF-16 code units). */
export const DEFAULT_REDACT_MAX_LENGTH = 1024 * 1024;
/** Default nesting depth walked by {@link Redactor.value}. */
export const DEFAULT_REDACT_MAX_DEPTH = 64;
/** Appended to a string cut at `maxLength` (mask mode). */
export const TRUNCATED_MARKER = '[truncated]';
/** Replaces a subtree deeper than `maxDepth` (mask mode): it was not scanned, so it must not leave. */
export const TOO_DEEP_MARKER = '[masked:too_deep]';
/**
 * Extra characters scanned past a cut, then dropped: a secret straddling the cut is either recognized whole
 * (and masked) or falls entirely into the dropped part. Longer than any bounded secret shape we recognize
 * (an e-mail is at most 64 + 1 + 63 characters before its domain's dot).
 */
export const REDACT_GUARD = 256;

/** The marker that replaces a match of `rule`. */
export function maskMarker(rule: RuleName | string): string {
  return `[masked:${rule}]`;
}

export interface RedactOptions {
  /** Default `mask`. */
  mode?: RedactMode;
  /** Rules to apply (any order; they always run in {@link RULE_NAMES} order). Default: all. */
  rules?: readonly RuleName[];
  /** Mask an e-mail's domain too (`[masked:email]` instead of `s***@acme.com`). Default false. */
  maskEmailDomain?: boolean;
  /** Characters scanned per string; see `engine.ts` for what happens past it. Default 1 MiB. */
  maxLength?: number;
  /** Nesting depth walked in values; deeper subtrees become {@link TOO_DEEP_MARKER} in mask mode. Default 64. */
  maxDepth?: number;
}

/** Hits per rule, accumulated over one or more calls. */
export interface RedactTally {
  hits: Record<RuleName, number>;
  /** Strings cut at `maxLength` (mask) or scanned only up to it (warn). */
  truncated: number;
  /** Subtrees replaced (mask) or skipped (warn) because they were deeper than `maxDepth`. */
  tooDeep: number;
}

export interface RedactResult {
  hits: Partial<Record<RuleName, number>>;
  total: number;
  /** The rules that matched at least once, in rule order. */
  fired: RuleName[];
  truncated: number;
  tooDeep: number;
}

export interface Redactor {
  readonly mode: RedactMode;
  readonly rules: readonly RuleName[];
  /** Mask (or count) one string. Never throws. Pass a tally to accumulate over several calls. */
  text(s: string, tally?: RedactTally): { text: string; result: RedactResult };
  /**
   * Walk a JSON-like value: strings are masked, object keys never; numbers, booleans and null are kept.
   * Copy-on-write: containers are copied only where something changed, the input is never mutated.
   */
  value<T>(v: T, tally?: RedactTally): { value: T; result: RedactResult };
  /**
   * {@link Redactor.text} without the result: only the text, adding to `tally`. For callers that keep their
   * own tally; when nothing matched, the same string comes back. Redactors made by
   * `compileRedactor` always have it; it is optional so hand-written `Redactor` objects (wrappers, test
   * doubles) stay valid: callers fall back to `text(s, tally).text`.
   */
  scanText?(s: string, tally: RedactTally): string;
  /** {@link Redactor.value} without the result, like {@link Redactor.scanText} (and optional for the same reason). */
  scanValue?<T>(v: T, tally: RedactTally): T;
}

export type CompileResult =
  | { ok: true; redactor: Redactor }
  | {
      ok: false;
      reason: 'unknown_mode' | 'unknown_rule' | 'bad_option';
      option: string;
      value: unknown;
      message: string;
    };

/** A fresh tally: pass it to several `text`/`value` calls to add their hits up. */
export function newTally(): RedactTally {
  return { hits: { jwt: 0, pem: 0, email: 0, token: 0, card: 0, phone: 0, ip: 0 }, truncated: 0, tooDeep: 0 };
}

/** The result view of a tally: hits of the rules that fired, their total, and their names in rule order. */
export function redactResultOf(t: RedactTally): RedactResult {
  const hits: Partial<Record<RuleName, number>> = {};
  const fired: RuleName[] = [];
  let total = 0;
  for (const r of RULE_NAMES) {
    const n = t.hits[r];
    if (n > 0) {
      hits[r] = n;
      fired.push(r);
      total += n;
    }
  }
  return { hits, total, fired, truncated: t.truncated, tooDeep: t.tooDeep };
}
