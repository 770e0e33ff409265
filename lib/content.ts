/**
 * Resource contents: when a body travels as `text` and when as base64 `blob`, and MIME types by file extension.
 *
 * The rule: `text` only when the MIME type is textual **and** the bytes are valid UTF-8; everything else is a
 * `blob` (standard padded base64). So a `.txt` file holding Latin-1 bytes arrives intact instead of with
 * replacement characters. Pure: no I/O.
 */

/** A resource body as a source hands it over: text, or raw bytes. */
export interface ResourceBody {
  /** The body as text. */
  text?: string;
  /** The body as bytes (takes precedence over `text` when both are set). */
  bytes?: Uint8Array;
  /** MIME type, e.g. `text/markdown`. Absent means textual-if-UTF-8 (`text/plain` semantics). */
  mimeType?: string;
  /** Extra `_meta` for the contents entry. */
  _meta?: Record<string, unknown>;
}

export interface TextResourceContents {
  uri: string;
  mimeType?: string;
  text: string;
  _meta?: Record<string, unknown>;
}
export interface BlobResourceContents {
  uri: string;
  mimeType?: string;
  blob: string;
  _meta?: Record<string, unknown>;
}
export type ResourceContents = TextResourceContents | BlobResourceContents;

/** The essence of a MIME type: lower-cased, parameters (`;charset=…`) and surrounding spaces removed. */
export function mimeEssence(mime: string): string {
  const semi = mime.indexOf(';');
  return (semi < 0 ? mime : mime.slice(0, semi)).trim().toLowerCase();
}

const TEXTUAL_APPLICATION = new Set([
  'application/json',
  'application/xml',
  'application/yaml',
  'application/x-yaml',
  'application/toml',
  'application/javascript',
  'application/ecmascript',
  'application/sql',
  'application/x-sh',
  'application/graphql',
  'application/ld+json',
  'application/jsonl',
]);

/**
 * True for MIME types whose bodies are text: none given, `text/*`, structured-syntax suffixes `+json`, `+xml`,
 * `+yaml`, and a short list of textual `application/*` types. Case-insensitive; parameters are ignored.
 */
export function isTextualMime(mime: string | undefined): boolean {
  if (mime === undefined) return true;
  const m = mimeEssence(mime);
  if (m === '') return true;
  if (m.startsWith('text/')) return true;
  if (m.endsWith('+json') || m.endsWith('+xml') || m.endsWith('+yaml')) return true;
  return TEXTUAL_APPLICATION.has(m);
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The bytes as a string when they are valid UTF-8, else `undefined`. A byte-order mark is kept, not eaten. */
export function decodeUtf8(bytes: Uint8Array): string | undefined {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return undefined;
  }
}

/**
 * True when a string has no lone surrogates, so it encodes to UTF-8 without loss. (`String#isWellFormed` is
 * ES2024; this is the same check for older targets.)
 */
export function isWellFormedText(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0xd800 || c > 0xdfff) continue;
    if (c > 0xdbff) return false; // a low surrogate with no high one before it
    const d = s.charCodeAt(i + 1);
    if (!(d >= 0xdc00 && d <= 0xdfff)) return false; // a high surrogate not followed by a low one
    i++;
  }
  return true;
}

function base64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

/** The byte length of a body as it would be sent (UTF-8 for text). */
export function bodyByteLength(body: ResourceBody): number {
  if (body.bytes !== undefined) return body.bytes.byteLength;
  return body.text === undefined ? 0 : Buffer.byteLength(body.text, 'utf8');
}

/**
 * The `contents` entry for a body: `text` when the MIME type is textual and the body is valid UTF-8 (or a
 * well-formed string), otherwise `blob`. A body with neither `text` nor `bytes` is the empty text `""`.
 */
export function toResourceContents(uri: string, body: ResourceBody): ResourceContents {
  const textual = isTextualMime(body.mimeType);
  let out: ResourceContents;
  if (body.bytes !== undefined) {
    const text = textual ? decodeUtf8(body.bytes) : undefined;
    out = text !== undefined ? { uri, text } : { uri, blob: base64(body.bytes) };
  } else {
    const text = body.text ?? '';
    // A string with lone surrogates is not UTF-8; it travels as a blob of its (lossy) UTF-8 encoding.
    out =
      textual && isWellFormedText(text)
        ? { uri, text }
        : { uri, blob: Buffer.from(text, 'utf8').toString('base64') };
  }
  if (body.mimeType !== undefined) out.mimeType = body.mimeType;
  if (body._meta !== undefined) out._meta = body._meta;
  return out;
}

const BY_EXTENSION: Readonly<Record<string, string>> = {
  md: 'text/markdown',
  markdown: 'text/markdown',
  txt: 'text/plain',
  text: 'text/plain',
  html: 'text/html',
  htm: 'text/html',
  css: 'text/css',
  csv: 'text/csv',
  tsv: 'text/tab-separated-values',
  js: 'text/javascript',
  mjs: 'text/javascript',
  cjs: 'text/javascript',
  ts: 'text/x-typescript',
  py: 'text/x-python',
  go: 'text/x-go',
  sh: 'application/x-sh',
  sql: 'application/sql',
  json: 'application/json',
  jsonl: 'application/jsonl',
  xml: 'application/xml',
  yaml: 'application/yaml',
  yml: 'application/yaml',
  toml: 'application/toml',
  svg: 'image/svg+xml',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  avif: 'image/avif',
  ico: 'image/vnd.microsoft.icon',
  pdf: 'application/pdf',
  zip: 'application/zip',
  gz: 'application/gzip',
  wasm: 'application/wasm',
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  ogg: 'audio/ogg',
  mp4: 'video/mp4',
  webm: 'video/webm',
  woff: 'font/woff',
  woff2: 'font/woff2',
};

/** The MIME type for a file name by its extension (case-insensitive), or `undefined` when unknown. */
export function mimeForPath(path: string): string | undefined {
  const slash = Math.max(path.lastIndexOf('/'), path.lastIndexOf('\\'));
  const base = path.slice(slash + 1);
  const dot = base.lastIndexOf('.');
  if (dot <= 0) return undefined;
  const ext = base.slice(dot + 1).toLowerCase();
  // Own keys only: a file named `x.constructor` must not find Object.prototype.constructor.
  return Object.hasOwn(BY_EXTENSION, ext) ? BY_EXTENSION[ext] : undefined;
}
