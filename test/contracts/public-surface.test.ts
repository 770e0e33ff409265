/**
 * The public surface: every entry point in package.json's `exports` exports exactly the names listed in
 * public-surface.json, values and types alike (read with TypeScript's checker from the source the entry point is
 * built from). A new, renamed or removed public name is then a reviewed change of that file:
 * `UPDATE_SURFACE=1 npx jest test/contracts/public-surface` rewrites it.
 */
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { entryPoints, exportedNames } from '../../scripts/package-surface.cjs';

const root = path.resolve(__dirname, '../..');
const listFile = path.join(__dirname, 'public-surface.json');

describe('public surface', () => {
  const entries = entryPoints(root);
  const actual = Object.fromEntries(exportedNames(ts, entries));

  if (process.env.UPDATE_SURFACE) fs.writeFileSync(listFile, JSON.stringify(actual, null, 2) + '\n');
  const expected = JSON.parse(fs.readFileSync(listFile, 'utf8')) as Record<string, string[]>;

  it('has the same entry points as the list', () => {
    expect(Object.keys(actual).sort()).toEqual(Object.keys(expected).sort());
  });

  it.each([...entries.keys()])('%s exports exactly the listed names', (key) => {
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
