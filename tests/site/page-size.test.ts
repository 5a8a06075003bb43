// Page sizes agents can read whole: every Markdown twin under 30 KB (the API, MCP and CLI
// references are split per operation, tool family and command group for this), llms.txt under
// afdocs' 50,000-character threshold and stating the size of llms-full.txt, which stays.
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { listOperations, type OpenApiDocument, operationPagePath } from '../../scripts/docs/lib/api-reference.ts';
import { OPENAPI_FILE } from '../../scripts/docs/lib/site-paths.ts';
import { readFileSync } from 'node:fs';
import { DIST_DIR, distFiles, ensureSiteBuilt, readDist, siteOrigin } from './helpers/site.ts';

/** 30 KB, counted as 30,000 bytes. */
const TWIN_LIMIT = 30_000;

beforeAll(ensureSiteBuilt, 900_000);

describe('page sizes', () => {
  it('every Markdown twin is under 30 KB', () => {
    const twins = distFiles().filter((f) => f.endsWith('.md'));
    expect(twins.length).toBeGreaterThan(100);
    const sizes = twins.map((f) => ({ f, bytes: statSync(join(DIST_DIR, f)).size }));
    const largest = [...sizes].sort((a, b) => b.bytes - a.bytes).slice(0, 5);
    console.log(`largest twins: ${largest.map((s) => `${s.f} ${s.bytes} B`).join(', ')}`);
    expect(sizes.filter((s) => s.bytes >= TWIN_LIMIT)).toEqual([]);
  });

  it('llms.txt links every operation page and states the size of llms-full.txt', () => {
    const llms = readDist('/llms.txt');
    expect(llms.length).toBeLessThan(50_000);
    const doc = JSON.parse(readFileSync(OPENAPI_FILE, 'utf8')) as OpenApiDocument;
    for (const o of listOperations(doc)) {
      const twin = `${operationPagePath(o.op.operationId as string).slice(0, -1)}.md`;
      expect(llms, o.op.operationId).toContain(`(${siteOrigin()}${twin})`);
    }
    const full = statSync(join(DIST_DIR, 'llms-full.txt')).size;
    const stated = /All pages in one file \(about (\d+) KB;/.exec(llms);
    expect(stated, 'llms.txt states the size of llms-full.txt').not.toBeNull();
    expect(Math.abs(Number(stated?.[1]) - full / 1024)).toBeLessThanOrEqual(1);
  });
});
