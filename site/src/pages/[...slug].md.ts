// The Markdown twin of every docs page: /start/quickstart/ → /start/quickstart.md,
// /reference/errors/ → /reference/errors.md, / → /index.md.
import type { APIRoute, GetStaticPaths } from 'astro';
import { type DocPage, loadPages, renderTwin } from '../lib/twins.ts';

export const getStaticPaths = (async () => {
  const pages = await loadPages();
  const slugs = new Set(pages.map((p) => p.slug));
  return pages.map((page) => ({
    params: { slug: page.twinPath.slice(1, -'.md'.length) },
    props: { page, slugs },
  }));
}) satisfies GetStaticPaths;

export const GET: APIRoute = ({ props, site }) => {
  const { page, slugs } = props as { page: DocPage; slugs: Set<string> };
  const origin = (site as URL).origin;
  return new Response(renderTwin(page, origin, slugs), {
    headers: { 'Content-Type': 'text/markdown; charset=utf-8' },
  });
};
