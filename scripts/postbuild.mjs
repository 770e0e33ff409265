// Mark each build's module format and make the CLI executable. Runs after both tsc builds.
import { chmodSync, existsSync, writeFileSync } from 'node:fs';

writeFileSync('dist/cjs/package.json', JSON.stringify({ type: 'commonjs' }) + '\n');
writeFileSync('dist/esm/package.json', JSON.stringify({ type: 'module' }) + '\n');
if (existsSync('dist/cjs/bin/mcpware.js')) chmodSync('dist/cjs/bin/mcpware.js', 0o755);
