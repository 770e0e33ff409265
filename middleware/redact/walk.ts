/**
 * The walk of `redact()` over one outgoing value. Masked, by method:
 * - `tools/call`: `content[]` text blocks, embedded `resource` blocks' `text`, and `structuredContent` (walked);
 * - `resources/read`: `contents[].text`;
 * - `prompts/get`: `messages[].content` (a block or an array of blocks: text and embedded resource text);
 * - notifications: `notifications/message` `params.data` (walked) and `notifications/progress` `params.message`.
 * - errors a server behind `sdk()` or `proxy()` answered: `message` (as text) and `data` (walked).
 * Binary blobs, images, audio, names, URIs, `_meta` and object keys are left alone; other methods pass as is.
 * Copy-on-write: an object or array is copied only when something in it changed, so a clean value comes back as
 * the very same object.
 * @see docs/middleware/redact.md
 */
import type { RedactTally, Redactor } from '../../lib/redact/index.js';
import { isJsonObject } from '../../lib/json.js';
import type { OutboundKind } from '../../core/types.js';

type Obj = Record<string, unknown>;
/** Set one key on a copy-on-write copy. */
function withKey(o: Obj, k: string, v: unknown): Obj {
  const copy = { ...o };
  Object.defineProperty(copy, k, { value: v, enumerable: true, writable: true, configurable: true });
  return copy;
}

// The redactor's result-less entry points when it has them (compileRedactor's always do); a hand-written
// Redactor may lack them.
const scanText = (r: Redactor, s: string, t: RedactTally): string =>
  r.scanText ? r.scanText(s, t) : r.text(s, t).text;
const scanValue = (r: Redactor, v: unknown, t: RedactTally): unknown =>
  r.scanValue ? r.scanValue(v, t) : r.value(v, t).value;

/** Mask a content block (text, or an embedded resource's text). */
function maskBlock(b: unknown, r: Redactor, t: RedactTally): unknown {
  if (!isJsonObject(b)) return b;
  if (b.type === 'text') {
    const s = b.text;
    if (typeof s !== 'string') return b;
    const x = scanText(r, s, t);
    return x === s ? b : withKey(b, 'text', x);
  }
  if (b.type === 'resource') {
    const res = b.resource;
    if (!isJsonObject(res)) return b;
    const s = res.text;
    if (typeof s !== 'string') return b;
    const x = scanText(r, s, t);
    return x === s ? b : withKey(b, 'resource', withKey(res, 'text', x));
  }
  return b;
}

/** Mask an array of content blocks; anything else is returned as is. */
function maskBlocks(a: unknown, r: Redactor, t: RedactTally): unknown {
  if (!Array.isArray(a)) return a;
  let copy: unknown[] | undefined;
  for (let i = 0; i < a.length; i++) {
    const x: unknown = a[i];
    const y = maskBlock(x, r, t);
    if (y !== x) {
      copy ??= a.slice();
      copy[i] = y;
    }
  }
  return copy ?? a;
}

/** `resources/read` contents: each entry's `text` (an own string property). */
function maskContents(a: unknown, r: Redactor, t: RedactTally): unknown {
  if (!Array.isArray(a)) return a;
  let copy: unknown[] | undefined;
  for (let i = 0; i < a.length; i++) {
    const c: unknown = a[i];
    if (!isJsonObject(c)) continue;
    const s = c.text;
    if (typeof s !== 'string' || !Object.hasOwn(c, 'text')) continue;
    const x = scanText(r, s, t);
    if (x !== s) {
      copy ??= a.slice();
      copy[i] = withKey(c, 'text', x);
    }
  }
  return copy ?? a;
}

/** `prompts/get` messages: each message's `content`, a block or an array of blocks (an own property). */
function maskMessages(a: unknown, r: Redactor, t: RedactTally): unknown {
  if (!Array.isArray(a)) return a;
  let copy: unknown[] | undefined;
  for (let i = 0; i < a.length; i++) {
    const m: unknown = a[i];
    if (!isJsonObject(m) || !Object.hasOwn(m, 'content')) continue;
    const c = m.content;
    const y = Array.isArray(c) ? maskBlocks(c, r, t) : maskBlock(c, r, t);
    if (y !== c) {
      copy ??= a.slice();
      copy[i] = withKey(m, 'content', y);
    }
  }
  return copy ?? a;
}

/** A forwarded server's error, `{ message, data }`: its message scanned as text, its data walked. */
function maskError(e: Obj, r: Redactor, t: RedactTally): Obj {
  let v = e;
  if (typeof v.message === 'string') {
    const x = scanText(r, v.message, t);
    if (x !== v.message) v = withKey(v, 'message', x);
  }
  if (Object.hasOwn(v, 'data')) {
    const x = v.data;
    const y = scanValue(r, x, t);
    if (y !== x) v = withKey(v, 'data', y);
  }
  return v;
}

/**
 * Mask one outgoing value for `method`. Pure apart from the tally; exported for tests and for applications
 * that encode results themselves.
 */
export function maskOutbound(
  value: unknown,
  info: { method: string; kind: OutboundKind },
  r: Redactor,
  t: RedactTally,
): unknown {
  if (!isJsonObject(value)) return value;
  if (info.kind === 'error') return maskError(value, r, t);
  if (info.kind === 'notification') {
    // The dispatcher may pass the whole message ({method, params}) or just its params: accept both, by shape.
    if (typeof value.method === 'string') {
      const p = value.params;
      if (isJsonObject(p)) {
        if (!Object.hasOwn(value, 'params')) return value;
        const y = maskNotificationParams(p, r, t);
        return y === p ? value : withKey(value, 'params', y);
      }
    }
    return maskNotificationParams(value, r, t);
  }
  let v = value;
  switch (info.method) {
    case 'tools/call': {
      if (Object.hasOwn(v, 'content')) {
        const x = v.content;
        const y = maskBlocks(x, r, t);
        if (y !== x) v = withKey(v, 'content', y);
      }
      if (Object.hasOwn(v, 'structuredContent')) {
        const x = v.structuredContent;
        const y = scanValue(r, x, t);
        if (y !== x) v = withKey(v, 'structuredContent', y);
      }
      return v;
    }
    case 'resources/read':
      if (Object.hasOwn(v, 'contents')) {
        const x = v.contents;
        const y = maskContents(x, r, t);
        if (y !== x) v = withKey(v, 'contents', y);
      }
      return v;
    case 'prompts/get':
      if (Object.hasOwn(v, 'messages')) {
        const x = v.messages;
        const y = maskMessages(x, r, t);
        if (y !== x) v = withKey(v, 'messages', y);
      }
      return v;
    default:
      return value;
  }
}

function maskNotificationParams(p: Obj, r: Redactor, t: RedactTally): Obj {
  // notifications/message: {level, logger?, data}; notifications/progress: {progressToken, progress, message?}.
  let out = p;
  if ('level' in p && 'data' in p && Object.hasOwn(out, 'data')) {
    const x = out.data;
    const y = scanValue(r, x, t);
    if (y !== x) out = withKey(out, 'data', y);
  }
  if ('progressToken' in p && typeof p.message === 'string' && Object.hasOwn(out, 'message')) {
    const x = out.message;
    const y = scanText(r, x as string, t);
    if (y !== x) out = withKey(out, 'message', y);
  }
  return out;
}
