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
 * The scan's working memory is one stack of numbers, `mem`: each open container is a frame of {@link FRAME}
 * slots (array or object and its role, parent frame, name count and last member name) followed by its member names, two slots
 * each (where the name's characters start and end in the text, between the quotes). A child container's frame
 * goes right after its parent's names so far and is dropped when the child closes, so an object's names stay
 * next to each other. Names are compared in the text, character by character; a name is made into a string only
 * when it holds an escape (its decoded value goes into `names`), when two names compared case-folded differ
 * past ASCII, and past {@link SMALL_OBJECT} names, where a Set of the (folded) names takes over (`sets`).
 */
const FRAME = 5;
/** Frame slots: {@link ARRAY} for an array, the object's {@link Role} for an object. */
const KIND = 0;
/** Where the parent's frame starts in `mem`, -1 for the outermost container. */
const PARENT = 1;
/** How many member names follow the frame (at most SMALL_OBJECT + 1; the Set holds the rest). */
const COUNT = 2;
/** The last member name read in this object (to give roles to children): its span, -1 for none. */
const LAST_START = 3;
const LAST_END = 4;
/** The kind of an array's frame. */
const ARRAY = -1;
/**
 * Past this many numbers, a working memory the caller keeps is emptied when the scan ends, so that what it holds
 * between scans stays bounded whatever the largest message was.
 */
const RETAINED_MEMORY = 1024;

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

/** One scan: the text, what is known about it, and the scan's working memory, its own (nothing outlives the scan). */
interface TextFacts {
  text: string;
  /** The frames and member names of the open containers (see {@link FRAME}). */
  mem: number[];
  /** Where the innermost open container's frame starts in `mem`, -1 when none is open. */
  top: number;
  /** The decoded names of escaped member names, by where their span is in `mem`; made at the first escape. */
  names: Map<number, string> | undefined;
  /** The names of an object past {@link SMALL_OBJECT} members, by where its frame is; made at the first. */
  sets: Map<number, Set<string>> | undefined;
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
  const { text, mem } = t;
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
        const problem = member(t, t.top, i, end, escaped);
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
      if (depth > 0) {
        depth--;
        t.top = mem[t.top + PARENT]!;
      }
      expectKey = false;
    } else if (c === 0x2c /* , */) {
      expectKey = depth > 0 && mem[t.top + KIND] !== ARRAY;
    }
    i++;
  }
  return undefined;
}

/** A member name, the string between the quotes at `quote` and `end`, read in the object whose frame is at `f`. */
function member(
  t: TextFacts,
  f: number,
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
  if (!addName(t, f, start, end, decoded)) {
    const name = decoded ?? text.slice(start, end);
    return { reason: 'duplicate_member', message: `Member "${clip(name)}" is named twice` };
  }
  return undefined;
}

/** Open an object (`obj`) or an array at `depth`: its frame goes after the parent's names so far. */
function open(t: TextFacts, depth: number, obj: boolean, maxDepth: number): ScanProblem | undefined {
  const mem = t.mem;
  const parent = t.top;
  let role: Role = NONE;
  if (obj) {
    if (parent < 0) role = ENVELOPE;
    else if (mem[parent + KIND] !== ARRAY) {
      const parentRole = mem[parent + KIND];
      if (parentRole === ENVELOPE && lastIs(t, parent, 'params')) role = PARAMS;
      else if (parentRole === PARAMS && lastIs(t, parent, '_meta')) role = META;
      if (lastIs(t, parent, 'constructor'))
        return { reason: 'forbidden_member', message: 'Member "constructor" may not hold an object' };
    }
  }
  if (depth >= maxDepth) return { reason: 'too_deep', message: `Request nesting exceeds ${maxDepth} levels` };
  const f = parent < 0 ? 0 : parent + FRAME + 2 * mem[parent + COUNT]!;
  mem[f + KIND] = obj ? role : ARRAY;
  mem[f + PARENT] = parent;
  mem[f + COUNT] = 0;
  mem[f + LAST_START] = -1;
  mem[f + LAST_END] = -1;
  if (t.sets !== undefined) t.sets.delete(f);
  t.top = f;
  return undefined;
}

/** The decoded name whose span is at `at` in `mem` when it was escaped, else undefined. */
function decodedAt(t: TextFacts, at: number): string | undefined {
  return t.names === undefined ? undefined : t.names.get(at);
}

/** The name whose span is at `at` as a string: decoded when it was escaped, case-folded in a folding role. */
function keyAt(t: TextFacts, f: number, at: number): string {
  const name = decodedAt(t, at) ?? t.text.slice(t.mem[at], t.mem[at + 1]);
  return t.mem[f + KIND] !== NONE ? foldKey(name) : name;
}

