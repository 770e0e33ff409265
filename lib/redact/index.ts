/**
 * Redaction: seven rules that find secrets and personal data in text (`jwt`, `pem`, `email`, `token`, `card`,
 * `phone`, `ip`), masks for them, and a walk over JSON values. Pure: no I/O. The engine is in `engine.ts`,
 * the prefilter that skips the rules a string cannot match in `prefilter.ts`, each rule in `rules/`.
 * @see docs/middleware/redact.md
 */
import { createRedactor } from './engine.js';
import { candidateRules } from './prefilter.js';
import {
  type CompileResult,
  DEFAULT_REDACT_MAX_DEPTH,
  DEFAULT_REDACT_MAX_LENGTH,
  REDACT_MODES,
  RULE_NAMES,
  type RedactMode,
  type RedactOptions,
  type RedactResult,
  type RuleName,
  newTally,
  redactResultOf,
} from './types.js';

// The rules' names, modes, limits, markers and tallies are exported by types.ts, luhn by rules/card.ts and
// isMaskableIPv6 by rules/ip.ts, and re-exported by lib/index.ts: see docs/performance.md#fast-exports
export type {
  RuleName,
  RedactMode,
  RedactOptions,
  RedactTally,
  RedactResult,
  Redactor,
  CompileResult,
} from './types.js';

/**
 * Parse a mode as an operator writes it (an environment variable): trimmed, case-folded; `off`, `warn`,
 * `mask`/`redact`. Anything else → undefined, including the empty string: an empty variable must not
 * silently switch masking off.
 */
export function parseRedactMode(s: string): RedactMode | undefined {
  if (typeof s !== 'string') return undefined;
  const v = s.trim().toLowerCase();
  if (v === 'off') return 'off';
  if (v === 'warn') return 'warn';
  if (v === 'mask' || v === 'redact') return 'mask';
  return undefined;
}

type Failure = Extract<CompileResult, { ok: false }>;

function failure(reason: Failure['reason'], option: string, value: unknown, message: string): Failure {
  return { ok: false, reason, option, value, message };
}

/** The rules to run, in rule order, or the failure naming the bad entry. */
function resolveRules(rules: unknown): RuleName[] | Failure {
  if (rules === undefined) return [...RULE_NAMES];
  if (!Array.isArray(rules))
    return failure('bad_option', 'rules', rules, 'rules must be an array of rule names');
  const want = new Set<RuleName>();
  for (const r of rules as unknown[]) {
    const name = typeof r === 'string' ? r.trim().toLowerCase() : r;
    if (typeof name !== 'string' || !(RULE_NAMES as readonly string[]).includes(name)) {
      return failure(
        'unknown_rule',
        'rules',
        r,
        `unknown rule ${JSON.stringify(r)}, want one of ${RULE_NAMES.join(', ')}`,
      );
    }
    want.add(name as RuleName);
  }
  return want.size > 0 ? RULE_NAMES.filter((n) => want.has(n)) : [...RULE_NAMES];
}

const isPositiveInteger = (n: unknown): boolean => Number.isSafeInteger(n) && (n as number) >= 1;

/** Compile options into a redactor, or say which option is wrong. */
export function compileRedactor(options: RedactOptions = {}): CompileResult {
  const mode = options.mode ?? 'mask';
  if (!REDACT_MODES.includes(mode)) {
    return failure(
      'unknown_mode',
      'mode',
      mode,
      `unknown mode ${JSON.stringify(mode)}, want one of off, warn, mask`,
    );
  }
  const rules = resolveRules(options.rules);
  if (!Array.isArray(rules)) return rules;
  const maskEmailDomain = options.maskEmailDomain ?? false;
  if (typeof maskEmailDomain !== 'boolean') {
    return failure('bad_option', 'maskEmailDomain', maskEmailDomain, 'maskEmailDomain must be a boolean');
  }
  const maxLength = options.maxLength ?? DEFAULT_REDACT_MAX_LENGTH;
  if (!isPositiveInteger(maxLength)) {
    return failure('bad_option', 'maxLength', maxLength, 'maxLength must be a positive integer');
  }
  const maxDepth = options.maxDepth ?? DEFAULT_REDACT_MAX_DEPTH;
  if (!isPositiveInteger(maxDepth)) {
    return failure('bad_option', 'maxDepth', maxDepth, 'maxDepth must be a positive integer');
  }
  const redactor = createRedactor({
    mode,
    rules,
    maskEmailDomain,
    maxLength,
    maxDepth,
    candidates: candidateRules,
  });
  return { ok: true, redactor };
}

/**
 * Mask one string with the given options. Bad options return the input unchanged and an empty result (the
 * package-level convenience never throws; use {@link compileRedactor} to see the error).
 */
export function redactText(s: string, options: RedactOptions = {}): { text: string; result: RedactResult } {
  const c = compileRedactor(options);
  if (!c.ok) return { text: s, result: redactResultOf(newTally()) };
  return c.redactor.text(s);
}

/** Walk a value with the given options (see `Redactor.value`); bad options return it unchanged. */
export function redactValue<T>(v: T, options: RedactOptions = {}): { value: T; result: RedactResult } {
  const c = compileRedactor(options);
  if (!c.ok) return { value: v, result: redactResultOf(newTally()) };
  return c.redactor.value(v);
}
