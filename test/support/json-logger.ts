/**
 * A real winston logger with the JSON format, writing each line to an array, and the checks that a line carries
 * no forgery material: used by the log() unit tests and the HTTP log-forgery tests.
 */
import { Writable } from 'node:stream';
import winston from 'winston';

/** Forgery material: C1 (NEL, CSI), bidi override and isolate, line and paragraph separators, ESC and CR/LF. */
export const FORGERY = [
  '\u0085',
  '\u009b',
  '\u202e',
  '\u2066',
  '\u2028',
  '\u2029',
  '\u001b[31m',
  '\r\n',
  '\u061c',
];
/** All of {@link FORGERY} in one string. */
export const FORGED = FORGERY.join('');
/** Code points no sanitized string keeps, raw or escaped: controls, bidi controls, line separators. */
export const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/u;
/** Code points JSON.stringify leaves raw, so a JSON log line carries them as they are. */
export const RAW_IN_JSON = /[\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/u;

export interface JsonLogger {
  logger: winston.Logger;
  /** Each line written, its newline included. */
  lines: string[];
  /** The parsed records whose message starts with `prefix`. */
  records(prefix: string): Record<string, unknown>[];
}

export function jsonLogger(): JsonLogger {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(chunk.toString('utf8'));
      cb();
    },
  });
  const logger = winston.createLogger({
    level: 'debug',
    format: winston.format.json(),
    transports: [new winston.transports.Stream({ stream })],
  });
  const records = (prefix: string) =>
    lines
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((r) => typeof r.message === 'string' && r.message.startsWith(prefix));
  return { logger, lines, records };
}

/** Every string (keys included) of a parsed record. */
export function strings(v: unknown, out: string[] = []): string[] {
  if (typeof v === 'string') out.push(v);
  else if (Array.isArray(v)) for (const x of v) strings(x, out);
  else if (v !== null && typeof v === 'object')
    for (const [k, x] of Object.entries(v)) {
      out.push(k);
      strings(x, out);
    }
  return out;
}

/** The first string in `v` that a sanitized log line cannot hold (raw in the line, or once parsed), if any. */
export function forgedIn(line: string): string | undefined {
  const text = line.endsWith('\n') ? line.slice(0, -1) : line;
  if (RAW_IN_JSON.test(text) || /[\r\n]/.test(text)) return text;
  return strings(JSON.parse(text)).find((s) => UNSAFE.test(s));
}
