// GET /agent/v1/docs/search?q= — public. Full-text search over the Markdown
// pages the docs site publishes (the same text humans and llms.txt readers get), with
// the index the site's own search dialog reads (api/src/lib/docs-search.ts).
import { z } from '@hono/zod-openapi';
import { defineRead } from '../define.ts';
import { searchDocsFor } from '../../services/docs.ts';

export const DocsSearchResult = z
  .object({
    query: z.string().describe('The query as searched (trimmed).'),
    results: z
      .array(
        z.object({
          title: z.string().describe('Page title.'),
          path: z.string().openapi({
            example: '/agent-access/refusals/',
            description: 'Site path of the page (pass to the docs page operation).',
          }),
          url: z.string().describe('Absolute URL of the HTML page.'),
          markdown_url: z
            .string()
            .describe('The page as Markdown; read it with the docs page operation or fetch it directly.'),
          snippet: z.string().describe('Plain-text excerpt around the best match.'),
          score: z
            .number()
            .describe(
              'Relevance (BM25, two decimals); higher is better. Results are sorted by it, best first. Comparable within one answer only.',
            ),
        }),
      )
      .describe('Matching pages, best first (empty when nothing matches).'),
  })
  .openapi('DocsSearchResult');

export const searchDocsOperation = defineRead({
  name: 'search_docs',
  path: '/docs/search',
  summary: 'Search the docs',
  description:
    'Full-text search over the published docs pages (their Markdown twins), with the same index as the docs site\'s search. Ask in your own words ("replay a failed event") or by a name (`signature_mismatch`). Results are ranked by relevance (BM25: title, summary, path and headings weigh more than the body; a word\'s other forms, small typos and common synonyms count too), best first, each with its score. Public.',
  family: 'docs',
  scope: null,
  meter: null,
  request: {
    query: z.object({
      q: z.string().trim().min(1).max(200).describe('Words to look for, e.g. "missing scope replay".'),
      limit: z.coerce.number().int().min(1).max(25).default(8).describe('Maximum number of results (1-25).'),
    }),
  },
  response: DocsSearchResult,
  errors: ['docs_unavailable'],
  mcp: {
    title: 'Search the Flowport docs',
    description:
      "Find the docs pages that explain a concept, an error code, a refusal or a how-to. Returns titles, paths, a snippet and each page's Markdown URL; read a result with get_docs_page.",
  },
  run: async ({ ctx, input }) => searchDocsFor({ ctx, input }),
});
