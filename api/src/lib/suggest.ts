// "Did you mean …?" for a mistyped name (a command, an option, a request field).
// One rule everywhere: a known name is suggested when it is the same name spelled
// in another case or separator style (`eventType`, `event-type` → `event_type`), or
// within a small edit distance of what was typed.

/** Edit distance with adjacent transpositions (optimal string alignment): `nmae` is one edit from `name`. */
export function editDistance(a: string, b: string): number {
  let before: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      let d = Math.min((prev[j] ?? 0) + 1, (cur[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, (before[j - 2] ?? 0) + 1);
      cur[j] = d;
    }
    before = prev;
    prev = cur;
  }
  return prev[b.length] ?? 0;
}

/** `eventType`, `event-type`, `EVENT_TYPE` → `eventtype`: the spelling with case and separators dropped. */
function squash(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9]/g, '');
}

/** The known name `typed` most likely meant, or null when none is close. */
export function closestName(typed: string, known: readonly string[]): string | null {
  const t = squash(typed);
  const same = known.find((k) => squash(k) === t);
  if (same !== undefined) return same;
  const limit = typed.length <= 4 ? 1 : 2;
  let best: { name: string; d: number } | null = null;
  for (const k of known) {
    const d = Math.min(editDistance(typed, k), editDistance(t, squash(k)));
    if (d <= limit && (!best || d < best.d)) best = { name: k, d };
  }
  return best?.name ?? null;
}

/**
 * The one sentence every surface uses for a name it does not know:
 * `Unknown field \`nmae\`. Did you mean \`name\`?` (HTTP, MCP) or `Unknown option --nmae. Did you mean --name?` (CLI).
 */
export function unknownNameMessage(what: string, typed: string, suggestion: string | null): string {
  return `Unknown ${what} ${typed}.${suggestion ? ` Did you mean ${suggestion}?` : ''}`;
}
