/**
 * Reading the catalogue folder: the walk (regular files only, hidden entries and links skipped, bounded in depth
 * and count) and the bounded read of one file.
 *
 * @see docs/handlers/catalogue.md
 */
import { constants as fsConstants } from 'node:fs';
import { open, readdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { CatalogueConfig } from './options.js';
import { CatalogueError } from './types.js';

/** Regular files under `root`, relative paths with `/`, in lexical order; hidden entries and links skipped. */
export async function walk(root: string, r: CatalogueConfig): Promise<string[]> {
  const out: string[] = [];
  async function visit(rel: string, depth: number): Promise<void> {
    const dirents = await readdir(rel === '' ? root : join(root, rel), { withFileTypes: true });
    // Code-unit order, not locale order: the same on every machine.
    dirents.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const d of dirents) {
      if (d.name.startsWith('.')) continue;
      const childRel = rel === '' ? d.name : `${rel}/${d.name}`;
      if (d.isDirectory()) {
        if (depth >= r.maxDepth)
          throw new CatalogueError(`catalogue: "${childRel}" is nested deeper than ${r.maxDepth} folders`, [
            childRel,
          ]);
        await visit(childRel, depth + 1);
      } else if (d.isFile()) {
        if (out.length >= r.maxFiles)
          throw new CatalogueError(`catalogue: more than ${r.maxFiles} files`, [childRel]);
        out.push(childRel);
      }
      // Symbolic links, sockets, FIFOs and devices are skipped: a link could point outside the folder.
    }
  }
  try {
    await visit('', 0);
  } catch (err) {
    throw missingFolder(root, err) ?? err;
  }
  return out;
}

/**
 * The catalogue folder itself missing (or a file): an error naming the folder as given and as resolved from the
 * working directory, instead of a bare ENOENT; a relative path is the usual cause (the sample catalogue lives in
 * a clone of the repository, not in the installed package).
 */
function missingFolder(root: string, err: unknown): CatalogueError | undefined {
  const code = (err as { code?: unknown; path?: unknown } | null)?.code;
  const path = (err as { path?: unknown } | null)?.path;
  if ((code !== 'ENOENT' && code !== 'ENOTDIR') || path !== root) return undefined;
  const abs = resolve(root);
  return new CatalogueError(
    `catalogue: the folder "${root}" does not exist${abs === root ? '' : ` (resolved to ${abs} from the working directory ${process.cwd()})`}` +
      ': pass the path of a folder of markdown files',
    [],
  );
}

/** Read one file, refusing links (O_NOFOLLOW where the platform has it) and anything over the size bound. */
export async function readBounded(root: string, rel: string, max: number): Promise<Buffer> {
  const flags = fsConstants.O_RDONLY | (fsConstants.O_NOFOLLOW ?? 0);
  const fh = await open(join(root, ...rel.split('/')), flags);
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw new CatalogueError(`catalogue: "${rel}" is not a regular file`, [rel]);
    if (st.size > max)
      throw new CatalogueError(`catalogue: "${rel}" is ${st.size} bytes, over the ${max}-byte limit`, [rel]);
    // Read one byte more than allowed so a file that grew since stat() is caught too.
    const buf = Buffer.alloc(Math.min(st.size, max) + 1);
    let n = 0;
    for (;;) {
      const { bytesRead } = await fh.read(buf, n, buf.length - n, n);
      if (bytesRead === 0) break;
      n += bytesRead;
      if (n === buf.length) break;
    }
    if (n > max) throw new CatalogueError(`catalogue: "${rel}" is over the ${max}-byte limit`, [rel]);
    return buf.subarray(0, n);
  } finally {
    await fh.close();
  }
}
