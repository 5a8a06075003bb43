// The manifest (getManifest): what Flowport is, its capabilities as the registry lists them,
// where the contract and docs live, and the boundaries an agent must respect.
import { agentCommandLine, CLI_INVOCATION } from '../lib/command-line.ts';
import { ASK_FOR_A_GRANT, WHO_CREATES_GRANTS } from '../entry-points.ts';
import { ACTIONS, ALL_SCOPES, SCOPE_DESCRIPTIONS, TIER_SCOPES, TIERS } from '../auth/scopes.ts';
import { DOCS_PATHS, joinUrl } from '../docs-paths.ts';
import { API_VERSION, MCP_PATH, PRODUCT } from '../lib/package-info.ts';
import type { PublicContext } from '../core/types.ts';
import { PREVIEW_LIFETIME } from '../config.ts';

/** Every side effect an agent can cause: the governed actions (each an intent kind), in words. */
export const SIDE_EFFECTS: readonly string[] = ACTIONS.map((a) => a.replace(/_/g, ' '));

export const SAFETY_BOUNDARIES = [
  WHO_CREATES_GRANTS,
  `Every side effect (${SIDE_EFFECTS.join(', ')}) is an action intent: preview first, then confirm with an execute scope and an Idempotency-Key.`,
  'Reads never return endpoint secrets, grant tokens, Shopify tokens or raw sender auth headers.',
  'A grant sees only its own shop; ids of other shops answer 404.',
  '"delivered" means Shopify Flow accepted the trigger, not that the workflow actions ran.',
  'Shopify Flow has no idempotency: a replay starts a new workflow run.',
] as const;

export const ON_REFUSAL = [
  "Follow the refusal's own next steps first: retry_with (send the request again with that field), call (that operation), merchant_page (the merchant acts there).",
  'Read the docs page linked in the refusal (docs_url).',
  'Check this manifest for capabilities and boundaries.',
  'Inspect the OpenAPI contract for the exact request shape.',
  'If the action is still outside your authority, ask a human.',
] as const;

/** What Flowport is, what it can do, where the contract and docs live, and the boundaries an agent must respect (getManifest). */
export async function readManifest({ ctx }: { ctx: PublicContext }) {
  const { config } = ctx.services;
  const url = (p: string) => joinUrl(config.publicUrl, p);
  return {
    product: PRODUCT.name,
    edition: PRODUCT.edition,
    version: PRODUCT.version,
    build_commit: config.buildCommit,
    api: {
      version: API_VERSION,
      // The spec's `{base_url}`: every path (`/agent/v1/…`) joins it as is (ADR 0016).
      base_url: config.publicUrl.replace(/\/+$/, ''),
      openapi_url: url(DOCS_PATHS.openapiJson),
      auth: {
        scheme: 'bearer' as const,
        header: 'Authorization' as const,
        how_to_get_a_grant: `An MCP client with OAuth support connects by URL alone: Flowport is its own authorization server (\`/.well-known/oauth-authorization-server\`) and the merchant approves on a consent page. Otherwise ${ASK_FOR_A_GRANT.charAt(0).toLowerCase()}${ASK_FOR_A_GRANT.slice(1)}. Send it as \`Authorization: Bearer <GRANT_TOKEN>\`.`,
      },
    },
    docs: {
      index: url(DOCS_PATHS.llmsTxt),
      full: url(DOCS_PATHS.llmsFullTxt),
      api_reference: url(DOCS_PATHS.apiReference),
      api_reference_markdown: url(DOCS_PATHS.apiReferenceMd),
      mcp_reference: url(DOCS_PATHS.mcpReference),
      mcp_reference_markdown: url(DOCS_PATHS.mcpReferenceMd),
      cli_reference: url(DOCS_PATHS.cliReference),
      errors: url(DOCS_PATHS.errorsIndex),
      refusals: url(DOCS_PATHS.refusals),
      changelog: url(DOCS_PATHS.changelog),
    },
    mcp: { url: url(MCP_PATH), transport: 'streamable-http' as const, reference: url(DOCS_PATHS.mcpReference) },
    cli: { command: CLI_INVOCATION, reference: url(DOCS_PATHS.cliReference) },
    action_intents: {
      preview_lifetime_seconds: Math.round(config.intents.previewTtlMs / 1000),
      min_preview_lifetime_seconds: PREVIEW_LIFETIME.minSeconds,
      max_preview_lifetime_seconds: PREVIEW_LIFETIME.maxSeconds,
      request_field: PREVIEW_LIFETIME.field,
      docs_url: url(DOCS_PATHS.actionIntents),
    },
    capabilities: ctx.services.registry().map((op) => ({
      operation_id: op.operationId,
      method: op.method.toUpperCase(),
      path: op.path,
      url: url(op.path),
      summary: op.summary,
      family: op.family,
      kind: op.kind,
      scope: op.scope,
      scope_note: op.scopeNote ?? null,
      scope_any_of: op.scopeAnyOf ? [...op.scopeAnyOf] : null,
      mcp_tool: op.mcp?.name ?? null,
      cli_command: agentCommandLine(op),
    })),
    scopes: ALL_SCOPES.map((scope) => ({ scope, description: SCOPE_DESCRIPTIONS[scope] })),
    tiers: TIERS.map((tier) => ({ tier, scopes: [...TIER_SCOPES[tier]] })),
    safety_boundaries: [...SAFETY_BOUNDARIES],
    on_refusal: [...ON_REFUSAL],
  };
}
