/**
 * lib/ is pure: a module keeps no working memory of its own between calls. No module-level `let` or `var`, and
 * no module-level container made empty to be filled later (`[]`, `{}`, `new Map()`, `new Set()`, `new Array()`);
 * constant tables built whole at load are fine, and so are WeakMaps and WeakSets (they keep no key alive).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

const ROOT = join(__dirname, '..', '..');

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sources(path));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

/** Whether an initializer makes an empty container. */
function emptyContainer(init: ts.Expression | undefined): boolean {
  if (init === undefined) return false;
  while (ts.isAsExpression(init) || ts.isSatisfiesExpression(init) || ts.isParenthesizedExpression(init))
    init = init.expression;
  if (ts.isArrayLiteralExpression(init)) return init.elements.length === 0;
  if (ts.isObjectLiteralExpression(init)) return init.properties.length === 0;
  if (ts.isNewExpression(init) && ts.isIdentifier(init.expression))
    return ['Map', 'Set', 'Array'].includes(init.expression.text) && (init.arguments ?? []).length === 0;
  return false;
}

/** The module-level declarations of a file that hold state between calls, as `file:line name`. */
function moduleState(path: string): string[] {
  const file = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  for (const statement of file.statements) {
    if (!ts.isVariableStatement(statement)) continue;
    const list = statement.declarationList;
    const mutable = (list.flags & (ts.NodeFlags.Let | ts.NodeFlags.Const)) !== ts.NodeFlags.Const;
    for (const d of list.declarations) {
      if (!mutable && !emptyContainer(d.initializer)) continue;
      const line = file.getLineAndCharacterOfPosition(d.getStart()).line + 1;
      found.push(`${relative(ROOT, path)}:${line} ${d.name.getText()}`);
    }
  }
  return found;
}

describe('lib/ keeps no module-level working memory', () => {
  it('no module-level let/var or empty container in lib/', () => {
    expect(sources(join(ROOT, 'lib')).flatMap(moduleState)).toEqual([]);
  });

  it('the check sees such a declaration', () => {
    const probe = join(ROOT, 'test', 'contracts', 'lib-state.test.ts');
    // This file's own ROOT is a module-level const holding a string: not state.
    expect(moduleState(probe)).toEqual([]);
    expect(emptyContainer(ts.factory.createArrayLiteralExpression([]))).toBe(true);
    expect(
      emptyContainer(ts.factory.createNewExpression(ts.factory.createIdentifier('Map'), undefined, [])),
    ).toBe(true);
    expect(
      emptyContainer(ts.factory.createNewExpression(ts.factory.createIdentifier('WeakMap'), undefined, [])),
    ).toBe(false);
  });
});
