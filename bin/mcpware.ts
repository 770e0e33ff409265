#!/usr/bin/env node
/**
 * The `mcpware` command.
 *
 *   npx mcpware new-key [--user <id> [--groups a,b]]
 *   npx mcpware hash-key [key] [--user <id> [--groups a,b]]
 *   npx mcpware --version | --help
 *
 * `new-key` makes a random key and prints it with its hash: the key goes to the client, the hash to the
 * configuration. `hash-key` reads a key (the argument, or standard input when there is none) and prints the line
 * to put in the configuration: `sha256:<hex>`, or with `--user` the `MCP_API_KEYS` entry `user:sha256:<hex>[:a|b]`.
 * Prefer standard input: an argument lands in the shell history and in the process list.
 *
 * @see docs/middleware/api-key-auth.md
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { hashKey } from '../lib/apikeys.js';
import { closest } from '../core/options.js';

export interface Io {
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

const USAGE = `Usage:
  mcpware new-key [--user <id> [--groups <g1,g2>]]
  mcpware hash-key [key] [--user <id> [--groups <g1,g2>]]
  mcpware --version
  mcpware --help

  new-key   Makes a random API key (32 random bytes, base64url) and prints it
            with its hash. Give the key to the client (Authorization: Bearer
            <key>); keep only the hash in the configuration. With --user it
            also prints the MCP_API_KEYS entry: <id>:sha256:<hex>[:g1|g2].

  hash-key  Prints the SHA-256 of an API key as the configuration wants it:
            sha256:<hex>. Without [key] the key is read from standard input
            (preferred: an argument ends up in the shell history). With --user
            it prints an MCP_API_KEYS entry instead: <id>:sha256:<hex>[:g1|g2].

  npx mcpware new-key --user alice
  printf %s "$KEY" | npx mcpware hash-key --user alice --groups admins
`;

/**
 * The version of the installed package: the nearest package.json named mcpware above this file (the source
 * tree and the installed dist/cjs/bin both find it).
 */
export function packageVersion(from: string = __dirname): string | undefined {
  for (let dir = from; ; dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      try {
        const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown; version?: unknown };
        if (pkg.name === 'mcpware' && typeof pkg.version === 'string') return pkg.version;
      } catch {
        // An unreadable package.json on the way up is not ours; keep looking.
      }
    }
    if (dirname(dir) === dir) return undefined;
  }
}

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

interface KeyArgs {
  key?: string;
  user?: string;
  groups?: string[];
  help?: boolean;
}

/** The arguments of `hash-key` and `new-key`, or the message saying what is wrong with them. */
function keyArgs(args: string[], takesKey: boolean): KeyArgs | string {
  const out: KeyArgs = {};
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--user' || a === '--groups') {
      const v = args[++i];
      if (v === undefined) return `${a} needs a value`;
      if (a === '--user') out.user = v;
      else out.groups = v.split(',').filter((g) => g !== '');
    } else if (a === '--help' || a === '-h') {
      out.help = true;
    } else if (a.startsWith('--')) {
      const near = closest(a.slice(2), ['user', 'groups', 'help']);
      return `unknown option ${a}${near === undefined ? '' : `; did you mean --${near}?`}`;
    } else if (!takesKey) {
      return `takes no key (it makes one); to hash a key of yours: mcpware hash-key`;
    } else if (out.key === undefined) {
      out.key = a;
    } else {
      return 'one key at a time';
    }
  }
  if (out.groups !== undefined && out.user === undefined) return '--groups needs --user';
  if (out.user !== undefined && !NAME.test(out.user)) {
    return '--user must be non-empty, without spaces, ":", "," or "|"';
  }
  if (out.groups !== undefined && (out.groups.length === 0 || !out.groups.every((g) => NAME.test(g)))) {
    return '--groups must list names without spaces, ":", "," or "|"';
  }
  return out;
}

/** The MCP_API_KEYS entry for a hash. */
function entry(hash: string, user: string, groups: readonly string[] | undefined): string {
  return `${user}:${hash}${groups ? ':' + groups.join('|') : ''}`;
}

async function hashKeyCommand(args: string[], io: Io): Promise<number> {
  const parsed = keyArgs(args, true);
  if (typeof parsed === 'string') {
    io.stderr.write(`mcpware hash-key: ${parsed}\n${parsed.startsWith('unknown option') ? USAGE : ''}`);
    return 2;
  }
  if (parsed.help) {
    io.stdout.write(USAGE);
    return 0;
  }
  let { key } = parsed;
  const { user, groups } = parsed;
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
  io.stdout.write(`${user === undefined ? hash : entry(hash, user, groups)}\n`);
  return 0;
}

/** `new-key`: a random key (32 bytes, base64url: visible ASCII a Bearer header carries) and its hash. */
function newKeyCommand(args: string[], io: Io): number {
  const parsed = keyArgs(args, false);
  if (typeof parsed === 'string') {
    io.stderr.write(`mcpware new-key: ${parsed}\n${parsed.startsWith('unknown option') ? USAGE : ''}`);
    return 2;
  }
  if (parsed.help) {
    io.stdout.write(USAGE);
    return 0;
  }
  const key = randomBytes(32).toString('base64url');
  const hash = hashKey(key);
  io.stdout.write(`key:  ${key}\nhash: ${hash}\n`);
  if (parsed.user !== undefined)
    io.stdout.write(`MCP_API_KEYS entry: ${entry(hash, parsed.user, parsed.groups)}\n`);
  io.stderr.write(
    'Give the key to the client (Authorization: Bearer <key>) and keep only the hash in the configuration.\n',
  );
  return 0;
}

/** Run the CLI; resolves to the exit code. */
export async function run(argv: readonly string[], io: Io): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'hash-key':
      return hashKeyCommand(rest, io);
    case 'new-key':
      return newKeyCommand(rest, io);
    case 'version':
    case '--version':
    case '-v':
    case '-V':
      io.stdout.write(`${packageVersion() ?? 'unknown'}\n`);
      return 0;
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      io.stdout.write(USAGE);
      return command === undefined ? 2 : 0;
    default: {
      const near = closest(command.replace(/^--?/, ''), ['hash-key', 'new-key', 'version', 'help']);
      const hint = near === undefined ? '' : `; did you mean ${command.startsWith('-') ? '--' : ''}${near}?`;
      io.stderr.write(`mcpware: unknown command ${JSON.stringify(command)}${hint}\n${USAGE}`);
      return 2;
    }
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
