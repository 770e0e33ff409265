/**
 * GitHub's heading anchors of a markdown text: lower case, punctuation dropped, spaces to hyphens, duplicates
 * numbered; headings inside code fences skipped; explicit `<a name>`/`<a id>` anchors added. One rule for
 * scripts/docs-check.mjs (links resolve) and the contract tests that check docs anchors.
 * @param {string} text
 * @returns {Set<string>}
 */
function anchorsOf(text) {
  const anchors = new Set();
  const seen = new Map();
  let inFence = false;
  for (const line of text.split('\n')) {
    if (/^\s*```/.test(line)) inFence = !inFence;
    const m = !inFence && /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = m[1]
      .replace(/<[^>]+>/g, '')
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  for (const m of text.matchAll(/<a (?:name|id)="([^"]+)"/g)) anchors.add(m[1]);
  return anchors;
}

module.exports = { anchorsOf };
