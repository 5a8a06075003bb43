// What the server holds in memory from start (issue 31 goal 6, ADR 1330): the MCP SDK and the
// tool definitions load on the first MCP request, pino-pretty only for pretty logs, and
// `npm start` turns Node's compile cache on before any TypeScript loads, so that a warm start
// does not load Node's TypeScript stripper. `npm run bench:soak` measures the result.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { importGraph, ROOT, staticClosure } from '../helpers/import-graph.ts';

describe('what the server loads at start', () => {
  it('has no MCP SDK, MCP tool definitions or pino-pretty in its static imports', () => {
    const loaded = [...staticClosure('main.ts', importGraph())];
    expect(loaded).toContain('runtime.ts');
    expect(loaded).toContain('mcp/http.ts');
    const lazy = loaded.filter(
      (f) => f.startsWith('pkg:@modelcontextprotocol/') || f === 'pkg:pino-pretty' || f === 'mcp/server.ts',
    );
    expect(lazy, `loaded at start: ${lazy.join(', ')}`).toEqual([]);
  });

  it("npm start's entry turns the compile cache on before it loads the TypeScript", () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } };
    const entry = pkg.scripts.start.split(/\s+/).find((a) => !a.startsWith('-') && a !== 'node');
    expect(entry).toBe('scripts/start-entry.js');
    const text = readFileSync(join(ROOT, entry as string), 'utf8');
    expect(text.indexOf('enableCompileCache')).toBeGreaterThan(-1);
    expect(text.indexOf('enableCompileCache')).toBeLessThan(text.indexOf("import('./start.ts')"));
    expect(text).not.toMatch(/^import .*\.ts'/m);
  });
});
