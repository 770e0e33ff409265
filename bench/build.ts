/**
 * Compile what the benchmark runs (index.ts, lib/, core/, middleware/, handlers/ and bench/) to CommonJS JavaScript
 * under node_modules/.cache/mcpware-bench/build, file by file with TypeScript's own transpiler and the same
 * target as `dist/cjs`.
 *
 * Not tsx: its loader adds memory and start-up work to every server process, which the measurements would
 * count. Not dist/: it may be older than the source being measured. The output is what
 * `tsc -p tsconfig.build.json` emits for the same files (no type checking: `npm run typecheck` does that), so
 * the servers run the library exactly as a user's `require('mcpware')` would.
 */
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

export const ROOT = path.resolve(__dirname, '..');

export const OUT = path.join(ROOT, 'bench', '.out');
/** The committed results of a full run (generated: bench/report.ts). */
export const RESULTS_FILE = path.join(ROOT, 'bench', 'results', 'RESULTS.md');
/** Under node_modules/.cache: ignored by git, eslint, prettier and tsc, and node_modules resolves from it. */
export const CACHE = path.join(ROOT, 'node_modules', '.cache', 'mcpware-bench');
export const BUILD = path.join(CACHE, 'build');

const SOURCES = ['index.ts', 'lib', 'core', 'middleware', 'handlers', 'bench'];

function walk(p: string, out: string[]): void {
  const st = fs.statSync(p);
  if (st.isDirectory()) {
    for (const e of fs.readdirSync(p)) {
      if (e.startsWith('.') || e === 'node_modules') continue;
      walk(path.join(p, e), out);
    }
  } else if (p.endsWith('.ts') && !p.endsWith('.d.ts')) out.push(p);
}

/**
 * Transpile every source file; returns the number of files written. `src` is where the library's source is
 * read from (default: this checkout; bench/ab.ts passes a copy holding a change to try), `out` where it goes.
 */
export function build(src: string = ROOT, out: string = BUILD): number {
  const files: string[] = [];
  for (const s of SOURCES) {
    const dir = path.join(s === 'bench' ? ROOT : src, s);
    // A tree of an older layout may lack a folder (core/); the servers' imports decide whether it can run.
    if (fs.existsSync(dir)) walk(dir, files);
  }
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.CommonJS,
    esModuleInterop: true,
    sourceMap: false,
  };
  for (const file of files) {
    const rel = path.relative(file.startsWith(path.join(ROOT, 'bench') + path.sep) ? ROOT : src, file);
    const target = path.join(out, rel.replace(/\.ts$/, '.js'));
    const { outputText } = ts.transpileModule(fs.readFileSync(file, 'utf8'), {
      compilerOptions: options,
      fileName: file,
    });
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, outputText);
  }
  return files.length;
}

/** A library module the benchmark servers import, and whether a source tree has it. */
export interface ServerImport {
  /** The server module that imports it (`bench/servers/stack.ts`). */
  from: string;
  /** The library source file, relative to the tree (`middleware/dispatch/index.ts`). */
  module: string;
}

/**
 * The library modules the benchmark servers (bench/servers/*.ts of this checkout) import by path that `src` does
 * not hold: a tree of another layout cannot be built with this checkout's servers, and is benchmarked with its
 * own bench/ instead. With `servers` (the scripts' names, e.g. `mcpware-node`), only what those servers load:
 * their own imports and those of the bench/servers modules they import, so that a tree older than a server
 * (one without `middleware/otel/`) can still run the servers it has everything for.
 */
export function missingImports(src: string, servers?: readonly string[]): ServerImport[] {
  const dir = path.join(ROOT, 'bench', 'servers');
  const files = servers
    ? servers.map((s) => `${s}.ts`)
    : fs
        .readdirSync(dir)
        .filter((x) => x.endsWith('.ts'))
        .sort();
  const out: ServerImport[] = [];
  const seen = new Set<string>();
  for (let i = 0; i < files.length; i++) {
    const f = files[i]!;
    if (seen.has(f)) continue;
    seen.add(f);
    const text = fs.readFileSync(path.join(dir, f), 'utf8');
    for (const m of text.matchAll(/from '(\.\.\/\.\.\/[^']+)\.js'/g)) {
      const module = path.posix.normalize(path.posix.join('bench/servers', m[1]!)) + '.ts';
      if (!fs.existsSync(path.join(src, module))) out.push({ from: `bench/servers/${f}`, module });
    }
    // A server's own helpers (./stack.js): what they import is loaded with it.
    if (servers) for (const m of text.matchAll(/from '\.\/([^'/]+)\.js'/g)) files.push(`${m[1]}.ts`);
  }
  return out;
}

if (require.main === module) {
  const n = build();
  process.stdout.write(`compiled ${n} files to ${path.relative(ROOT, BUILD)}\n`);
}
