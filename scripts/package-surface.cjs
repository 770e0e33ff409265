/**
 * The package's public surface as the docs check and the contract tests read it: each entry point of
 * package.json's `exports` mapped to the source file its types are built from, and the names each one exports
 * (values and types alike), read with TypeScript's checker. One definition, so the docs check and the tests
 * can never disagree on what is public.
 */
'use strict';
const fs = require('node:fs');
const path = require('node:path');

/** package.json's export key (`.`, `./lib`, …) → the absolute path of the source file its types come from. */
function entryPoints(root) {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  const out = new Map();
  for (const [key, target] of Object.entries(pkg.exports)) {
    if (typeof target === 'string') continue;
    const types = target.require?.types ?? target.import?.types ?? target.types;
    const source = types.replace(/^\.\/dist\/[^/]+\//, '').replace(/\.d\.ts$/, '.ts');
    out.set(key, path.join(root, source));
  }
  return out;
}

/** The import specifier of an export key: `.` → `mcpware`, `./lib` → `mcpware/lib`. */
function specifierOf(key, name = 'mcpware') {
  return key === '.' ? name : `${name}/${key.slice(2)}`;
}

/** Export key → the names it exports, sorted. Throws when an entry point is missing from the program. */
function exportedNames(ts, entries) {
  const program = ts.createProgram([...entries.values()], {
    module: ts.ModuleKind.Node16,
    moduleResolution: ts.ModuleResolutionKind.Node16,
    target: ts.ScriptTarget.ES2022,
    strict: true,
    skipLibCheck: true,
    noEmit: true,
    types: ['node'],
  });
  const checker = program.getTypeChecker();
  const out = new Map();
  for (const [key, file] of entries) {
    const source = program.getSourceFile(file);
    if (!source) throw new Error(`${key}: ${file} is not in the program`);
    const symbol = checker.getSymbolAtLocation(source);
    out.set(
      key,
      symbol
        ? checker
            .getExportsOfModule(symbol)
            .map((s) => s.name)
            .sort()
        : [],
    );
  }
  return out;
}

module.exports = { entryPoints, exportedNames, specifierOf };
