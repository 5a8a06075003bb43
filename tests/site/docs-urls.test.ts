// Every docs URL the product can emit (API problem+json, MCP refusals, CLI
// hints, the manifest) resolves to a page of the built site.
import { beforeAll, describe, expect, it } from 'vitest';
import { DOCS_PATHS, errorDocsPath } from '../../api/src/docs-paths.ts';
import { ERROR_CODES } from '../../api/src/errors/catalog.ts';
import { ensureSiteBuilt, readDist, resolveInDist, twinOf } from './helpers/site.ts';

beforeAll(ensureSiteBuilt, 900_000);

/** DOCS_PATHS entries served by the API, not by the static site. */
const API_PATHS = new Set<string>([DOCS_PATHS.manifestApi]);

describe('docs URLs the product emits', () => {
  it('every DOCS_PATHS entry resolves in site/dist', () => {
    const missing = Object.entries(DOCS_PATHS)
      .filter(([, p]) => !API_PATHS.has(p))
      .filter(([, p]) => resolveInDist(p) === null)
      .map(([k, p]) => `${k}: ${p}`);
    expect(missing).toEqual([]);
  });

  it('every error code in the catalog has a page and a Markdown twin', () => {
    expect(ERROR_CODES.length).toBeGreaterThan(0);
    const missing = ERROR_CODES.flatMap((code) => {
      const page = errorDocsPath(code);
      const out: string[] = [];
      if (!resolveInDist(page)) out.push(page);
      if (!resolveInDist(twinOf(page))) out.push(twinOf(page));
      return out;
    });
    expect(missing).toEqual([]);
  });

  it('each error page names its code, status and fix from the catalog', async () => {
    const { ERROR_CATALOG } = await import('../../api/src/errors/catalog.ts');
    for (const code of ERROR_CODES) {
      const def = ERROR_CATALOG[code];
      const twin = readDist(twinOf(errorDocsPath(code)));
      expect(twin.startsWith(`# ${code}\n`), code).toBe(true);
      expect(twin).toContain(`\`${def.status}\``);
      expect(twin).toContain(def.fix.split('`')[0]?.trim().slice(0, 40) ?? '');
      if ('layer' in def && def.layer) expect(twin).toContain(def.layer);
    }
  });

  it('the OpenAPI contract is served at its documented path and matches the committed file', async () => {
    const { readFileSync } = await import('node:fs');
    const { OPENAPI_FILE } = await import('../../scripts/docs/lib/site-paths.ts');
    expect(readDist(DOCS_PATHS.openapiJson)).toBe(readFileSync(OPENAPI_FILE, 'utf8'));
  });
});
