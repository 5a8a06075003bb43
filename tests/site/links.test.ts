// Link checker over the built site: every internal link and anchor in every
// HTML page resolves to a file (and an element id) in site/dist, and every
// absolute link in the Markdown twins and llms files points at a real file.
import { beforeAll, describe, expect, it } from 'vitest';
import {
  anchorsOf,
  decodeEntities,
  distFiles,
  ensureSiteBuilt,
  htmlPages,
  readDist,
  resolveInDist,
  siteOrigin,
} from './helpers/site.ts';

/** Paths the co-deployed API serves, not the static site. */
const API_PREFIX = '/agent/v1/';
/**
 * What commands and recorded answers in the twins address on the same origin but the site does not
 * serve (issue 43: they name the serving origin): the API's base URL, sender intake URLs, the
 * merchant page (a refusal's `merchant_page` step links it) and the sandbox's received triggers.
 */
const SERVER_PATHS = /^\/(agent\/v1(\/|$)|in\/|merchant$|sandbox\/shopify\/)/;

beforeAll(ensureSiteBuilt, 900_000);

interface Broken {
  page: string;
  link: string;
  why: string;
}

function internalTarget(raw: string, pagePath: string): URL | null {
  const href = decodeEntities(raw.trim());
  if (href === '' || /^(mailto:|tel:|javascript:|data:)/i.test(href)) return null;
  const url = new URL(href, `http://site.invalid${pagePath}`);
  return url.origin === 'http://site.invalid' ? url : null;
}

describe('internal links in HTML pages', () => {
  it('every href/src on every page resolves, and every #anchor exists on its target', () => {
    const pages = htmlPages();
    expect(pages.length).toBeGreaterThan(20);
    const anchorCache = new Map<string, Set<string>>();
    const anchors = (file: string) => {
      let ids = anchorCache.get(file);
      if (!ids) {
        ids = anchorsOf(readDist(file));
        anchorCache.set(file, ids);
      }
      return ids;
    };
    const broken: Broken[] = [];
    let checked = 0;
    for (const page of pages) {
      const html = readDist(`${page}index.html`);
      for (const m of html.matchAll(/<(?:a|link|script|img|iframe|source)\b[^>]*?\s(?:href|src)="([^"]*)"/g)) {
        const url = internalTarget(m[1] as string, page);
        if (!url) continue;
        checked++;
        if (url.pathname.startsWith(API_PREFIX)) continue;
        const file = resolveInDist(url.pathname);
        if (!file) {
          broken.push({ page, link: m[1] as string, why: 'no such file' });
          continue;
        }
        const hash = decodeURIComponent(url.hash.slice(1));
        // Sections Scalar renders in the browser (the operation list on /reference/openapi/):
        // tests/site/openapi-nav.browser.test.ts checks that each one exists once Scalar has run.
        if (hash.startsWith('api-1/')) continue;
        if (hash && file.endsWith('.html') && !anchors(file).has(hash)) {
          broken.push({ page, link: m[1] as string, why: `no element with id "${hash}"` });
        }
      }
    }
    expect(checked).toBeGreaterThan(pages.length * 5);
    expect(broken).toEqual([]);
  });
});

describe('links in the Markdown twins and llms files', () => {
  it('every absolute link to this site points at a file that exists', () => {
    const origin = siteOrigin();
    const textFiles = distFiles().filter((f) => f.endsWith('.md') || f === '/llms.txt' || f === '/llms-full.txt');
    expect(textFiles.length).toBeGreaterThan(20);
    const broken: Broken[] = [];
    const pattern = new RegExp(`${origin.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(/[^\\s)\`"'>\\]]*)`, 'g');
    for (const file of textFiles) {
      for (const m of readDist(file).matchAll(pattern)) {
        const path = (m[1] as string).replace(/[.,:;]+$/, '');
        if (SERVER_PATHS.test(path)) continue;
        if (!resolveInDist(path)) broken.push({ page: file, link: path, why: 'no such file' });
      }
    }
    expect(broken).toEqual([]);
  });

  it('twins never link to root-relative paths (they are read outside the site)', () => {
    const offenders = distFiles()
      .filter((f) => f.endsWith('.md'))
      .flatMap((f) => [...readDist(f).matchAll(/\]\((\/[^)]*)\)/g)].map((m) => `${f}: ${m[1]}`));
    expect(offenders).toEqual([]);
  });
});
