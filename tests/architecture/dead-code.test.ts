// Nothing in api/src is exported for nobody: every exported name is used somewhere else
// (api/src, scripts, tests, the docs site or bin). An export used only in its own file is
// fine; one used nowhere is dead code and goes.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, SRC, sourceFiles } from '../helpers/import-graph.ts';

function filesUnder(dir: string, ext: RegExp): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.name === 'node_modules' || e.name === 'dist' || e.name.startsWith('.')) continue;
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...filesUnder(p, ext));
    else if (ext.test(e.name)) out.push(p);
  }
  return out;
}

describe('dead code', () => {
  it('every export of api/src is used outside its own file or inside it', () => {
    const users = [
      ...sourceFiles(),
      ...filesUnder(join(ROOT, 'scripts'), /\.ts$/),
      ...filesUnder(join(ROOT, 'tests'), /\.ts$/),
      ...filesUnder(join(ROOT, 'site', 'src'), /\.(ts|mjs|astro|mdx)$/),
      join(ROOT, 'bin', 'flowport.js'),
    ].map((f) => ({ f, text: readFileSync(f, 'utf8') }));
    const dead: string[] = [];
    for (const file of sourceFiles()) {
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(
        /^export (?:async )?(?:const|function|class|interface|type|let|enum) ([A-Za-z_$][\w$]*)/gm,
      )) {
        const name = m[1] as string;
        const source = `\\b${name.replace(/\$/g, '\\$')}\\b`;
        const usedHere = (text.match(new RegExp(source, 'g')) ?? []).length > 1;
        const word = new RegExp(source);
        if (!usedHere && !users.some((u) => u.f !== file && word.test(u.text)))
          dead.push(`api/src/${relative(SRC, file)}: ${name}`);
      }
    }
    expect(dead, `exported and used nowhere (remove them):\n${dead.join('\n')}`).toEqual([]);
    expect(users.length).toBeGreaterThan(200);
  });
});
