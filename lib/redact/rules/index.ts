/**
 * The seven rules, as the passes the engine runs in order (`ip` is two passes).
 * @see docs/middleware/redact.md
 */
import type { RuleName } from '../types.js';
import { cardRule } from './card.js';
import { emailRule } from './email.js';
import { ipv4Rule, ipv6Rule } from './ip.js';
import { jwtRule } from './jwt.js';
import { pemRule } from './pem.js';
import { phoneRule } from './phone.js';
import type { Rule } from './rule.js';
import { tokenRule } from './token.js';

// luhn (card.ts), isMaskableIPv6 (ip.ts) and PASS_BITS (rule.ts) are exported by their own modules: see
// docs/performance.md#fast-exports
export type { PassName, Rule, RuleOptions, Hit } from './rule.js';

/** Every pass, in the order they run. */
export const PASSES: readonly Rule[] = Object.freeze([
  jwtRule,
  pemRule,
  emailRule,
  tokenRule,
  cardRule,
  phoneRule,
  ipv6Rule,
  ipv4Rule,
]);

/** The passes of the chosen rules, in run order. */
export function passesFor(rules: readonly RuleName[]): Rule[] {
  return PASSES.filter((p) => rules.includes(p.name));
}
