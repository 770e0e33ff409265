/**
 * A module of lib/ or core/ that the library's own code imports values from (the layers the middlewares call
 * into on every request) keeps its CommonJS exports object in V8's fast mode: it re-exports nothing (`export … from`, `export *`, or `export { x }` of an imported `x`). In the CommonJS build a
 * re-export is a getter defined over a data property, which turns the whole exports object into a dictionary;
 * every call into the module through it is then a generic property load the optimizing compiler cannot fold, so
 * it cannot inline the callee either. See docs/performance.md#fast-exports.
 *
 * Entry points that only applications import (index.ts, the subpaths' index files) and the middlewares' and
 * handlers' own modules, which the library imports at construction, are not checked.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import v8 from 'node:v8';
import ts from 'typescript';

const ROOT = join(__dirname, '..', '..');
const FOLDERS = ['lib', 'core', 'middleware', 'handlers'];

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sources(path));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

/** Whether an import or export clause brings in a value (not only types). */
function bringsValue(
  clause: ts.ImportClause | ts.NamedExports | undefined,
  isTypeOnly: boolean,
  isExport: boolean,
): boolean {
  if (isTypeOnly) return false;
  if (clause === undefined) return isExport; // `export * from` (a bare `import 'x'` runs it: not a value read)
  if (ts.isNamedExports(clause)) return clause.elements.some((e) => !e.isTypeOnly);
  if (clause.name !== undefined) return true;
  const bindings = clause.namedBindings;
  if (bindings === undefined) return false;
  if (ts.isNamespaceImport(bindings)) return true;
  return bindings.elements.some((e) => !e.isTypeOnly);
}

/** The modules of lib/ and core/ that library modules read values from, relative to the root. */
function importedModules(): Set<string> {
  const found = new Set<string>();
  for (const path of FOLDERS.flatMap((f) => sources(join(ROOT, f)))) {
    const file = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, false);
    for (const s of file.statements) {
      let spec: ts.Expression | undefined;
      let value = false;
      if (ts.isImportDeclaration(s)) {
        spec = s.moduleSpecifier;
        value = bringsValue(s.importClause, s.importClause?.isTypeOnly ?? false, false);
      } else if (ts.isExportDeclaration(s) && s.moduleSpecifier !== undefined) {
        spec = s.moduleSpecifier;
        value = bringsValue(s.exportClause as ts.NamedExports | undefined, s.isTypeOnly, true);
      }
      if (!value || spec === undefined || !ts.isStringLiteral(spec) || !spec.text.startsWith('.')) continue;
      const target = resolve(dirname(path), spec.text.replace(/\.js$/, '.ts'));
      const rel = relative(ROOT, target).split('\\').join('/');
      if (rel.startsWith('lib/') || rel.startsWith('core/')) found.add(rel);
    }
  }
  return found;
}

v8.setFlagsFromString('--allow-natives-syntax');
const hasFastProperties = new Function('o', 'return %HasFastProperties(o)') as (o: object) => boolean;

describe('the modules the library calls into keep fast exports objects', () => {
  const modules = [...importedModules()].sort();

  test('the scan finds the parse step, the body reader and lib modules', () => {
    expect(modules).toEqual(
      expect.arrayContaining(['core/parse-step.ts', 'core/body.ts', 'lib/jsonrpc.ts', 'lib/redact/index.ts']),
    );
  });

  test.each(modules)('%s', (m) => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- each module's own exports object
    const exportsObject = require(join(ROOT, m)) as object;
    expect(hasFastProperties(exportsObject)).toBe(true);
  });
});
