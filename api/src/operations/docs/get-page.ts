// GET /agent/v1/docs/page?path= — public. One published docs page as Markdown
// (the page's `.md` twin), by site path, twin path or absolute docs URL.
import { z } from '@hono/zod-openapi';
import { defineRead } from '../define.ts';
import { docsPageFor } from '../../services/docs.ts';

export const DocsPage = z
  .object({
    title: z.string().describe('Page title.'),
    path: z
      .string()
      .openapi({ example: '/reference/errors/missing_scope/', description: 'Site path of the page (trailing slash).' }),
    url: z.string().describe('Absolute URL of the HTML page.'),
    markdown_url: z.string().describe('Absolute URL of the Markdown twin (`.md`).'),

    markdown: z.string().describe('The whole page as Markdown (title, Canonical and Markdown lines, body).'),
  })
  .openapi('DocsPage');

export const getDocsPage = defineRead({
  name: 'get_docs_page',
  path: '/docs/page',
  summary: 'Read a docs page as Markdown',
  description:
    'Returns one published docs page as Markdown. `path` may be the page path (`/agent-access/refusals/`), its Markdown twin (`/agent-access/refusals.md`) or an absolute docs URL such as a `docs_url` from an error. Public.',
  family: 'docs',
  scope: null,
  meter: null,
  request: {
    query: z.object({
      path: z.string().trim().min(1).max(500).describe('Page path, `.md` twin path or absolute docs URL.'),
    }),
  },
  response: DocsPage,
  errors: ['docs_unavailable', 'docs_page_not_found'],
  mcp: {
    title: 'Read a docs page as Markdown',
    description:
      'Read one Flowport docs page in full as Markdown: pass a path from search_docs, a page from llms.txt, or the docs_url of an error or refusal you received.',
  },
  run: async ({ ctx, input }) => docsPageFor({ ctx, input }),
});
