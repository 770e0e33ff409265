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
 * One open container. An object's member names are kept as positions in the text (the scan's `starts` and
 * `ends` from `base` on: the key's characters between the quotes) and compared there, character by character; a
 * name is made into a string only when it holds an escape (`names`, its decoded value), when two names compared
 * case-folded differ past ASCII, and past {@link SMALL_OBJECT} names, where a Set of the (folded) names takes
 * over. Containers nest, so a child's names follow its parent's and are overwritten by its next sibling's.
 */
interface Frame {
  obj: boolean;
  role: Role;
  /** Where this object's names start in the scan's arrays. */
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

/**
 * One scan: the text and what is known about it, and the scan's working memory, its own (nothing outlives the
 * scan): the open containers by depth and the member names of the open objects, as positions in the text (see
 * Frame).
 */
interface TextFacts {
  text: string;
  frames: Frame[];
  starts: number[];
  ends: number[];
  /** The decoded name where it differs from the text (an escaped name); `undefined` elsewhere. */
  names: (string | undefined)[];
  /** No backslash anywhere: every string ends at the next quote. */
  plain: boolean;
  /**
   * Whether the text holds U+0130 (İ): the one character whose lower case is longer than itself (`i` and
   * U+0307), so the only way two names of different lengths can fold alike. Looked up on first need.
   */
  dottedCapitalI: boolean | undefined;
}

/**
 * The position of the quote that ends the string whose characters start at `start`, or `-1 - position` when the
 * string holds an escape.
 */
function stringEnd(t: TextFacts, start: number): number {
  const text = t.text;
  if (t.plain) {
    const j = text.indexOf('"', start);
    return j < 0 ? text.length : j;
  }
  let escaped = false;
  let j = start;
  while (j < text.length) {
    const d = text.charCodeAt(j);
    if (d === 0x22) break;
    if (d === 0x5c /* \ */) {
      escaped = true;
      j += 2;
    } else j++;
  }
  if (j > text.length) j = text.length;
  return escaped ? -1 - j : j;
}

/** The first problem in the text, or undefined. */
function run(t: TextFacts, maxDepth: number): ScanProblem | undefined {
  const text = t.text;
  const n = text.length;
  let depth = 0;
  let i = 0;
  let expectKey = false;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      let end = stringEnd(t, i + 1);
      const escaped = end < 0;
      if (escaped) end = -1 - end;
      if (expectKey) {
        const problem = member(t, t.frames[depth - 1]!, i, end, escaped);
        if (problem) return problem;
        expectKey = false;
      }
      i = end + 1;
      continue;
    }
    if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      const problem = open(t, depth, c === 0x7b, maxDepth);
      if (problem) return problem;
      depth++;
      expectKey = c === 0x7b;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      if (depth > 0) depth--;
      expectKey = false;
    } else if (c === 0x2c /* , */) {
      expectKey = depth > 0 && t.frames[depth - 1]!.obj;
    }
    i++;
  }
  return undefined;
}

/** A member name, the string between the quotes at `quote` and `end`, read in the object `top`. */
function member(
  t: TextFacts,
  top: Frame,
  quote: number,
  end: number,
  escaped: boolean,
): ScanProblem | undefined {
  const text = t.text;
  const start = quote + 1;
  let decoded: string | undefined;
  if (escaped) {
    decoded = JSON.parse(text.slice(quote, end + 1)) as string;
  }
  if (nameIs(text, start, end, decoded, '__proto__'))
    return { reason: 'forbidden_member', message: 'Member "__proto__" is not allowed' };
  if (!addName(t, top, start, end, decoded)) {
    const name = decoded ?? text.slice(start, end);
    return { reason: 'duplicate_member', message: `Member "${clip(name)}" is named twice` };
  }
  return undefined;
}

