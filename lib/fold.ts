/**
 * Method folding for dispatch: `tools/list` → `tools.list`, `resources/templates/list` →
 * `resources.templatesList`. The first `/` becomes `.`; every later `/` is dropped and the next ASCII letter is
 * upper-cased. A method without `/` is unchanged.
 */
export function foldMethod(method: string): string {
  const first = method.indexOf('/');
  if (first < 0) return method;
  let out = method.slice(0, first) + '.';
  let upper = false;
  for (let i = first + 1; i < method.length; i++) {
    const ch = method[i]!;
    if (ch === '/') {
      upper = true;
      continue;
    }
    if (upper) {
      const c = ch.charCodeAt(0);
      out += c >= 0x61 && c <= 0x7a ? String.fromCharCode(c - 32) : ch;
      upper = false;
    } else out += ch;
  }
  return out;
}

/** Split a folded method into its namespace and member (`tools.list` → [`tools`, `list`]; `ping` → [``, `ping`]). */
export function splitFolded(folded: string): [namespace: string, member: string] {
  const dot = folded.indexOf('.');
  return dot < 0 ? ['', folded] : [folded.slice(0, dot), folded.slice(dot + 1)];
}
