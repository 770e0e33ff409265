/**
 * `CleanMemo`: cleanText for one audit field, remembered per distinct raw value. Caller-authored strings that
 * repeat from request to request (the HTTP method, the path, the user agent, the client, the JSON-RPC method,
 * the tool or resource) are then sanitized and masked once per value.
 * @see docs/performance.md#audits-cleanmemo
 */
import type { RedactTally, Redactor } from '../../lib/redact/index.js';
import { cleanText } from '../../lib/sanitize.js';

/** Most distinct values one memo holds. When full it starts over: a flood of new values costs a miss each. */
const MEMO_ENTRIES = 128;
/** Longest raw value a memo keeps: longer ones are rare, and are cleaned every time. */
const MEMO_MAX_LENGTH = 256;

/**
 * Exact, not an approximation: cleanText is a pure function of the string, the cap and the redactor (fixed per
 * instance), so a remembered answer is the one a new call would give. Bounded: at most MEMO_ENTRIES values of at
 * most MEMO_MAX_LENGTH code units each.
 */
export class CleanMemo {
  private readonly seen = new Map<string, string>();

  constructor(
    private readonly cap: number,
    private readonly redactor: Redactor,
    private readonly tally: RedactTally,
  ) {}

  /** The cleaned value of `s`, or `''` when it is not a string. */
  clean(s: unknown): string {
    if (typeof s !== 'string') return '';
    if (s.length > MEMO_MAX_LENGTH) return cleanText(s, this.cap, this.redactor, this.tally);
    let out = this.seen.get(s);
    if (out === undefined) {
      out = cleanText(s, this.cap, this.redactor, this.tally);
      if (this.seen.size >= MEMO_ENTRIES) this.seen.clear();
      this.seen.set(s, out);
    }
    return out;
  }
}
