// /llms-full.txt: every page's Markdown twin in reading order, in one file.
import type { APIRoute } from 'astro';
import { renderLlmsFull } from '../lib/llms-full.ts';
import { loadPages } from '../lib/twins.ts';

export const GET: APIRoute = async ({ site }) => {
  const body = renderLlmsFull(await loadPages(), (site as URL).origin);
  return new Response(body, { headers: { 'Content-Type': 'text/plain; charset=utf-8' } });
};
