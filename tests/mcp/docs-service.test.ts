// The docs service behind search_docs / get_docs_page / get_open_api_operation,
// on a real built-site layout in a temp dir (no server needed).
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AppError } from '../../api/src/errors/problem.ts';
import {
  findOpenApiOperation,
  loadDocsIndex,
  markdownTwinPath,
  normalizeDocsPath,
  readDocsPage,
  searchDocs,
} from '../../api/src/services/docs.ts';
import { tempDir } from '../helpers/runtime.ts';
import { fixtureSite } from './fixtures.ts';

const base = 'http://docs.test';
const site = fixtureSite(base);
afterAll(() => rmSync(site, { recursive: true, force: true }));

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return err instanceof AppError ? err.code : String(err);
  }
  return undefined;
}

describe('docs service', () => {
  it('maps page paths to Markdown twins and back', () => {
    expect(markdownTwinPath('/reference/errors/missing_scope/')).toBe('/reference/errors/missing_scope.md');
    expect(markdownTwinPath('/')).toBe('/index.md');
    for (const input of [
      '/agent-access/refusals/',
      '/agent-access/refusals',
      '/agent-access/refusals.md',
      `${base}/agent-access/refusals/#x`,
      'agent-access/refusals/index.html',
    ]) {
      expect(normalizeDocsPath(input, base)).toBe('/agent-access/refusals/');
    }
    expect(normalizeDocsPath('/index.md', base)).toBe('/');
  });

  it('indexes every Markdown twin with its title', () => {
    const pages = loadDocsIndex(site);
    expect(pages.map((p) => p.path)).toEqual([
      '/',
      '/agent-access/refusals/',
      '/recover/replay/',
      '/reference/errors/missing_scope/',
    ]);
    expect(pages.find((p) => p.path === '/recover/replay/')?.title).toBe('Replay an event');
  });

  it('ranks pages matching more words first, titles above bodies', () => {
    const hits = searchDocs(site, base, 'missing scope', 10);
    expect(hits[0]?.path).toBe('/reference/errors/missing_scope/');
    expect(hits.map((h) => h.path)).toContain('/agent-access/refusals/');
    expect(hits[0]?.markdown_url).toBe(`${base}/reference/errors/missing_scope.md`);
    expect(searchDocs(site, base, 'zzzz-nothing', 10)).toEqual([]);
    expect(searchDocs(site, base, 'replay', 1)).toHaveLength(1);
  });

  it('reads a page; traversal and unknown paths are docs_page_not_found', () => {
    expect(readDocsPage(site, base, '/recover/replay.md').markdown).toContain('# Replay an event');
    expect(codeOf(() => readDocsPage(site, base, '/../../etc/passwd'))).toBe('docs_page_not_found');
    expect(codeOf(() => readDocsPage(site, base, '/nope/'))).toBe('docs_page_not_found');
  });

  it('a server without a built site answers docs_unavailable', () => {
    const empty = tempDir('flowport-no-site-');
    try {
      expect(codeOf(() => searchDocs(empty, base, 'x', 5))).toBe('docs_unavailable');
      expect(codeOf(() => readDocsPage(join(empty, 'missing'), base, '/'))).toBe('docs_unavailable');
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it('looks up an OpenAPI operation with its referenced schemas; unknown ids list the known ones', () => {
    const view = findOpenApiOperation('getManifest');
    expect(view.method).toBe('GET');
    expect(view.schemas.Manifest).toBeDefined();
    expect(findOpenApiOperation('getmanifest').operation_id).toBe('getManifest');
    try {
      findOpenApiOperation('nope');
      expect.unreachable();
    } catch (err) {
      expect((err as AppError).code).toBe('openapi_operation_not_found');
      expect((err as AppError).options.extra?.known_operation_ids).toContain('getManifest');
    }
  });
});
