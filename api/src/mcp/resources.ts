// MCP resources: every published docs page as Markdown (its `.md` twin),
// llms.txt, the OpenAPI contract, and each tool's full output shape (the public OpenAPI lookup
// of its operation, ADR 0510). URIs are the public URLs of the same files, so a resource link
// and a browser fetch name the same thing.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { McpServer } from '@modelcontextprotocol/server';
import { DOCS_PATHS, joinUrl, withPublicOrigin } from '../docs-paths.ts';
import { AppError } from '../errors/problem.ts';
import type { AnyOperation, Services } from '../core/types.ts';
import { loadDocsIndex, loadOpenApiDocument, OPENAPI_FILE, openApiOperationView } from '../services/docs.ts';
import { outputSchemaPath } from './tools.ts';

export function registerResources(server: McpServer, services: Services, tools: readonly AnyOperation[]): void {
  const { publicUrl, siteDir } = services.config;

  // A tool's full output shape: what `GET …/openapi/operations/{operation_id}` and
  // get_open_api_operation answer (the operation with every schema it references).
  for (const op of tools) {
    const name = op.mcp?.name as string;
    server.registerResource(
      `output-schema:${name}`,
      joinUrl(publicUrl, outputSchemaPath(op)),
      {
        title: `${name}: full contract`,
        description: `The ${op.operationId} operation (what ${name} takes and returns, every field described) with the schemas it references.`,
        mimeType: 'application/json',
      },
      async (uri) => {
        const text = JSON.stringify(openApiOperationView(op.operationId, publicUrl));
        return { contents: [{ uri: uri.href, mimeType: 'application/json', text }] };
      },
    );
  }

  server.registerResource(
    'openapi',
    joinUrl(publicUrl, DOCS_PATHS.openapiJson),
    {
      title: 'Agent Operations OpenAPI contract',
      description:
        'The exact request and response contract of every operation (OpenAPI 3.1, JSON). Authoritative for shapes.',
      mimeType: 'application/json',
    },
    async (uri) => {
      loadOpenApiDocument(); // throws docs_unavailable with a clear message when missing
      // Its recorded examples name the build origin (ADR 0009): this server's goes in its place.
      const text = withPublicOrigin(readFileSync(OPENAPI_FILE, 'utf8'), publicUrl);
      return { contents: [{ uri: uri.href, mimeType: 'application/json', text }] };
    },
  );

  let pages: ReturnType<typeof loadDocsIndex>;
  try {
    pages = loadDocsIndex(siteDir);
  } catch (err) {
    if (err instanceof AppError && err.code === 'docs_unavailable') return; // no built site: only the contract is offered
    throw err;
  }

  server.registerResource(
    'llms-txt',
    joinUrl(publicUrl, DOCS_PATHS.llmsTxt),
    {
      title: 'llms.txt: index of every docs page',
      description: 'Every docs page by section, linking its Markdown twin.',
      mimeType: 'text/markdown',
    },
    async (uri) => ({
      contents: [
        {
          uri: uri.href,
          mimeType: 'text/markdown',
          text: withPublicOrigin(readFileSync(join(siteDir, 'llms.txt'), 'utf8'), publicUrl),
        },
      ],
    }),
  );

  for (const page of pages) {
    server.registerResource(
      `docs:${page.path}`,
      joinUrl(publicUrl, page.markdownPath),
      { title: page.title, description: `Docs page ${page.path} as Markdown.`, mimeType: 'text/markdown' },
      async (uri) => {
        // Re-read through the index so a rebuilt site answers with the current text.
        const current = loadDocsIndex(siteDir).find((p) => p.path === page.path);
        if (!current) throw new AppError('docs_page_not_found', { detail: `No docs page at ${page.path}.` });
        return {
          contents: [{ uri: uri.href, mimeType: 'text/markdown', text: withPublicOrigin(current.markdown, publicUrl) }],
        };
      },
    );
  }
}
