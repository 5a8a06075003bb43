// The CLI starts fast because it loads little: the command line (bin/flowport.js →
// api/src/cli/main.ts) reads the generated agent-command table and never imports the
// registry, the server, the store or a package; helper and operator code loads only when its
// command runs. `npm run bench:cli` measures the result.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { importGraph, ROOT, staticClosure } from '../helpers/import-graph.ts';

const loaded = [...staticClosure('cli/main.ts', importGraph())];

describe('what `flowport` loads at start', () => {
  it('is the CLI and a few small modules: no registry, server, store, operator handler or package', () => {
    expect(loaded).toContain('cli/agent-table.ts');
    // An owner module (store/tables/) is statements behind named functions that import Db as a type
    // only, so a constant beside its row type (AUTH_MODES) may load at start; whatever it imports
    // that is heavy still shows up here.
    const heavy = loaded.filter(
      (f) =>
        /^(http|mcp|store(?!\/tables\/)|sandbox|shopify|runtime\.ts|main\.ts)/.test(f) ||
        f === 'operations/registry.ts' ||
        f.startsWith('operations/intents/') ||
        /^cli\/(operator\/(grants|shops|handoff|process)\.ts|doctor\.ts|docs-command\.ts|completion\.ts|api-commands\.ts)$/.test(
          f,
        ) ||
        (f.startsWith('pkg:') && !f.startsWith('pkg:node:')),
    );
    expect(heavy, `loaded at start: ${heavy.join(', ')}`).toEqual([]);
  });

  it('bin/flowport.js turns the compile cache on before it loads the TypeScript', () => {
    const bin = readFileSync(join(ROOT, 'bin', 'flowport.js'), 'utf8');
    expect(bin.indexOf('enableCompileCache')).toBeGreaterThan(-1);
    expect(bin.indexOf('enableCompileCache')).toBeLessThan(bin.indexOf("import('../api/src/cli/main.ts')"));
    expect(bin).not.toMatch(/^import .*api\/src/m);
  });
});
