// A module hook that lets @modelcontextprotocol/conformance (0.2.0-alpha) run on Node 20.
//
// Its bundle does `import { globSync } from "fs"`, an export Node added in 22. Loading it on Node 20 fails before
// any command runs. Register this file with `node --import ./scripts/conformance-hook.mjs …`: for modules of that
// package only, the bare `fs` / `node:fs` import is answered by a small module that re-exports node:fs and adds a
// `globSync`. The bundle calls it once, as `globSync("**/checks.json", { cwd })` (tier-check's result reader), so
// the shim supports `*`, `?` and `**` path segments relative to `cwd` and returns relative paths with `/`.
// On a Node that has fs.globSync the hook registers nothing.
import fs from 'node:fs';
import { register } from 'node:module';
import { isMainThread } from 'node:worker_threads';

const SHIM_URL = 'mcpware-conformance-shim:fs';
const PACKAGE_PART = '/node_modules/@modelcontextprotocol/conformance/';

// The same file is the hooks module: `register()` loads it again on the hooks thread, where it must not
// register itself a second time.
if (isMainThread && typeof fs.globSync !== 'function') register(import.meta.url);

export async function resolve(specifier, context, nextResolve) {
  if (
    (specifier === 'fs' || specifier === 'node:fs') &&
    typeof context.parentURL === 'string' &&
    context.parentURL.includes(PACKAGE_PART)
  ) {
    return { url: SHIM_URL, shortCircuit: true };
  }
  return nextResolve(specifier, context);
}

export async function load(url, context, nextLoad) {
  if (url === SHIM_URL) return { format: 'module', source: SHIM_SOURCE, shortCircuit: true };
  return nextLoad(url, context);
}

// The shim module's source. Kept as plain JavaScript text: it is evaluated as its own ES module.
const SHIM_SOURCE = `
import fs from 'node:fs';
import path from 'node:path';
export * from 'node:fs';
export default fs;

// One glob segment as a RegExp: '*' is any run of characters but '/', '?' one such character; the rest literal.
function segmentRegExp(seg) {
  let src = '^';
  for (const ch of seg) {
    if (ch === '*') src += '[^/]*';
    else if (ch === '?') src += '[^/]';
    else src += ch.replace(/[.+^\${}()|[\\]\\\\]/g, '\\\\$&');
  }
  return new RegExp(src + '$');
}

export function globSync(pattern, options = {}) {
  const patterns = Array.isArray(pattern) ? pattern : [pattern];
  const cwd = options.cwd === undefined ? process.cwd() : String(options.cwd);
  const out = new Set();
  for (const p of patterns) {
    const segs = String(p).split('/').filter((s) => s !== '' && s !== '.');
    // Depth-first walk: (directory relative to cwd, index of the next pattern segment).
    const stack = [['', 0]];
    const seen = new Set();
    while (stack.length > 0) {
      const [dir, i] = stack.pop();
      const key = dir + '\\u0000' + i;
      if (seen.has(key)) continue;
      seen.add(key);
      if (i === segs.length) {
        if (dir !== '') out.add(dir);
        continue;
      }
      const seg = segs[i];
      if (seg === '**') {
        // '**' matches zero directories (try the next segment here) or one more (descend, keep '**').
        stack.push([dir, i + 1]);
        let entries = [];
        try {
          entries = fs.readdirSync(path.join(cwd, dir), { withFileTypes: true });
        } catch {
          continue;
        }
        for (const e of entries) {
          if (e.isDirectory() && !e.name.startsWith('.')) stack.push([dir === '' ? e.name : dir + '/' + e.name, i]);
        }
        continue;
      }
      let entries = [];
      try {
        entries = fs.readdirSync(path.join(cwd, dir), { withFileTypes: true });
      } catch {
        continue;
      }
      const re = segmentRegExp(seg);
      for (const e of entries) {
        if (!re.test(e.name)) continue;
        const rel = dir === '' ? e.name : dir + '/' + e.name;
        if (i + 1 === segs.length) out.add(rel);
        else if (e.isDirectory()) stack.push([rel, i + 1]);
      }
    }
  }
  return [...out].sort();
}
`;
