// /llms.txt (llmstxt.org): an H1, a summary, then every page's Markdown twin by section.
import type { APIRoute } from 'astro';
import { SECTIONS, SITE_DESCRIPTION, SITE_TITLE } from '../lib/sections.ts';
import { approximateSize, renderLlmsFull } from '../lib/llms-full.ts';
import { loadPages } from '../lib/twins.ts';

export const GET: APIRoute = async ({ site }) => {
  const origin = (site as URL).origin;
  const pages = await loadPages();
  const lines = [
    `# ${SITE_TITLE}`,
    '',
    `> ${SITE_DESCRIPTION}`,
    '',
    `Every page below is the Markdown twin of a docs page (the HTML page is the same path without \`.md\`). Agents: read the manifest at ${origin}/agent/v1/manifest (public: no grant needed) before your first authenticated call; the exact request and response contract is the OpenAPI document at ${origin}/reference/openapi/agent-operations.openapi.json. All pages in one file (${approximateSize(renderLlmsFull(pages, origin))}; the pages below are each under 30 KB): ${origin}/llms-full.txt. The API, MCP and CLI references have a page per operation, tool family and command group, listed under Reference. Examples use placeholders such as \`<GRANT_TOKEN>\` and \`<SIGNING_SECRET>\`; never send real secrets to the docs.`,
  ];
  for (const section of SECTIONS) {
    const inSection = pages.filter((p) => p.section === section.dir);
    if (inSection.length === 0) continue;
    lines.push('', `## ${section.label}`, '');
    for (const p of inSection) {
      const notes = p.description ? `: ${p.description.replace(/\s+/g, ' ')}` : '';
      lines.push(`- [${p.title}](${origin}${p.twinPath})${notes}`);
    }
  }
  return new Response(`${lines.join('\n')}\n`, { headers: { 'Content-Type': 'text/plain; charset=utf-8' } });
};
