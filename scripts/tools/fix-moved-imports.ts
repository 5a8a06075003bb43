// After a merge across the file moves of issue 25 (docs/architecture.md): rewrites every
// relative import in api/, scripts/, tests/ and bin/ that no longer resolves, using the table of
// moves below. A specifier in a moved file is also tried from the file's old folder (an import
// added on a branch that did not have the move yet). Prints what it changed and what it could not
// resolve; changes nothing that already resolves.
//   node scripts/tools/fix-moved-imports.ts [--dry-run]
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const root = join(import.meta.dirname, '..', '..');

/** Old path → new path (relative to the repository root), in the order the moves happened. */
export const MOVES: Record<string, string> = {
  'api/src/operations/types.ts': 'api/src/core/types.ts',
  'api/src/cli/command-line.ts': 'api/src/lib/command-line.ts',
  'api/src/operations/command-line.ts': 'api/src/lib/command-line.ts',
  'api/src/intake/committer.ts': 'api/src/store/committer.ts',
  'api/src/auth/cli.ts': 'api/src/cli/operator/grants.ts',
  'api/src/intake/cli.ts': 'api/src/cli/operator/shops.ts',
  'api/src/handoff/cli.ts': 'api/src/cli/operator/handoff.ts',
  'api/src/process-cli.ts': 'api/src/cli/operator/process.ts',
  'api/src/process-commands.ts': 'api/src/cli/operator/process-commands.ts',
  'api/src/intake/routes.ts': 'api/src/http/intake-routes.ts',
  'api/src/intake/node-intake.ts': 'api/src/http/node-intake.ts',
  'api/src/handoff/metrics.ts': 'api/src/http/metrics.ts',
  'api/src/intents/shared-diagnostics.ts': 'api/src/http/shared-diagnostics.ts',
  'api/src/operations/events/replay-intent.ts': 'api/src/operations/intents/preview-replay.ts',
};

const oldPathOf = new Map<string, string>();
for (const [from, to] of Object.entries(MOVES)) if (!oldPathOf.has(to)) oldPathOf.set(to, from);

function files(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.name === 'node_modules' || e.name.startsWith('.')) continue;
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...files(p));
    else if (/\.(ts|js)$/.test(e.name)) out.push(p);
  }
  return out;
}

// Static imports and re-exports at the start of a line, `await import(…)` and `vi.mock(…)`.
const SPEC =
  /(^[ \t]*\}\s*from\s*|^[ \t]*(?:import|export)\b[^'"\n]*?(?:from\s*)?|await import\(\s*|vi\.mock\(\s*)(['"])(\.{1,2}\/[^'"]+)\2/gm;
const dryRun = process.argv.includes('--dry-run');
let changed = 0;
const unresolved: string[] = [];
for (const file of ['api', 'scripts', 'tests', 'bin'].flatMap((d) => files(join(root, d)))) {
  const rel = relative(root, file);
  const text = readFileSync(file, 'utf8');
  const out = text.replace(SPEC, (whole, pre: string, quote: string, spec: string) => {
    if (existsSync(resolve(dirname(file), spec))) return whole;
    const bases = [dirname(rel), ...(oldPathOf.has(rel) ? [dirname(oldPathOf.get(rel) as string)] : [])];
    for (const base of bases) {
      let target = relative(root, resolve(root, base, spec));
      for (let i = 0; i < 3 && MOVES[target]; i++) target = MOVES[target] as string;
      if (!existsSync(join(root, target))) continue;
      let next = relative(dirname(rel), target);
      if (!next.startsWith('.')) next = `./${next}`;
      console.log(`${rel}: ${spec} -> ${next}`);
      return `${pre}${quote}${next}${quote}`;
    }
    unresolved.push(`${rel}: ${spec}`);
    return whole;
  });
  if (out !== text) {
    changed++;
    if (!dryRun) writeFileSync(file, out);
  }
}
console.log(`${dryRun ? 'would change' : 'changed'} ${changed} file(s)`);
if (unresolved.length) {
  console.log(
    `not resolved (moved content, e.g. the preview operations now in previews.ts):\n${unresolved.join('\n')}`,
  );
}
