// GET /agent/v1/manifest — public. What Flowport is, what it can do, where the
// contract and docs live, and the boundaries an agent must respect. Read it first.
import { z } from '@hono/zod-openapi';
import { defineRead } from '../define.ts';
import { ScopeFacts, nullableText } from '../read-schemas.ts';
import { readManifest } from '../../services/manifest.ts';

const Capability = z
  .object({
    operation_id: z.string().describe('OpenAPI `operationId` of the operation (e.g. `listEvents`).'),
    method: z.string().describe('HTTP method, upper case (`GET` or `POST`).'),
    path: z.string().describe('Path template on the origin (it already starts with `/agent/v1`).'),
    url: z
      .string()
      .describe('Absolute URL template of the operation (the origin joined with `path`); fill `{…}` parameters.'),
    summary: z.string().describe('One-line summary of what the operation does.'),
    family: z
      .string()
      .describe('Operation family (e.g. `events`, `endpoints`, `intents`); the docs group operations by it.'),
    kind: z
      .enum(['read', 'preview', 'execute'])
      .describe('`read` changes nothing; `preview` creates an action intent; `execute` confirms or cancels one.'),
    scope: nullableText('Grant scope the call needs; null when the operation is public.'),
    scope_note: nullableText(
      'When `scope` only admits the call: the scope that actually decides (e.g. confirming an intent).',
    ),
    scope_any_of: z
      .array(z.string())
      .nullable()
      .describe(
        'When not null, the grant also needs one of these scopes (which one depends on the target, e.g. the intent kind); with none of them the call is always refused.',
      ),
    mcp_tool: nullableText('Name of the MCP tool serving this operation; null when MCP does not offer it.'),
    cli_command: nullableText('`flowport` CLI command serving this operation; null when the CLI does not offer it.'),
  })
  .openapi('ManifestCapability');

export const Manifest = z
  .object({
    product: z.string().openapi({ example: 'Flowport', description: 'Product name, always `Flowport`.' }),
    edition: z
      .string()
      .openapi({ example: 'Shopify Flow', description: 'Which edition this is (the target it delivers to).' }),
    version: z.string().describe('Product version (semver) of the running server.'),
    build_commit: z.string().describe('Git commit the server was built from, or `unknown`.'),
    api: z
      .object({
        version: z.string().describe('Agent Operations API version (the `v1` in `/agent/v1`).'),
        base_url: z
          .string()
          .describe(
            'The base address (`{base_url}` of the spec, the origin this server answers on). Every path joins it as is: capability `path`s and the OpenAPI paths start with `/agent/v1`, so `{base_url}/agent/v1/manifest` is this manifest; each capability `url` is that join.',
          ),
        openapi_url: z.string().describe('Absolute URL of this OpenAPI 3.1 document.'),
        auth: z
          .object({
            scheme: z.literal('bearer').describe('Auth scheme: a bearer grant token.'),
            header: z.literal('Authorization').describe('Header carrying `Bearer <GRANT_TOKEN>`.'),
            how_to_get_a_grant: z.string().describe('How a merchant issues a grant token (docs URL and CLI command).'),
          })
          .describe('How to authenticate calls that need a grant.'),
      })
      .describe('Where the HTTP API lives and how to call it.'),
    docs: z
      .object({
        index: z.string().describe('llms.txt: every docs page as Markdown, by section'),
        full: z.string().describe('`llms-full.txt`: every docs page in one Markdown file (large; prefer `index`).'),
        api_reference: z.string().describe('HTML index of the API reference (one page per operation).'),
        api_reference_markdown: z.string().describe('Markdown twin of the API reference index.'),
        mcp_reference: z.string().describe('HTML MCP reference (tools and resources).'),
        mcp_reference_markdown: z.string().describe('Markdown twin of the MCP reference.'),
        cli_reference: z.string().describe('CLI reference page.'),
        errors: z.string().describe('Error-code catalog page: every `code` with cause and fix.'),
        refusals: z.string().describe('Page explaining refusals (`Refusal` layers and next steps).'),
        changelog: z.string().describe('Changelog: breaking changes of the contract, dated, old shape → new shape.'),
      })
      .describe('Absolute URLs of the docs an agent should read.'),
    mcp: z
      .object({
        url: z.string().describe('Absolute URL of the MCP endpoint.'),
        transport: z.literal('streamable-http').describe('MCP transport: Streamable HTTP.'),
        reference: z.string().describe('Docs page listing the MCP tools and how to connect clients.'),
      })
      .describe('How to reach Flowport over MCP.'),
    cli: z
      .object({
        command: z.string().describe('Command to run the CLI (e.g. `npx flowport`).'),
        reference: z.string().describe('Docs page listing every CLI command.'),
      })
      .describe('How to reach Flowport from the CLI.'),
    capabilities: z
      .array(Capability)
      .describe('Every operation: how to call it by HTTP, MCP and CLI, and the scope it needs.'),
    action_intents: z
      .object({
        preview_lifetime_seconds: z
          .number()
          .int()
          .describe('How long a preview stays confirmable when it asks for nothing else (900: 15 minutes by default).'),
        min_preview_lifetime_seconds: z.number().int().describe('The shortest lifetime a preview may ask for.'),
        max_preview_lifetime_seconds: z
          .number()
          .int()
          .describe(
            'The longest lifetime a preview may ask for (86400: 24 hours), to prepare an action and wait for a human.',
          ),
        request_field: z
          .literal('expires_in_seconds')
          .describe('The body field of every preview that asks for a lifetime.'),
        docs_url: z.string().describe('The action-intents page: preview, confirm, states and lifetime.'),
      })
      .describe('How action intents behave: how long a preview stays confirmable, and how to ask for longer.'),
    scopes: z.array(ScopeFacts).describe('Every grant scope.'),
    tiers: z
      .array(
        z.object({
          tier: z.string().describe('Tier name (e.g. `observer`).'),
          scopes: z.array(z.string()).describe('Scopes a grant of this tier holds.'),
        }),
      )
      .describe('Grant tiers and the scopes each bundles.'),
    safety_boundaries: z
      .array(z.string())
      .describe('Things Flowport never does for an agent (e.g. return secrets, change payloads); plain sentences.'),
    on_refusal: z.array(z.string()).describe('What to do when a call is refused, as plain steps.'),
  })

  .openapi('Manifest');

export const getManifest = defineRead({
  name: 'get_manifest',
  path: '/manifest',
  summary: 'Read the manifest',
  description:
    'Edition identity, capabilities, the OpenAPI contract, docs index, CLI and MCP references, scopes and safety boundaries. Public: no grant needed; read it before your first authenticated call.',
  family: 'docs',
  scope: null,
  meter: null,
  response: Manifest,
  mcp: {
    title: 'Read the Flowport manifest',
    description:
      'Start here: learn what this Flowport edition can do, which scopes each capability needs, where the docs and OpenAPI contract live, and the safety boundaries to respect.',
  },
  run: async ({ ctx }) => readManifest({ ctx }),
});
