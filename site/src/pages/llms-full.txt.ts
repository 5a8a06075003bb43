// /llms-full.txt: every page's Markdown twin in reading order, in one file.
import type { APIRoute } from 'astro';
import { SITE_DESCRIPTION, SITE_TITLE } from '../lib/sections.ts';
import { loadPages, renderTwin } from '../lib/twins.ts';

export const GET: APIRoute = async ({ site }) => {
  const origin = (site as URL).origin;
  const pages = await loadPages();
  const slugs = new Set(pages.map((p) => p.slug));
  const parts = [`# ${SITE_TITLE} documentation (all pages)\n\n> ${SITE_DESCRIPTION}\n\nIndex: ${origin}/llms.txt\n`];
  for (const page of pages) parts.push(renderTwin(page, origin, slugs));
  return new Response(parts.join('\n---\n\n'), { headers: { 'Content-Type': 'text/plain; charset=utf-8' } });
};
