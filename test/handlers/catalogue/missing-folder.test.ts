/**
 * A catalogue folder that does not exist (the docs' `./examples/catalogue` in an installed package) is an error
 * naming the folder and where it was looked for, not a bare ENOENT.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { CatalogueError, loadCatalogue } from '../../../handlers/catalogue/index';

test('a relative folder that does not exist names the folder, the resolved path and the working directory', async () => {
  const err: unknown = await loadCatalogue('./no-such-catalogue-folder').catch((e: unknown) => e);
  expect(err).toBeInstanceOf(CatalogueError);
  const message = (err as Error).message;
  expect(message).toContain('the folder "./no-such-catalogue-folder" does not exist');
  expect(message).toContain(resolve('./no-such-catalogue-folder'));
  expect(message).toContain(process.cwd());
  expect(message).not.toMatch(/ENOENT/);
});

test('a file where the folder should be is the same error', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'mcpware-catalogue-'));
  try {
    await writeFile(join(dir, 'file.md'), '# x');
    const err: unknown = await loadCatalogue(join(dir, 'file.md')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CatalogueError);
    expect((err as Error).message).toContain(`the folder "${join(dir, 'file.md')}" does not exist`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
