/**
 * The public surface: every entry point in package.json's `exports` exports exactly the names listed in
 * public-surface.json, values and types alike (read with TypeScript's checker from the source the entry point is
 * built from). A new, renamed or removed public name is then a reviewed change of that file:
 * `UPDATE_SURFACE=1 npx jest test/contracts/public-surface` rewrites it.
 */
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const root = path.resolve(__dirname, '../..');
const listFile = path.join(__dirname, 'public-surface.json');

interface ExportTarget {
  require: { types: string };
}

function entryPoints(): Record<string, string> {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as {
    exports: Record<string, ExportTarget | string>;
  };
  const out: Record<string, string> = {};
  for (const [key, target] of Object.entries(pkg.exports)) {
    if (typeof target === 'string') continue;
    const source = target.require.types.replace('./dist/cjs/', '').replace(/\.d\.ts$/, '.ts');
    out[key] = path.join(root, source);
  }
  return out;
}

function exportedNames(entries: Record<string, string>): Record<string, string[]> {
  const program = ts.createProgram(Object.values(entries), {
    module: ts.ModuleKind.Node16,
    moduleResolution: ts.ModuleResolutionKind.Node16,
    target: ts.ScriptTarget.ES2022,
    strict: true,
    skipLibCheck: true,
    noEmit: true,
    types: ['node'],
  });
  const checker = program.getTypeChecker();
  const out: Record<string, string[]> = {};
  for (const [key, file] of Object.entries(entries)) {
    const source = program.getSourceFile(file);
    if (!source) throw new Error(`${key}: ${file} is not in the program`);
    const symbol = checker.getSymbolAtLocation(source);
    out[key] = symbol
      ? checker
          .getExportsOfModule(symbol)
          .map((s) => s.name)
          .sort()
      : [];
  }
  return out;
}

describe('public surface', () => {
  const entries = entryPoints();
  const actual = exportedNames(entries);

  if (process.env.UPDATE_SURFACE) fs.writeFileSync(listFile, JSON.stringify(actual, null, 2) + '\n');
  const expected = JSON.parse(fs.readFileSync(listFile, 'utf8')) as Record<string, string[]>;

  it('has the same entry points as the list', () => {
    expect(Object.keys(actual).sort()).toEqual(Object.keys(expected).sort());
  });

  it.each(Object.keys(entries))('%s exports exactly the listed names', (key) => {
    expect(actual[key]).toEqual(expected[key]);
  });

  it('keeps internals out of every entry point', () => {
    const internals = ['clip', 'badOption', 'HANDLER_FAST', 'sendJson', 'sendError', 'sendInternalError'];
    for (const [key, names] of Object.entries(actual)) {
      for (const name of internals)
        expect({ key, exported: names.includes(name) }).toEqual({ key, exported: false });
    }
  });
});
