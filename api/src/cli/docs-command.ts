// `flowport docs`: where the docs live, read from the server's public manifest
// (no grant needed). When the server cannot be reached the pointers are derived
// from the base URL and the docs paths, and the answer says so.
import { DOCS_PATHS, joinUrl } from '../docs-paths.ts';
import { MCP_PATH } from '../lib/package-info.ts';
import { type Connection, request, UnreachableError } from './client.ts';

export interface DocsPointer {
  name: string;
  url: string;
  what: string;
}

export interface DocsAnswer {
  source: 'manifest' | 'derived';
  base_url: string;
  note?: string;
  pointers: DocsPointer[];
}

/** `/reference/cli/` → `/reference/cli.md`: every docs page has a Markdown twin there. */
export function markdownTwin(url: string): string {
  return url.endsWith('/') ? `${url.slice(0, -1)}.md` : `${url}.md`;
}

interface ManifestDocs {
  api: { openapi_url: string };
  docs: {
    index: string;
    full: string;
    api_reference: string;
    api_reference_markdown: string;
    mcp_reference: string;
    mcp_reference_markdown: string;
    cli_reference: string;
    errors: string;
    refusals: string;
  };
  mcp: { url: string };
}

function pointers(m: ManifestDocs, manifestUrl: string): DocsPointer[] {
  return [
    { name: 'llms.txt', url: m.docs.index, what: 'Index of every docs page as Markdown, by section (start here).' },
    { name: 'llms-full.txt', url: m.docs.full, what: 'Every docs page in one Markdown file.' },
    {
      name: 'Markdown twins',
      url: m.docs.api_reference_markdown,
      what: 'Every page has a Markdown twin: drop the trailing slash and add .md (this one is the API reference).',
    },
    { name: 'Manifest', url: manifestUrl, what: 'Edition, capabilities, scopes and safety boundaries (public JSON).' },
    { name: 'OpenAPI', url: m.api.openapi_url, what: 'The exact request and response contract.' },
    { name: 'API reference', url: m.docs.api_reference, what: 'Every operation, for people.' },
    { name: 'CLI reference', url: m.docs.cli_reference, what: 'Every flowport command, exit codes.' },
    { name: 'CLI reference (Markdown)', url: markdownTwin(m.docs.cli_reference), what: 'The same as Markdown.' },
    { name: 'MCP endpoint', url: m.mcp.url, what: 'Streamable HTTP; send the grant token as a bearer token.' },
    { name: 'MCP reference', url: m.docs.mcp_reference, what: 'Client setup and every tool.' },
    { name: 'MCP reference (Markdown)', url: m.docs.mcp_reference_markdown, what: 'The same as Markdown.' },
    { name: 'Error codes', url: m.docs.errors, what: 'One page per stable error code.' },
    { name: 'Refusals', url: m.docs.refusals, what: 'What to do when Flowport refuses an action.' },
  ];
}

function derived(baseUrl: string): ManifestDocs {
  const u = (p: string) => joinUrl(baseUrl, p);
  return {
    api: { openapi_url: u(DOCS_PATHS.openapiJson) },
    docs: {
      index: u(DOCS_PATHS.llmsTxt),
      full: u(DOCS_PATHS.llmsFullTxt),
      api_reference: u(DOCS_PATHS.apiReference),
      api_reference_markdown: u(DOCS_PATHS.apiReferenceMd),
      mcp_reference: u(DOCS_PATHS.mcpReference),
      mcp_reference_markdown: u(DOCS_PATHS.mcpReferenceMd),
      cli_reference: u(DOCS_PATHS.cliReference),
      errors: u(DOCS_PATHS.errorsIndex),
      refusals: u(DOCS_PATHS.refusals),
    },
    mcp: { url: u(MCP_PATH) },
  };
}

export async function docsPointers(conn: Connection): Promise<DocsAnswer> {
  const manifestUrl = joinUrl(conn.baseUrl, DOCS_PATHS.manifestApi);
  try {
    const res = await request(conn, { method: 'GET', path: DOCS_PATHS.manifestApi, auth: false });
    const m = res.json as ManifestDocs | null;
    if (res.ok && m?.docs?.index && m.mcp?.url && m.api?.openapi_url)
      return { source: 'manifest', base_url: conn.baseUrl, pointers: pointers(m, manifestUrl) };
    return {
      source: 'derived',
      base_url: conn.baseUrl,
      note: `${manifestUrl} answered HTTP ${res.status} without a Flowport manifest; these pointers are derived from the base URL.`,
      pointers: pointers(derived(conn.baseUrl), manifestUrl),
    };
  } catch (err) {
    if (!(err instanceof UnreachableError)) throw err;
    return {
      source: 'derived',
      base_url: conn.baseUrl,
      note: `${err.message} These pointers are derived from the base URL.`,
      pointers: pointers(derived(conn.baseUrl), manifestUrl),
    };
  }
}

export function renderDocsPointers(a: DocsAnswer): string {
  const width = Math.max(...a.pointers.map((p) => p.name.length));
  const lines = a.pointers.map((p) => `${p.name.padEnd(width)}  ${p.url}\n${' '.repeat(width)}  ${p.what}`);
  const head = a.source === 'manifest' ? `Flowport docs (from the manifest at ${a.base_url})` : 'Flowport docs';
  return [head, '', ...lines, ...(a.note ? ['', `Note: ${a.note}`] : [])].join('\n');
}
