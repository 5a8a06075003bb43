import type { ErrorDef } from '../catalog.ts';

// MCP transport errors and the docs-for-agents operations (docs search, docs
// page, OpenAPI lookup) that MCP, REST and CLI share.
export const MCP_ERRORS = {
  origin_not_allowed: {
    status: 403,
    title: 'Origin not allowed',
    layer: 'safety',
    retry: 'no',
    area: 'mcp',
    description:
      'The MCP request carried an `Origin` header that is neither a loopback origin nor one this server is configured to accept. Flowport rejects it so a web page cannot drive the MCP endpoint from a browser (DNS rebinding protection).',
    fix: 'Call the MCP endpoint from a desktop, IDE or server-side MCP client (they send no `Origin`). If a browser-based client is intended, the operator adds its origin to `FLOWPORT_MCP_ALLOWED_ORIGINS`.',
  },
  tool_renamed: {
    status: 404,
    title: 'Tool renamed',
    retry: 'no',
    area: 'mcp',
    description:
      'The MCP tool you called has a new name: every action has one name, a verb phrase such as `get_manifest` (ADR 1000), and the tool you called is its old spelling. Nothing ran. The problem names the tool to call in `new_name`.',
    fix: 'Call the tool named in `new_name` with the same arguments, and use that name from now on (`tools/list` lists every tool).',
  },
  docs_unavailable: {
    status: 503,
    title: 'Docs not available on this server',
    retry: 'no',
    area: 'mcp',
    description:
      'The docs tools read the Markdown pages the docs site publishes (and the committed OpenAPI contract). This server has no built docs site, so there is nothing to search or read here.',
    fix: 'Read the docs on the public docs site (its `/llms.txt` lists every page), or ask the operator to run `npm run build:site` before starting Flowport.',
  },
  docs_page_not_found: {
    status: 404,
    title: 'No such docs page',
    retry: 'no',
    area: 'mcp',
    description:
      'No published docs page matches the path you asked for. Paths look like `/reference/errors/missing_scope/` (the `.md` twin and absolute docs URLs are accepted too). The problem lists close matches when there are any.',
    fix: 'Search the docs first (`search_docs`, or `GET /agent/v1/docs/search?q=`) and read a path from the results, or pick one from `/llms.txt`.',
  },
  openapi_operation_not_found: {
    status: 404,
    title: 'No such OpenAPI operation',
    retry: 'no',
    area: 'mcp',
    description:
      'The OpenAPI contract has no operation with this `operationId`. The problem lists every known operation id in `known_operation_ids`.',
    fix: 'Use one of the ids in `known_operation_ids`, or read the manifest: each capability names its `operation_id`.',
  },
} as const satisfies Record<string, ErrorDef>;
