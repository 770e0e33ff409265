/**
 * The redaction engine: runs the rule passes over a string, in order, and walks JSON values.
 *
 * Rules run in a fixed order, the more specific first, each on the output of the one before (mask mode):
 * `jwt`, `pem`, `email`, `token`, `card`, `phone`, `ip`. So `Bearer <jwt>` becomes `Bearer [masked:jwt]`: the
 * token rule then sees a marker (it starts with `[`) and leaves it alone. In warn mode every rule sees the
 * original text and only counts. Before any rule runs, the `candidates` function (the prefilter) says which
 * passes can match the string; the others are skipped, and a string no pass can match comes back as is.
 *
 * Cost is linear in the input. No pattern has an unbounded or nested repetition that can backtrack: the
 * `jwt`, `pem`, `email`, `card` and IPv6 scanners are hand-written loops anchored on a literal or a digit run
 * (`eyJ`, `-----BEGIN `, `@`, digits, `:`), and the remaining regular expressions (`token`, `phone`, IPv4)
 * have bounded repeats over disjoint character classes.
 *
 * Strings longer than `maxLength` are not scanned past it. In mask mode the string is cut: the engine scans a
 * window {@link REDACT_GUARD} characters longer than the cap, drops the last `REDACT_GUARD` characters of the
 * masked window (where a secret cut in half by the window could sit unrecognized), and appends
 * {@link TRUNCATED_MARKER}. Nothing beyond the cap is ever returned unscanned. In warn mode the string is
 * returned unchanged and only the window is counted.
 * @see docs/middleware/redact.md
 */
import { passesFor } from './rules/index.js';
import { PASS_BITS, type Rule, type RuleOptions } from './rules/rule.js';
import {
  REDACT_GUARD,
  type RedactMode,
  type RedactTally,
  type Redactor,
  type RuleName,
  TOO_DEEP_MARKER,
  TRUNCATED_MARKER,
  maskMarker,
  newTally,
  redactResultOf,
} from './types.js';

/** A redactor's settings, validated (see `compileRedactor`). */
export interface EngineSettings {
  readonly mode: RedactMode;
  readonly rules: readonly RuleName[];
  readonly maskEmailDomain: boolean;
  readonly maxLength: number;
  readonly maxDepth: number;
  /** The passes that can match a string, as `PASS_BITS` flags: the prefilter's `candidateRules`. */
  readonly candidates: (s: string) => number;
}

/** Run one pass over `s`: returns the new text (unchanged unless masking) and adds its hits to the tally. */
export function runRule(rule: Rule, s: string, mask: boolean, opts: RuleOptions, tally: RedactTally): string {
  const state: Record<string, number> = {};
  let from = 0;
  let last = 0;
  let out = '';
  let hits = 0;
  while (from <= s.length) {
    const h = rule.next(s, from, opts, state);
    if (!h) break;
    hits++;
    if (mask) {
      out += s.slice(last, h.start) + h.replacement;
      last = h.end;
    }
    from = h.end > h.start ? h.end : h.start + 1;
  }
  tally.hits[rule.name] += hits;
  return mask && hits > 0 ? out + s.slice(last) : s;
}

const isHighSurrogate = (c: number): boolean => c >= 0xd800 && c <= 0xdbff;

/** The window of `s` that is scanned: `maxLength` plus the guard, never ending inside a surrogate pair. */
function scanWindow(s: string, maxLength: number): string {
  let w = Math.min(s.length, maxLength + REDACT_GUARD);
  if (w < s.length && isHighSurrogate(s.charCodeAt(w - 1))) w--;
  return s.slice(0, w);
}

/** A cut window's masked text without its guard, plus the truncation marker. */
function cutMasked(out: string): string {
  let keep = Math.max(0, out.length - REDACT_GUARD);
  if (keep > 0 && isHighSurrogate(out.charCodeAt(keep - 1))) keep--;
  return out.slice(0, keep) + TRUNCATED_MARKER;
}

/** A redactor over validated settings. */
export function createRedactor(settings: EngineSettings): Redactor {
  const { mode, rules, maxLength, maxDepth, candidates } = settings;
  const passes = passesFor(rules);
  const opts: RuleOptions = { maskEmailDomain: settings.maskEmailDomain };
  const mask = mode === 'mask';

  const scan = (s: string, tally: RedactTally): string => {
    if (mode === 'off' || s.length === 0) return s;
    const cut = s.length > maxLength;
    if (cut) tally.truncated++;
    const window = cut ? scanWindow(s, maxLength) : s;
    let out = window;
    try {
      // Asked once, on the window: masking never adds a candidate for a later pass (see prefilter.ts), so the
      // flags still hold for the text each later pass sees.
      const can = candidates(window);
      if (can !== 0) {
        for (const pass of passes) {
          if ((can & PASS_BITS[pass.pass]) !== 0) out = runRule(pass, out, mask, opts, tally);
        }
      }
    } catch {
      // The rules are total functions; this is a last line of defence so a bug can never leak or crash.
      // Fail closed: nothing of an unscannable string leaves in mask mode.
      return mask ? maskMarker('error') : s;
    }
    if (!mask) return s;
    return cut ? cutMasked(out) : out;
  };

  const walk = (v: unknown, depth: number, tally: RedactTally): unknown => {
    if (typeof v === 'string') return scan(v, tally);
    if (v === null || typeof v !== 'object') return v;
    if (depth >= maxDepth) {
      tally.tooDeep++;
      return mask ? TOO_DEEP_MARKER : v;
    }
    if (Array.isArray(v)) {
      let copy: unknown[] | undefined;
      for (let i = 0; i < v.length; i++) {
        const x: unknown = v[i];
        const y = walk(x, depth + 1, tally);
        if (y !== x) {
          copy ??= v.slice();
          copy[i] = y;
        }
      }
      return copy ?? v;
    }
    // Walk what JSON.stringify would send: the result of toJSON() when there is one, else own enumerable keys.
    const json = (v as { toJSON?: unknown }).toJSON;
    if (typeof json === 'function') {
      const j: unknown = json.call(v);
      const y = walk(j, depth + 1, tally); // depth + 1: a toJSON returning `this` must still terminate
      return y === j ? v : y;
    }
    let copy: Record<string, unknown> | undefined;
    const obj = v as Record<string, unknown>;
    for (const k of Object.keys(obj)) {
      const x = obj[k];
      const y = walk(x, depth + 1, tally);
      if (y !== x) {
        copy ??= { ...obj };
        // defineProperty, not assignment: a key named `__proto__` must stay an own data property.
        Object.defineProperty(copy, k, { value: y, enumerable: true, writable: true, configurable: true });
      }
    }
    return copy ?? v;
  };

  const scanText = (s: string, tally: RedactTally): string => (typeof s === 'string' ? scan(s, tally) : s);
  const scanValue = <T>(v: T, tally: RedactTally): T => {
    if (mode === 'off') return v;
    try {
      return walk(v, 0, tally) as T;
    } catch {
      return (mask ? maskMarker('error') : v) as T;
    }
  };

  return {
    mode,
    rules,
    text(s, tally) {
      const t = tally ?? newTally();
      return { text: scanText(s, t), result: redactResultOf(t) };
    },
    value<T>(v: T, tally?: RedactTally) {
      const t = tally ?? newTally();
      return { value: scanValue(v, t), result: redactResultOf(t) };
    },
    scanText,
    scanValue,
  };
}
