// /llms-full.txt: every page's Markdown twin in reading order, in one file. Rendered here so
// /llms.txt can state its size.
import { SITE_DESCRIPTION, SITE_TITLE } from './sections.ts';
import { type DocPage, renderTwin } from './twins.ts';

export function renderLlmsFull(pages: DocPage[], origin: string): string {
  const slugs = new Set(pages.map((p) => p.slug));
  const parts = [`# ${SITE_TITLE} documentation (all pages)\n\n> ${SITE_DESCRIPTION}\n\nIndex: ${origin}/llms.txt\n`];
  for (const page of pages) parts.push(renderTwin(page, origin, slugs));
  return parts.join('\n---\n\n');
}

/** "about 610 KB": the size to expect (the served file names this server's origin, a few bytes off). */
export function approximateSize(text: string): string {
  return `about ${Math.round(new TextEncoder().encode(text).length / 1024)} KB`;
}
