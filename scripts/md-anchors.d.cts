/** GitHub's heading anchors of a markdown text (see md-anchors.cjs). */
export function anchorsOf(text: string): Set<string>;
