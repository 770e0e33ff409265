/**
 * TSDoc on the public surface: every function and class that an entry point in package.json's `exports` exports
 * has a TSDoc comment on its declaration with a description and an `@example`, so that an editor shows both on
 * hover. The examples compile: each `@example` is type-checked as an ES module of its own, as
 * scripts/docs-check.mjs type-checks the ```ts blocks of the docs (`mcpware` and `mcpware/*` mapped to the
 * source, the shared placeholders of docs/snippet-globals.d.ts declared).
 *
 * The pure functions of `mcpware/lib` that still have no example are listed in tsdoc-pending.json; the list
 * only shrinks: a listed function that gets its example must leave the list, and nothing else may join it
 * (a listed name that is no longer exported is passed over).
 */
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { entryPoints, specifierOf } from '../../scripts/package-surface.cjs';

const root = path.resolve(__dirname, '../..');
const pendingFile = path.join(__dirname, 'tsdoc-pending.json');

/** `mcpware` and `mcpware/*` → the source file, as the docs snippets resolve them. */
function pathsFor(entries: Map<string, string>): Record<string, string[]> {
  const paths: Record<string, string[]> = {};
  for (const [key, file] of entries) paths[specifierOf(key)] = [file];
  return paths;
}

interface Declaration {
  /** `entry: name (file:line)`, for messages. */
  where: string;
  /** `entry:name`, as tsdoc-pending.json lists it. */
  id: string;
  entry: string;
  node: ts.FunctionDeclaration | ts.ClassDeclaration;
}

/** Every exported function and class, once per declaration (the first entry point that exports it names it). */
function publicDeclarations(program: ts.Program, entries: Map<string, string>): Declaration[] {
  const checker = program.getTypeChecker();
  const seen = new Set<ts.Node>();
  const out: Declaration[] = [];
  for (const [entry, file] of entries) {
    const source = program.getSourceFile(file);
    const module = source && checker.getSymbolAtLocation(source);
    if (!module) throw new Error(`${entry}: ${file} is not a module of the program`);
    for (const exported of checker.getExportsOfModule(module)) {
      const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      for (const node of symbol.declarations ?? []) {
        if (!ts.isFunctionDeclaration(node) && !ts.isClassDeclaration(node)) continue;
        // An overloaded function is documented on its first signature.
        if (ts.isFunctionDeclaration(node) && node !== symbol.declarations?.find(ts.isFunctionDeclaration))
          continue;
        if (seen.has(node)) continue;
        seen.add(node);
        const sf = node.getSourceFile();
        const line = sf.getLineAndCharacterOfPosition(node.getStart()).line + 1;
        out.push({
          where: `${entry}: ${exported.name} (${path.relative(root, sf.fileName)}:${line})`,
          id: `${entry}:${exported.name}`,
          entry,
          node,
        });
      }
    }
  }
  return out;
}

/** The description of the declaration's own TSDoc comment, empty without one. */
function descriptionOf(node: ts.Node): string {
  const docs = ts.getJSDocCommentsAndTags(node).filter(ts.isJSDoc);
  return docs
    .map((d) => ts.getTextOfJSDocComment(d.comment) ?? '')
    .join('\n')
    .trim();
}

/** The code of each `@example`, its ``` fences dropped. */
function examplesOf(node: ts.Node): string[] {
  return ts
    .getJSDocTags(node)
    .filter((tag) => tag.tagName.text === 'example')
    .map((tag) =>
      (ts.getTextOfJSDocComment(tag.comment) ?? '')
        .split('\n')
        .filter((line) => !/^\s*```/.test(line))
        .join('\n')
        .trim(),
    );
}

const entries = entryPoints(root);
fs.mkdirSync(path.join(root, '.tmp'), { recursive: true });
const workDir = fs.mkdtempSync(path.join(root, '.tmp', 'tsdoc-'));

afterAll(() => fs.rmSync(workDir, { recursive: true, force: true }));

/** The program of the entry points, then the same program with every example written beside it. */
function compileExamples(declarations: Declaration[], base: ts.Program) {
  const origin = new Map<string, string>();
  declarations.forEach((d, i) => {
    examplesOf(d.node).forEach((code, j) => {
      const file = path.join(workDir, `example_${i}_${j}.mts`);
      fs.writeFileSync(file, `${code}\nexport {};\n`);
      origin.set(file, `${d.where} @example ${j + 1}`);
    });
  });
  const program = ts.createProgram({
    rootNames: [...origin.keys(), path.join(root, 'docs', 'snippet-globals.d.ts')],
    options: exampleOptions(),
    oldProgram: base,
  });
  const problems: string[] = [];
  for (const [file, where] of origin) {
    const sf = program.getSourceFile(file);
    for (const d of ts.getPreEmitDiagnostics(program, sf)) {
      const line =
        d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line + 1 : 0;
      problems.push(`${where}, line ${line}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
    }
  }
  return { count: origin.size, problems };
}

/** The compiler options of the docs snippets (scripts/docs-check.mjs). */
function exampleOptions(): ts.CompilerOptions {
  return {
    target: ts.ScriptTarget.ES2022,
    lib: ['lib.es2023.d.ts', 'lib.es2024.string.d.ts'],
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    noUncheckedIndexedAccess: true,
    noImplicitOverride: true,
    esModuleInterop: true,
    skipLibCheck: true,
    noEmit: true,
    types: ['node', 'jest'],
    typeRoots: [path.join(root, 'node_modules', '@types')],
    paths: pathsFor(entries),
  };
}

describe('TSDoc of the public surface', () => {
  const program = ts.createProgram({ rootNames: [...entries.values()], options: exampleOptions() });
  const declarations = publicDeclarations(program, entries);
  const pending = new Set(JSON.parse(fs.readFileSync(pendingFile, 'utf8')) as string[]);

  it('finds the functions and classes of every entry point', () => {
    expect(declarations.map((d) => d.id)).toEqual(
      expect.arrayContaining(['.:mcpEndpoint', '.:dispatch', '.:ToolRegistry', './testing:McpTestClient']),
    );
  });

  it('gives every exported function and class a description', () => {
    const missing = declarations.filter((d) => descriptionOf(d.node) === '').map((d) => d.where);
    expect(missing).toEqual([]);
  });

  it('gives every exported function and class an @example (but the listed pure functions)', () => {
    const missing = declarations
      .filter((d) => !pending.has(d.id) && examplesOf(d.node).every((code) => code === ''))
      .map((d) => d.where);
    expect(missing).toEqual([]);
  });

  it('lists as pending only lib functions that still have no @example', () => {
    const byId = new Map(declarations.map((d) => [d.id, d]));
    const stale = [...pending].filter((id) => {
      // A name mcpware/lib no longer exports is passed over: it may leave the list with the export.
      const d = byId.get(id);
      return d !== undefined && (d.entry !== './lib' || examplesOf(d.node).length > 0);
    });
    expect(stale).toEqual([]);
  });

  it('compiles every @example', () => {
    const { count, problems } = compileExamples(declarations, program);
    expect(problems).toEqual([]);
    expect(count).toBeGreaterThan(0);
  });
});
