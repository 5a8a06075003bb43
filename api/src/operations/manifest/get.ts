// GET /agent/v1/manifest — public. What Flowport is, what it can do, where the
// contract and docs live, and the boundaries an agent must respect. Read it first.
import { z } from '@hono/zod-openapi';
import { AGENT_API_PREFIX } from '../../lib/package-info.ts';
import { defineOperation } from '../../core/types.ts';
import { readManifest } from '../../services/manifest.ts';

const Capability = z
  .object({
    operation_id: z.string(),
    method: z.string(),
    path: z.string().describe('Path template on the origin (it already starts with `/agent/v1`).'),
    url: z
      .string()
      .describe('Absolute URL template of the operation (the origin joined with `path`); fill `{…}` parameters.'),
    summary: z.string(),
    family: z.string(),
    kind: z.enum(['read', 'preview', 'execute']),
    scope: z.string().nullable(),
    scope_note: z
      .string()
      .nullable()
      .describe('When `scope` only admits the call: the scope that actually decides (e.g. confirming an intent).'),
    scope_any_of: z
      .array(z.string())
      .nullable()
      .describe(
        'When not null, the grant also needs one of these scopes (which one depends on the target, e.g. the intent kind); with none of them the call is always refused.',
      ),
    mcp_tool: z.string().nullable(),
    cli_command: z.string().nullable(),
  })
  .openapi('ManifestCapability');

export const Manifest = z
  .object({
    product: z.string().openapi({ example: 'Flowport' }),
    edition: z.string().openapi({ example: 'Shopify Flow' }),
    version: z.string(),
    build_commit: z.string(),
    api: z.object({
      version: z.string(),
      base_url: z
        .string()
        .describe('The API root (`<origin>/agent/v1`). Capability `path`s start with `/agent/v1`: use each `url`.'),
      openapi_url: z.string(),
      auth: z.object({
        scheme: z.literal('bearer'),
        header: z.literal('Authorization'),
        how_to_get_a_grant: z.string(),
      }),
    }),
    docs: z.object({
      index: z.string().describe('llms.txt: every docs page as Markdown, by section'),
      full: z.string(),
      api_reference: z.string(),
      api_reference_markdown: z.string(),
      mcp_reference: z.string(),
      mcp_reference_markdown: z.string(),
      cli_reference: z.string(),
      errors: z.string(),
      refusals: z.string(),
    }),
    mcp: z.object({
      url: z.string(),
      transport: z.literal('streamable-http'),
      reference: z.string(),
    }),
    cli: z.object({ command: z.string(), reference: z.string() }),
    capabilities: z.array(Capability),
    scopes: z.array(z.object({ scope: z.string(), description: z.string() })),
    tiers: z.array(z.object({ tier: z.string(), scopes: z.array(z.string()) })),
    safety_boundaries: z.array(z.string()),
    on_refusal: z.array(z.string()),
  })
  .openapi('Manifest');

export const getManifest = defineOperation({
  operationId: 'getManifest',
  method: 'get',
  path: `${AGENT_API_PREFIX}/manifest`,
  summary: 'Read the manifest',
  description:
    'Edition identity, capabilities, the OpenAPI contract, docs index, CLI and MCP references, scopes and safety boundaries. Public; read it before authenticated calls.',
  family: 'docs',
  kind: 'read',
  scope: null,
  meter: null,
  request: {},
  response: Manifest,
  errors: [],
  mcp: {
    name: 'get_manifest',
    title: 'Read the Flowport manifest',
    description:
      'Start here: learn what this Flowport edition can do, which scopes each capability needs, where the docs and OpenAPI contract live, and the safety boundaries to respect.',
  },
  cli: ['get-manifest'],
  run: async ({ ctx }) => readManifest({ ctx }),
});
