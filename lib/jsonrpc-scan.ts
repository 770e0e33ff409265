/**
 * The member scan behind `parseMessage`: over JSON text that `JSON.parse` has accepted, iteratively (no
 * recursion, so nesting is bounded by `maxDepth`, not by the stack), it refuses members named twice, `__proto__`
 * anywhere, and `constructor` holding an object. In the envelope, `params` and `params._meta` names are also
 * compared case-folded (parsers that fold case would read another member than we do); elsewhere only exact
 * duplicates count.
 * @see docs/middleware/parse.md
 */
import { clip } from './clip.js';

export interface ScanProblem {
  reason: 'too_deep' | 'duplicate_member' | 'forbidden_member';
  message: string;
}

/** Past this many members an object's names go into a Set; below it they are compared pairwise in the text. */
const SMALL_OBJECT = 16;

/** Path role of an object for case folding: none, the envelope, `params`, `params._meta`. */
type Role = 0 | 1 | 2 | 3;
const NONE = 0;
const ENVELOPE = 1;
const PARAMS = 2;
const META = 3;

/**
 * One open container. An object's member names are kept as positions in the text (the scanner's `starts` and
 * `ends` from `base` on: the key's characters between the quotes) and compared there, character by character; a
 * name is made into a string only when it holds an escape (`names`, its decoded value), when two names compared
 * case-folded differ past ASCII, and past {@link SMALL_OBJECT} names, where a Set of the (folded) names takes
 * over. Containers nest, so a child's names follow its parent's and are overwritten by its next sibling's.
 */
interface Frame {
  obj: boolean;
  role: Role;
  /** Where this object's names start in the scanner's arrays. */
  base: number;
  /** How many member names are in the arrays (at most SMALL_OBJECT + 1; the Set holds the rest). */
  count: number;
  set: Set<string> | undefined;
  /** The last member name read in this object (to give roles to children): its position, -1 for none. */
  lastStart: number;
  lastEnd: number;
  lastName: string | undefined;
}

/** Case folding used for the duplicate check: Unicode lower case plus the two folds Go's encoding/json adds. */
function foldKey(k: string): string {
  // A pure-ASCII key folds with plain lower-casing, and one with no upper-case letter folds to itself. Only
  // non-ASCII keys can hold the two Go folds (U+017F, U+212A).
  let upper = false;
  for (let i = 0; i < k.length; i++) {
    const c = k.charCodeAt(i);
    if (c > 0x7f)
      return k
        .toLowerCase()
        .replace(/\u017f/g, 's')
        .replace(/\u212a/g, 'k');
    if (c >= 0x41 && c <= 0x5a) upper = true;
  }
  return upper ? k.toLowerCase() : k;
}

/** Is the name between `start` and `end` (`decoded` when escaped) exactly `word` (an ASCII word)? */
function nameIs(
  text: string,
  start: number,
  end: number,
  decoded: string | undefined,
  word: string,
): boolean {
  if (decoded !== undefined) return decoded === word;
  return end - start === word.length && text.startsWith(word, start);
}

/** One scan of one text: the open containers and what is known about the text. */
class Scanner {
  readonly #text: string;
  readonly #maxDepth: number;
  /** Open containers by depth; a frame is reused for the next container at its depth. */
  readonly #frames: Frame[] = [];
  /** The member names of the open objects, as positions in the text (see Frame). */
  readonly #starts: number[] = [];
  readonly #ends: number[] = [];
  /** The decoded name where it differs from the text (an escaped name). */
  readonly #names: (string | undefined)[] = [];
  #depth = 0;
  /** No backslash anywhere: every string ends at the next quote. */
  readonly #plain: boolean;
  /** Whether the string last read by {@link Scanner.#stringEnd} holds an escape. */
  #escaped = false;
  /**
   * Whether the text holds U+0130 (İ): the one character whose lower case is longer than itself (`i` and
   * U+0307), so the only way two names of different lengths can fold alike. Looked up on first need.
   */
  #dottedCapitalI: boolean | undefined;

  constructor(text: string, maxDepth: number) {
    this.#text = text;
    this.#maxDepth = maxDepth;
    this.#plain = !text.includes('\\');
  }

