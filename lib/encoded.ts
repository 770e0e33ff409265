/**
 * Results written from stored text (internal: not part of `mcpware/lib`). A result that is the same for many
 * requests, such as the tool list of a registry whose tools are all static, is serialized once: `encodedOnce()`
 * returns a deep-frozen copy of it that carries its own JSON, and the result encoders write that text instead of
 * serializing the value again. No I/O.
 *
 * Why the text can be trusted: the copy is the value's JSON parsed back, so it holds only plain objects, arrays
 * and JSON primitives (no getter, `toJSON` or prototype can make the value and the text differ), and it is frozen
 * all the way down, so nothing can change it afterwards. Serializing it again gives the stored text: a parsed
 * object keeps the member order of its text (array-index names first, as `JSON.stringify` had written them).
 * The text sits under a module-private symbol, non-enumerable: spreading the copy (redaction's copy-on-write, a
 * handler's `{...result}`) does not carry it over, so a changed copy is serialized as usual.
 */

const TEXT = Symbol('mcpware.encodedText');

/** Freeze an object graph of plain data (objects reached through own enumerable string keys). */
export function deepFreeze<T>(v: T): T {
  const stack: unknown[] = [v];
  while (stack.length > 0) {
    const x = stack.pop();
    if (x !== null && typeof x === 'object' && !Object.isFrozen(x)) {
      Object.freeze(x);
      for (const k of Object.keys(x)) stack.push((x as Record<string, unknown>)[k]);
    }
  }
  return v;
}

/**
 * A deep-frozen plain-data copy of `value` (an object) that carries its JSON text. Throws a TypeError when the
 * value does not serialize to a JSON object, and whatever `JSON.stringify` throws (a BigInt, a cycle).
 */
export function encodedOnce<T extends object>(value: T): T {
  const text = JSON.stringify(value) as string | undefined;
  if (text === undefined || text.charCodeAt(0) !== 0x7b /* { */) {
    throw new TypeError('encodedOnce: the value must serialize to a JSON object');
  }
  const copy = JSON.parse(text) as T;
  Object.defineProperty(copy, TEXT, { value: text });
  return deepFreeze(copy);
}

/** The stored JSON text of an {@link encodedOnce} copy, or `undefined` for any other value. */
export function encodedText(value: object): string | undefined {
  return (value as { [TEXT]?: string })[TEXT];
}
