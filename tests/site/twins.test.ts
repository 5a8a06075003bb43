// Markdown twins and llms.txt are complete and well-formed, and the generated
// reference pages cover every operation, MCP tool and error code.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../api/src/errors/catalog.ts';
import { OPERATIONS } from '../../api/src/operations/registry.ts';
import { listOperations, type OpenApiDocument, operationPagePath } from '../../scripts/docs/lib/api-reference.ts';
import { astroBuildEnv } from '../../scripts/docs/build-site.ts';
import { DOCS_DIR, OPENAPI_FILE } from '../../scripts/docs/lib/site-paths.ts';
import { decodeEntities, distFiles, ensureSiteBuilt, htmlPages, readDist, siteOrigin, twinOf } from './helpers/site.ts';
import { SEARCH_INDEX_FILE } from '../../api/src/lib/docs-search.ts';

beforeAll(ensureSiteBuilt, 900_000);

function llmsLinks(): string[] {
  return [...readDist('/llms.txt').matchAll(/^- \[[^\]]+\]\(([^)]+)\)/gm)].map((m) => m[1] as string);
}

describe('Markdown twins', () => {
  it('HTML pages, .md twins and llms.txt links have equal counts and match one to one', () => {
    const origin = siteOrigin();
    const pages = htmlPages();
    const twins = distFiles().filter((f) => f.endsWith('.md'));
    const links = llmsLinks();
    expect(pages.length).toBeGreaterThan(20);
    expect(twins.length).toBe(pages.length);
    expect(links.length).toBe(pages.length);
    expect(new Set(twins)).toEqual(new Set(pages.map(twinOf)));
    expect(new Set(links)).toEqual(new Set(pages.map((p) => `${origin}${twinOf(p)}`)));
  });

  it('each twin starts with its title, Canonical and Markdown lines, and the title matches the HTML page', () => {
    const origin = siteOrigin();
    for (const page of htmlPages()) {
      const twin = readDist(twinOf(page));
      const lines = twin.split('\n');
      expect(lines[0], page).toMatch(/^# \S/);
      expect(lines[2], page).toBe(`Canonical: ${origin}${page}`);
      expect(lines[3], page).toBe(`Markdown: ${origin}${twinOf(page)}`);
      const h1 = /<h1[^>]*id="_top"[^>]*>([\s\S]*?)<\/h1>/.exec(readDist(`${page}index.html`));
      if (h1) expect(lines[0], page).toBe(`# ${decodeEntities((h1[1] as string).replace(/<[^>]+>/g, '').trim())}`);
    }
  });

  it('every HTML page links its twin as text/markdown and offers Copy as Markdown', () => {
    for (const page of htmlPages()) {
      const html = readDist(`${page}index.html`);
      expect(html, page).toContain(`<link rel="alternate" type="text/markdown" href="${twinOf(page)}"`);
      if (page !== '/')
        expect(html, page).toMatch(
          new RegExp(`class="fp-copy-md[^"]*" data-twin="${twinOf(page).replace(/[.]/g, '\\.')}"`),
        );
    }
  });

  it('tables stay Markdown tables in twins (readable as text), not HTML', () => {
    const twin = readDist('/reference/scopes.md');
    expect(twin).toMatch(/^\| Scope \|/m);
    expect(twin).not.toContain('<table');
  });

  it('llms-full.txt holds every twin', () => {
    const full = readDist('/llms-full.txt');
    for (const page of htmlPages()) expect(full).toContain(`Markdown: ${siteOrigin()}${twinOf(page)}`);
  });

  it('llms.txt follows llmstxt.org: H1, summary quote, then sections of links', () => {
    const text = readDist('/llms.txt');
    expect(text).toMatch(/^# .+\n\n> .+\n/);
    expect(text).toMatch(/^## Reference$/m);
    const firstSection = text.indexOf('\n## ');
    expect(text.slice(firstSection)).not.toMatch(/^(?!## |- \[|$).+/m);
  });
});

describe('generated reference pages', () => {
  it('every OpenAPI operation has its own page, linked from /reference/api.md', () => {
    const doc = JSON.parse(readFileSync(OPENAPI_FILE, 'utf8')) as OpenApiDocument;
    const ops = listOperations(doc);
    expect(ops.length).toBeGreaterThan(0);
    const index = readDist('/reference/api.md');
    for (const { method, path, op } of ops) {
      const page = operationPagePath(op.operationId as string);
      expect(index).toContain(`(${siteOrigin()}${page.slice(0, -1)}.md)`);
      expect(index).toContain(`${method} ${path}`);
      const twin = readDist(`${page.slice(0, -1)}.md`);
      expect(twin).toContain(`${method} ${path}`);
      expect(twin).toContain(op.operationId as string);
    }
  });

  it('every MCP tool in the registry is on its family page with its scope, and in the /reference/mcp.md index', () => {
    const index = readDist('/reference/mcp.md');
    const tools = OPERATIONS.filter((op) => op.mcp);
    expect(tools.length).toBeGreaterThan(0);
    for (const op of tools) {
      const twin = readDist(`/reference/mcp/${op.family}.md`);
      expect(twin).toContain(`## ${op.mcp?.name}`);
      if (op.scope) expect(twin).toContain(`\`${op.scope}\``);
      expect(index).toContain(`[\`${op.mcp?.name}\`]`);
    }
    expect(index).toContain('<GRANT_TOKEN>');
    expect(index).toContain('/agent/v1/mcp');
  });

  it('every CLI command in the registry is in /reference/cli.md and on its group page', () => {
    const index = readDist('/reference/cli.md');
    for (const op of OPERATIONS.filter((o) => o.cli)) {
      expect(index).toContain(`flowport ${op.cli?.join(' ')}`);
      expect(readDist(`/reference/cli/${op.family}.md`)).toContain(`flowport ${op.cli?.join(' ')}`);
    }
  });

  it('the error index lists every code', () => {
    const twin = readDist('/reference/errors.md');
    for (const code of ERROR_CODES) expect(twin).toContain(`[\`${code}\`]`);
  });

  it('placeholders in angle brackets are code, never raw HTML that the browser would hide', () => {
    // Outside code, `<event_id>` or `<data dir>` is parsed as an element: the HTML page shows nothing.
    const raw: string[] = [];
    for (const rel of readdirSync(DOCS_DIR, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.md'))) {
      let fenced = false;
      readFileSync(join(DOCS_DIR, rel), 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (/^\s*```/.test(line)) fenced = !fenced;
          else if (!fenced)
            for (const m of line.replace(/`[^`]*`/g, '').matchAll(/<[A-Za-z_][\w -]*>/g))
              raw.push(`${rel}:${i + 1} ${m[0]}`);
        });
    }
    expect(raw).toEqual([]);
    // The CLI reference's command headings show their arguments.
    const html = readDist('/reference/cli/index.html');
    for (const op of OPERATIONS.filter((o) => o.cli?.some((w) => w.startsWith('<')))) {
      const heading = new RegExp(
        `<h3[^>]*>(?:<code[^>]*>)?flowport ${op.cli?.join(' ').replace(/</g, '&lt;').replace(/>/g, '&gt;')}`,
      );
      expect(html, op.operationId).toMatch(heading);
    }
  });
});

describe('the built site is a production build', () => {
  it('whatever NODE_ENV the build is started with (site tests rebuild under vitest, NODE_ENV=test)', () => {
    // vitest's own environment, as a site test that rebuilds passes it on.
    const underVitest = astroBuildEnv(process.env);
    expect(process.env.DEV).toBe('1');
    expect(underVitest.NODE_ENV).toBe('production');
    expect(underVitest.DEV).toBeUndefined();
    expect(astroBuildEnv({ NODE_ENV: 'development' }).NODE_ENV).toBe('production');
    // A dev-mode build replaced Starlight's search dialog with a notice instead of the offline index.
    for (const page of htmlPages()) {
      expect(readDist(`${page}index.html`), page).not.toContain('Search is only available in production builds');
    }
    // The site search's index (the one the agents' search reads too).
    expect(distFiles()).toContain(`/${SEARCH_INDEX_FILE}`);
  });
});