/** Do the names whose spans are at `x0` and `y0` collide (exactly, or case-folded in a folding role)? */
function sameName(t: TextFacts, f: number, x0: number, y0: number): boolean {
  const { text, mem } = t;
  const folded = mem[f + KIND] !== NONE;
  if (decodedAt(t, x0) !== undefined || decodedAt(t, y0) !== undefined)
    return keyAt(t, f, x0) === keyAt(t, f, y0);
  let i = mem[x0]!;
  let j = mem[y0]!;
  const len = mem[x0 + 1]! - i;
  if (mem[y0 + 1]! - j !== len) {
    if (!folded) return false;
    t.dottedCapitalI ??= text.includes('\u0130');
    return t.dottedCapitalI && keyAt(t, f, x0) === keyAt(t, f, y0);
  }
  for (const end = i + len; i < end; i++, j++) {
    let x = text.charCodeAt(i);
    let y = text.charCodeAt(j);
    if (x === y) continue;
    if (!folded) return false;
    // Past ASCII, folding is Unicode's (the Kelvin sign folds to an ASCII "k"): compare the folded names.
    if (x > 0x7f || y > 0x7f) return keyAt(t, f, x0) === keyAt(t, f, y0);
    // Two ASCII characters after an identical prefix: they decide.
    if (x >= 0x41 && x <= 0x5a) x += 0x20;
    if (y >= 0x41 && y <= 0x5a) y += 0x20;
    if (x !== y) return false;
  }
  return true;
}

/**
 * Add the member name found between `start` and `end` (`decoded` when it holds an escape) to the names of the
 * object whose frame is at `f`; false when the object already has it.
 */
function addName(t: TextFacts, f: number, start: number, end: number, decoded: string | undefined): boolean {
  const mem = t.mem;
  mem[f + LAST_START] = start;
  mem[f + LAST_END] = end;
  const folded = mem[f + KIND] !== NONE;
  const set = t.sets === undefined ? undefined : t.sets.get(f);
  if (set !== undefined) {
    const name = decoded ?? t.text.slice(start, end);
    const key = folded ? foldKey(name) : name;
    if (set.has(key)) return false;
    set.add(key);
    return true;
  }
  const k = mem[f + COUNT]!;
  mem[f + COUNT] = k + 1;
  const at = f + FRAME + 2 * k;
  mem[at] = start;
  mem[at + 1] = end;
  if (decoded !== undefined) (t.names ??= new Map()).set(at, decoded);
  else if (t.names !== undefined) t.names.delete(at);
  // Two plain names of different lengths differ, unless case folding is on and the text holds U+0130.
  const loose = k > 0 && folded && (t.dottedCapitalI ??= t.text.includes('\u0130'));
  const len = end - start;
  for (let x = f + FRAME; x < at; x += 2) {
    if (!loose && decoded === undefined && decodedAt(t, x) === undefined && mem[x + 1]! - mem[x]! !== len)
      continue;
    if (sameName(t, f, x, at)) return false;
  }
  if (k + 1 > SMALL_OBJECT) {
    const all = new Set<string>();
    for (let x = f + FRAME; x <= at; x += 2) all.add(keyAt(t, f, x));
    (t.sets ??= new Map()).set(f, all);
  }
  return true;
}

/** Does the text between `start` and `end` hold a backslash? */
function holdsEscape(text: string, start: number, end: number): boolean {
  for (let i = start; i < end; i++) if (text.charCodeAt(i) === 0x5c /* \ */) return true;
  return false;
}

/** Is the last member name of the object whose frame is at `f` exactly `word`? */
function lastIs(t: TextFacts, f: number, word: string): boolean {
  const { text, mem } = t;
  const start = mem[f + LAST_START]!;
  if (start < 0) return false;
  const end = mem[f + LAST_END]!;
  const decoded =
    !t.plain && holdsEscape(text, start, end)
      ? (JSON.parse(text.slice(start - 1, end + 1)) as string)
      : undefined;
  return nameIs(text, start, end, decoded, word);
}

/**
 * Scan valid JSON text (it must have been accepted by `JSON.parse`) for depth, duplicate and forbidden members.
 * Returns the first problem, or undefined. `memory` is the scan's working memory when the caller keeps one to
 * reuse (scans never overlap, as a scan runs to its end without yielding): numbers only, positions in the text,
 * so nothing of the text outlives the scan, and emptied past {@link RETAINED_MEMORY}. Without it the scan makes
 * its own. See docs/performance.md#scan-memory.
 */
export function scanMembers(text: string, maxDepth: number, memory: number[] = []): ScanProblem | undefined {
  const t: TextFacts = {
    text,
    mem: memory,
    top: -1,
    names: undefined,
    sets: undefined,
    plain: !text.includes('\\'),
    dottedCapitalI: undefined,
  };
  const problem = run(t, maxDepth);
  if (memory.length > RETAINED_MEMORY) memory.length = 0;
  return problem;
}