/** Open an object (`obj`) or an array at `depth`. */
function open(t: TextFacts, depth: number, obj: boolean, maxDepth: number): ScanProblem | undefined {
  const { text, frames } = t;
  const parent = depth > 0 ? frames[depth - 1] : undefined;
  let role: Role = NONE;
  if (obj) {
    if (!parent) role = ENVELOPE;
    else if (parent.obj && parent.role === ENVELOPE && lastIs(text, parent, 'params')) role = PARAMS;
    else if (parent.obj && parent.role === PARAMS && lastIs(text, parent, '_meta')) role = META;
    if (parent && parent.obj && lastIs(text, parent, 'constructor'))
      return { reason: 'forbidden_member', message: 'Member "constructor" may not hold an object' };
  }
  if (depth >= maxDepth) return { reason: 'too_deep', message: `Request nesting exceeds ${maxDepth} levels` };
  let f = frames[depth];
  if (f === undefined) {
    f = newFrame();
    frames[depth] = f;
  }
  f.obj = obj;
  f.role = role;
  f.base = parent ? parent.base + parent.count : 0;
  f.count = 0;
  f.set = undefined;
  f.lastStart = -1;
  f.lastName = undefined;
  return undefined;
}

/** Name `k` of the frame as a string: decoded when it was escaped, case-folded in a folding role. */
function keyAt(t: TextFacts, f: Frame, k: number): string {
  const at = f.base + k;
  const name = t.names[at] ?? t.text.slice(t.starts[at], t.ends[at]);
  return f.role !== NONE ? foldKey(name) : name;
}

/** Do names `a` and `b` of the frame collide (exactly, or case-folded in a folding role)? */
function sameName(t: TextFacts, f: Frame, a: number, b: number): boolean {
  const { text, starts, ends, names } = t;
  const folded = f.role !== NONE;
  const x0 = f.base + a;
  const y0 = f.base + b;
  if (names[x0] !== undefined || names[y0] !== undefined) return keyAt(t, f, a) === keyAt(t, f, b);
  let i = starts[x0]!;
  let j = starts[y0]!;
  const len = ends[x0]! - i;
  if (ends[y0]! - j !== len) {
    if (!folded) return false;
    t.dottedCapitalI ??= text.includes('\u0130');
    return t.dottedCapitalI && keyAt(t, f, a) === keyAt(t, f, b);
  }
  for (const end = i + len; i < end; i++, j++) {
    let x = text.charCodeAt(i);
    let y = text.charCodeAt(j);
    if (x === y) continue;
    if (!folded) return false;
    // Past ASCII, folding is Unicode's (the Kelvin sign folds to an ASCII "k"): compare the folded names.
    if (x > 0x7f || y > 0x7f) return keyAt(t, f, a) === keyAt(t, f, b);
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
function addName(t: TextFacts, f: Frame, start: number, end: number, decoded: string | undefined): boolean {
  f.lastStart = start;
  f.lastEnd = end;
  f.lastName = decoded;
  if (f.set !== undefined) {
    const name = decoded ?? t.text.slice(start, end);
    const key = f.role !== NONE ? foldKey(name) : name;
    if (f.set.has(key)) return false;
    f.set.add(key);
    return true;
  }
  const { starts, ends, names } = t;
  const k = f.count++;
  const at = f.base + k;
  starts[at] = start;
  ends[at] = end;
  names[at] = decoded;
  // Two plain names of different lengths differ, unless case folding is on and the text holds U+0130.
  const loose = k > 0 && f.role !== NONE && (t.dottedCapitalI ??= t.text.includes('\u0130'));
  const len = end - start;
  for (let i = 0; i < k; i++) {
    const x = f.base + i;
    if (!loose && decoded === undefined && names[x] === undefined && ends[x]! - starts[x]! !== len) continue;
    if (sameName(t, f, i, k)) return false;
  }
  if (f.count > SMALL_OBJECT) {
    const all = new Set<string>();
    for (let i = 0; i < f.count; i++) all.add(keyAt(t, f, i));
    f.set = all;
  }
  return true;
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
  const t: TextFacts = {
    text,
    frames: [],
    starts: [],
    ends: [],
    names: [],
    plain: !text.includes('\\'),
    dottedCapitalI: undefined,
  };
  return run(t, maxDepth);
}
