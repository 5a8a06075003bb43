// /robots.txt: every page may be read, by people's browsers and by agents and crawlers alike.
// The sitemap (Starlight's, from the `site` origin) and the llms.txt index are named here.
import type { APIRoute } from 'astro';

export const GET: APIRoute = ({ site }) => {
  const origin = (site as URL).origin;
  const body = [
    '# Flowport documentation. Agents: start at the llms.txt index,',
    `# ${origin}/llms.txt (every page as Markdown; or ask any page with Accept: text/markdown).`,
    'User-agent: *',
    'Allow: /',
    '',
    `Sitemap: ${origin}/sitemap-index.xml`,
    '',
  ].join('\n');
  return new Response(body, { headers: { 'Content-Type': 'text/plain; charset=utf-8' } });
};
