/**
 * The content codings the parse step reads: `gzip` (and its alias `x-gzip`), `deflate` (zlib format, as RFC 9110
 * §8.4.1.2 defines it) and `br`, decoded with node:zlib under the body limit; `identity` is the plain body. Any
 * other coding, and two codings stacked, are refused (415) rather than parsed as if plain.
 */
import { constants } from 'node:buffer';
import zlib from 'node:zlib';
import { type Refusal, refusal } from '../lib/errors.js';

export type BodyCoding = 'identity' | 'gzip' | 'deflate' | 'br';

/** The codings decoded, as the `Accept-Encoding` of a 415 names them (RFC 9110 §15.5.16). */
export const ACCEPTED_CODINGS = 'gzip, deflate, br';

const CODINGS: ReadonlyMap<string, BodyCoding> = new Map([
  ['identity', 'identity'],
  ['gzip', 'gzip'],
  ['x-gzip', 'gzip'],
  ['deflate', 'deflate'],
  ['br', 'br'],
]);

/**
 * The coding a `Content-Encoding` value names. Node joins several header lines with `", "`, so a list is what
 * arrives either way; `identity` and empty list members change nothing, one other known coding is decoded, and
 * anything else (an unknown coding, two codings stacked) is a refusal.
 */
export function bodyCoding(header: string | undefined): BodyCoding | Refusal {
  if (header === undefined) return 'identity';
  let found: BodyCoding = 'identity';
  for (const member of header.split(',')) {
    const name = member.trim().toLowerCase();
    if (name === '' || name === 'identity') continue;
    const coding = CODINGS.get(name);
    if (coding === undefined || found !== 'identity') return refusal('unsupported_encoding');
    found = coding;
  }
  return found;
}

function tooLarge(limit: number): Refusal {
  return refusal('body_too_large', { message: `Request body exceeds ${limit} bytes once decoded` });
}

/**
 * Decode a body under `limit`: zlib stops inflating as soon as its output passes `maxOutputLength`, so a small
 * body that would inflate far past the limit costs no more than the limit. A body that is not in the coding it
 * names is a parse error: it is not read as plain bytes.
 */
export function decodeBody(
  raw: Buffer,
  coding: Exclude<BodyCoding, 'identity'>,
  limit: number,
  cb: (v: Buffer | Refusal) => void,
): void {
  const done = (err: Error | null, out: Buffer): void => {
    if (!err) return cb(out);
    if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') return cb(tooLarge(limit));
    cb(refusal('parse_error', { message: `Parse error: the body is not valid ${coding}` }));
  };
  const opts = { maxOutputLength: Math.min(limit, constants.MAX_LENGTH) };
  if (coding === 'gzip') zlib.gunzip(raw, opts, done);
  else if (coding === 'deflate') zlib.inflate(raw, opts, done);
  else zlib.brotliDecompress(raw, opts, done);
}
