#!/usr/bin/env node
/**
 * The `mcpware` command.
 *
 *   npx mcpware hash-key [key] [--user <id> [--groups a,b]]
 *
 * `hash-key` reads a key (the argument, or standard input when there is none) and prints the line to put in
 * the configuration: `sha256:<hex>`, or with `--user` the `MCP_API_KEYS` entry `user:sha256:<hex>[:a|b]`.
 * Prefer standard input: an argument lands in the shell history and in the process list.
 *
 * @see docs/middleware/api-key-auth.md
 */
import { createInterface } from 'node:readline';
import { hashKey } from '../lib/apikeys.js';
import { closest } from '../middleware/internal/options.js';

export interface Io {
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

const USAGE = `Usage:
  mcpware hash-key [key] [--user <id> [--groups <g1,g2>]]

  Prints the SHA-256 of an API key as the configuration wants it: sha256:<hex>.
  Without [key] the key is read from standard input (preferred: an argument
  ends up in the shell history). With --user it prints an MCP_API_KEYS entry
  instead: <id>:sha256:<hex>[:g1|g2].

  printf %s "$KEY" | npx mcpware hash-key --user alice --groups admins
`;

/** The most a key read from standard input may be. */
const MAX_KEY = 16 * 1024;

/** Read the key from standard input: one line from a terminal, everything (minus a final newline) from a pipe. */
async function readKey(io: Io): Promise<string> {
  if (io.stdin.isTTY) {
    io.stderr.write('Key (input is shown; press Enter): ');
    const rl = createInterface({ input: io.stdin, terminal: false });
    try {
      for await (const line of rl) return line;
      return '';
    } finally {
      rl.close();
    }
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of io.stdin) {
    const b = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    size += b.length;
    if (size > MAX_KEY) throw new Error(`the key on standard input is longer than ${MAX_KEY} bytes`);
    chunks.push(b);
  }
  let text = Buffer.concat(chunks).toString('utf8');
  if (text.endsWith('\n')) text = text.slice(0, -1);
  if (text.endsWith('\r')) text = text.slice(0, -1);
  return text;
}

/** True when every character can travel in `Authorization: Bearer <key>` (visible ASCII, no spaces). */
function sendable(key: string): boolean {
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    if (c < 0x21 || c > 0x7e) return false;
  }
  return true;
}

const NAME = /^[^\s:,|]{1,256}$/;

async function hashKeyCommand(args: string[], io: Io): Promise<number> {
  let key: string | undefined;
  let user: string | undefined;
  let groups: string[] | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--user' || a === '--groups') {
      const v = args[++i];
      if (v === undefined) {
        io.stderr.write(`mcpware hash-key: ${a} needs a value\n`);
        return 2;
      }
      if (a === '--user') user = v;
      else groups = v.split(',').filter((g) => g !== '');
    } else if (a === '--help' || a === '-h') {
      io.stdout.write(USAGE);
      return 0;
    } else if (a.startsWith('--')) {
      const near = closest(a.slice(2), ['user', 'groups', 'help']);
      const hint = near === undefined ? '' : `; did you mean --${near}?`;
      io.stderr.write(`mcpware hash-key: unknown option ${a}${hint}\n${USAGE}`);
      return 2;
    } else if (key === undefined) {
      key = a;
    } else {
      io.stderr.write(`mcpware hash-key: one key at a time\n`);
      return 2;
    }
  }
  if (groups !== undefined && user === undefined) {
    io.stderr.write('mcpware hash-key: --groups needs --user\n');
    return 2;
  }
  if (user !== undefined && !NAME.test(user)) {
    io.stderr.write('mcpware hash-key: --user must be non-empty, without spaces, ":", "," or "|"\n');
    return 2;
  }
  if (groups !== undefined && (groups.length === 0 || !groups.every((g) => NAME.test(g)))) {
    io.stderr.write('mcpware hash-key: --groups must list names without spaces, ":", "," or "|"\n');
    return 2;
  }
  if (key === undefined) {
    try {
      key = await readKey(io);
    } catch (err) {
      io.stderr.write(`mcpware hash-key: ${err instanceof Error ? err.message : String(err)}\n`);
      return 2;
    }
  }
  if (key === '') {
    io.stderr.write('mcpware hash-key: the key is empty\n');
    return 2;
  }
  if (!sendable(key)) {
    io.stderr.write(
      'mcpware hash-key: the key holds spaces or characters outside visible ASCII, which an Authorization: Bearer header cannot carry\n',
    );
    return 2;
  }
  if (key.length < 16)
    io.stderr.write(
      `mcpware hash-key: warning: a ${key.length}-character key is easy to guess; use 32 random bytes or more\n`,
    );
  const hash = hashKey(key);
  if (user === undefined) io.stdout.write(`${hash}\n`);
  else io.stdout.write(`${user}:${hash}${groups ? ':' + groups.join('|') : ''}\n`);
  return 0;
}

/** Run the CLI; resolves to the exit code. */
export async function run(argv: readonly string[], io: Io): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'hash-key':
      return hashKeyCommand(rest, io);
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      io.stdout.write(USAGE);
      return command === undefined ? 2 : 0;
    default:
      io.stderr.write(`mcpware: unknown command ${JSON.stringify(command)}\n${USAGE}`);
      return 2;
  }
}

if (require.main === module) {
  run(process.argv.slice(2), process).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(`mcpware: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