  /** The first problem in the text, or undefined. */
  run(): ScanProblem | undefined {
    const text = this.#text;
    const n = text.length;
    let i = 0;
    let expectKey = false;
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 0x22 /* " */) {
        const end = this.#stringEnd(i + 1);
        if (expectKey) {
          const problem = this.#member(i, end);
          if (problem) return problem;
          expectKey = false;
        }
        i = end + 1;
        continue;
      }
      if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
        const problem = this.#open(c === 0x7b);
        if (problem) return problem;
        expectKey = c === 0x7b;
      } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
        if (this.#depth > 0) this.#depth--;
        expectKey = false;
      } else if (c === 0x2c /* , */) {
        expectKey = this.#depth > 0 && this.#frames[this.#depth - 1]!.obj;
      }
      i++;
    }
    return undefined;
  }

  /** The position of the quote that ends the string whose characters start at `start`. */
  #stringEnd(start: number): number {
    const text = this.#text;
    this.#escaped = false;
    if (this.#plain) {
      const j = text.indexOf('"', start);
      return j < 0 ? text.length : j;
    }
    let j = start;
    while (j < text.length) {
      const d = text.charCodeAt(j);
      if (d === 0x22) return j;
      if (d === 0x5c /* \ */) {
        this.#escaped = true;
        j += 2;
      } else j++;
    }
    return text.length;
  }

  /** A member name, the string between the quotes at `quote` and `end`, read in the innermost object. */
  #member(quote: number, end: number): ScanProblem | undefined {
    const text = this.#text;
    const top = this.#frames[this.#depth - 1]!;
    const start = quote + 1;
    const decoded = this.#escaped ? (JSON.parse(text.slice(quote, end + 1)) as string) : undefined;
    if (nameIs(text, start, end, decoded, '__proto__'))
      return { reason: 'forbidden_member', message: 'Member "__proto__" is not allowed' };
    if (!this.#addName(top, start, end, decoded)) {
      const name = decoded ?? text.slice(start, end);
      return { reason: 'duplicate_member', message: `Member "${clip(name)}" is named twice` };
    }
    return undefined;
  }

  /** Open an object (`obj`) or an array at the current depth. */
  #open(obj: boolean): ScanProblem | undefined {
    const text = this.#text;
    const parent = this.#depth > 0 ? this.#frames[this.#depth - 1] : undefined;
    let role: Role = NONE;
    if (obj) {
      if (!parent) role = ENVELOPE;
      else if (parent.obj && parent.role === ENVELOPE && lastIs(text, parent, 'params')) role = PARAMS;
      else if (parent.obj && parent.role === PARAMS && lastIs(text, parent, '_meta')) role = META;
      if (parent && parent.obj && lastIs(text, parent, 'constructor'))
        return { reason: 'forbidden_member', message: 'Member "constructor" may not hold an object' };
    }
    if (this.#depth >= this.#maxDepth)
      return { reason: 'too_deep', message: `Request nesting exceeds ${this.#maxDepth} levels` };
    let f = this.#frames[this.#depth];
    if (f === undefined) {
      f = newFrame();
      this.#frames[this.#depth] = f;
    }
    f.obj = obj;
    f.role = role;
    f.base = parent ? parent.base + parent.count : 0;
    f.count = 0;
    f.set = undefined;
    f.lastStart = -1;
    f.lastName = undefined;
    this.#depth++;
    return undefined;
  }

  /** Name `k` of the frame as a string: decoded when it was escaped, case-folded in a folding role. */
  #keyAt(f: Frame, k: number): string {
    const at = f.base + k;
    const name = this.#names[at] ?? this.#text.slice(this.#starts[at], this.#ends[at]);
    return f.role !== NONE ? foldKey(name) : name;
  }

  /** Do names `a` and `b` of the frame collide (exactly, or case-folded in a folding role)? */
  #sameName(f: Frame, a: number, b: number): boolean {
    const text = this.#text;
    const folded = f.role !== NONE;
    const names = this.#names;
    const x0 = f.base + a;
    const y0 = f.base + b;
    if (names[x0] !== undefined || names[y0] !== undefined) return this.#keyAt(f, a) === this.#keyAt(f, b);
    let i = this.#starts[x0]!;
    let j = this.#starts[y0]!;
    const len = this.#ends[x0]! - i;
    if (this.#ends[y0]! - j !== len) {
      if (!folded) return false;
      this.#dottedCapitalI ??= text.includes('\u0130');
      return this.#dottedCapitalI && this.#keyAt(f, a) === this.#keyAt(f, b);
    }
    for (const end = i + len; i < end; i++, j++) {
      let x = text.charCodeAt(i);
      let y = text.charCodeAt(j);
      if (x === y) continue;
      if (!folded) return false;
      // Past ASCII, folding is Unicode's (the Kelvin sign folds to an ASCII "k"): compare the folded names.
      if (x > 0x7f || y > 0x7f) return this.#keyAt(f, a) === this.#keyAt(f, b);
      // Two ASCII characters after an identical prefix: they decide.
      if (x >= 0x41 && x <= 0x5a) x += 0x20;
      if (y >= 0x41 && y <= 0x5a) y += 0x20;
      if (x !== y) return false;
    }
    return true;
  }

  /**
   * Add the member name found between `start` and `end` (`decoded` when it holds an escape) to the object's
   * names; false when the object already has it.
   */
  #addName(f: Frame, start: number, end: number, decoded: string | undefined): boolean {
    f.lastStart = start;
    f.lastEnd = end;
    f.lastName = decoded;
    if (f.set !== undefined) {
      const name = decoded ?? this.#text.slice(start, end);
      const key = f.role !== NONE ? foldKey(name) : name;
      if (f.set.has(key)) return false;
      f.set.add(key);
      return true;
    }
    const k = f.count++;
    const at = f.base + k;
    this.#starts[at] = start;
    this.#ends[at] = end;
    this.#names[at] = decoded;
    for (let i = 0; i < k; i++) if (this.#sameName(f, i, k)) return false;
    if (f.count > SMALL_OBJECT) {
      const all = new Set<string>();
      for (let i = 0; i < f.count; i++) all.add(this.#keyAt(f, i));
      f.set = all;
    }
    return true;
  }
}

function newFrame(): Frame {
  return {
    obj: false,
    role: NONE,
    base: 0,
    count: 0,
    set: undefined,
    lastStart: -1,
    lastEnd: -1,
    lastName: undefined,
  };
}

/** Is the object's last member name exactly `word`? */
function lastIs(text: string, f: Frame, word: string): boolean {
  return f.lastStart >= 0 && nameIs(text, f.lastStart, f.lastEnd, f.lastName, word);
}

/**
 * Scan valid JSON text (it must have been accepted by `JSON.parse`) for depth, duplicate and forbidden members.
 * Returns the first problem, or undefined.
 */
export function scanMembers(text: string, maxDepth: number): ScanProblem | undefined {
  return new Scanner(text, maxDepth).run();
}
