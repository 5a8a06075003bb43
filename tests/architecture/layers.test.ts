// The floors of api/src hold: every import goes to the importer's own floor or one below
// (tests/architecture/layers.ts names the floors and says where code belongs), domain code
// imports no transport (Hono, MCP), and the top-level areas form no import cycle.
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { areaOf, cycles, importGraph, importsOf, SRC, sourceFiles } from '../helpers/import-graph.ts';
import { FLOORS, floorOf, violation } from './layers.ts';

const edges = importGraph();

describe('the layers of api/src', () => {
  it('reads the import graph (a sanity check on the reader)', () => {
    expect(edges.length).toBeGreaterThan(300);
    expect(edges).toContainEqual(expect.objectContaining({ from: 'runtime.ts', to: 'http/app.ts', typeOnly: false }));
    expect(edges).toContainEqual(expect.objectContaining({ from: 'cli/main.ts', to: 'runtime.ts', lazy: true }));
  });

  it('puts every top-level area on a floor', () => {
    const areas = new Set(edges.flatMap((e) => (e.external ? [areaOf(e.from)] : [areaOf(e.from), areaOf(e.to)])));
    const lost = [...areas].filter((a) => !floorOf(a));
    expect(lost, `areas on no floor (add them to FLOORS in tests/architecture/layers.ts): ${lost.join(', ')}`).toEqual(
      [],
    );
  });

  it('imports only from the same floor or below, and domain code imports no transport', () => {
    const wrong = edges.map(violation).filter((v): v is string => v !== null);
    expect(wrong, `\n${wrong.join('\n\n')}\n`).toEqual([]);
  });

  it('has no value-import cycle between top-level areas', () => {
    const graph = new Map<string, Set<string>>();
    for (const e of edges) {
      if (e.external || e.typeOnly) continue;
      const [a, b] = [areaOf(e.from), areaOf(e.to)];
      if (!graph.has(a)) graph.set(a, new Set());
      if (a !== b) graph.get(a)?.add(b);
    }
    const found = cycles(graph);
    const explain = found.map((group) => {
      const links = edges.filter(
        (e) => !e.external && !e.typeOnly && group.includes(areaOf(e.from)) && group.includes(areaOf(e.to)),
      );
      return `cycle between ${group.join(', ')}:\n${links
        .filter((e) => areaOf(e.from) !== areaOf(e.to))
        .map((e) => `  api/src/${e.from}:${e.line} -> api/src/${e.to}`)
        .join('\n')}`;
    });
    expect(found, `\n${explain.join('\n')}\n`).toEqual([]);
  });

  it('fails a deliberately wrong import with a message saying where the code belongs', () => {
    // A domain file reaching up into HTTP, and one importing Hono: both refused.
    const file = join(SRC, 'intake', 'made-up.ts');
    const [up, hono, fine] = importsOf(
      file,
      "import { startBodyRead } from '../http/body-reads.ts';\nimport { Hono } from 'hono';\nimport { newId } from '../ids.ts';\n",
    );
    expect(violation(up as never)).toMatch(
      /^api\/src\/intake\/made-up\.ts:1 imports api\/src\/http\/body-reads\.ts: intake is on the domain floor and http on the surfaces floor above it\..*the surfaces floor, which holds HTTP apps and middleware \(api\/src\/http\/\)/,
    );
    expect(violation(hono as never)).toMatch(/transport-free\. A Hono route or app belongs in api\/src\/http\//);
    expect(violation(fine as never)).toBeNull();
    expect(FLOORS.map((f) => f.name)).toEqual([
      'foundation',
      'store',
      'core',
      'domain',
      'operations',
      'surfaces',
      'app',
      'cli',
    ]);
  });

  it('keeps the core module to types', () => {
    const core = edges.filter((e) => areaOf(e.from) === 'core');
    expect(core.length).toBeGreaterThan(0);
    for (const e of core) expect(e.typeOnly || e.external, `${e.from} -> ${e.to}`).toBe(true);
  });

  it('keeps SQL out of operation files and the HTTP, MCP and CLI surfaces, and each run is one call into a service verb', () => {
    const SQL = /\b(db|tx)\.(all|get|run|exec|tx)\b|\b(SELECT\s|INSERT\s+INTO|DELETE\s+FROM)|\bUPDATE\s+\w+\s+SET\b/;
    // The contract and the HTTP, MCP and CLI surfaces hold no SQL.
    const files = ['operations', 'http', 'mcp', 'cli'].flatMap((area) => sourceFiles(join(SRC, area)));
    const runs: string[] = [];
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      const where = `api/src/${relative(SRC, file)}`;
      expect(
        SQL.test(text),
        `${where} holds SQL. SQL belongs in the store and service layers: move the query into a verb in api/src/reads/, api/src/services/ or the domain area it belongs to, and call that verb.`,
      ).toBe(false);
      if (!where.startsWith('api/src/operations/')) continue;
      // The run and its continuation lines (more indented: the formatter wraps a long call).
      for (const m of text.matchAll(/^( +)(async run\(|run:)[^\n]*(\n\1 +[^\n]*)*/gm))
        runs.push(`${where}: ${m[0].replace(/\s+/g, ' ').trim()}`);
    }
    expect(runs.length).toBeGreaterThan(15);
    for (const run of runs)
      expect(
        run,
        `${run}\nAn operation's run is one call into a service verb: run: async ({ ctx, input }) => verb({ ctx, input }).`,
      ).toMatch(/run: async \(\{ ctx(, input)? \}\) => \w+\([^;]*\)( as never)?,$/);
  });
});
