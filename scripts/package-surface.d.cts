import type ts from 'typescript';

/** package.json's export key (`.`, `./lib`, …) → the absolute path of the source file its types come from. */
export function entryPoints(root: string): Map<string, string>;
/** The import specifier of an export key: `.` → `mcpware`, `./lib` → `mcpware/lib`. */
export function specifierOf(key: string, name?: string): string;
/** Export key → the names it exports, sorted. */
export function exportedNames(typescript: typeof ts, entries: Map<string, string>): Map<string, string[]>;
