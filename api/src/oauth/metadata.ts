// Discovery (ADR 1400): the authorization server metadata (RFC 8414) and the protected resources
// Flowport serves (RFC 9728). The paths, lifetimes and resources are defined here once.
import { ALL_SCOPES, TIERS } from '../auth/scopes.ts';
import type { Config } from '../config.ts';
import { DOCS_PATHS, joinUrl } from '../docs-paths.ts';
import { AGENT_API_PREFIX, MCP_PATH } from '../lib/package-info.ts';

export const OAUTH_PATHS = {
  authorizationServerMetadata: '/.well-known/oauth-authorization-server',
  authorize: '/oauth/authorize',
  token: '/oauth/token',
  revoke: '/oauth/revoke',
  register: '/oauth/register',
} as const;

export const ACCESS_TOKEN_TTL_MS = 3_600_000;
export const AUTHORIZATION_CODE_TTL_MS = 5 * 60_000;
export const CONSENT_TTL_MS = 10 * 60_000;
/** Dynamic registrations allowed per client address per clock hour (all addresses: config.oauth). */
export const REGISTRATIONS_PER_HOUR = 20;
/** A dynamically registered client no merchant approved within this long expires. */
export const UNUSED_CLIENT_TTL_MS = 24 * 3_600_000;

/** Where a protected resource's RFC 9728 metadata is served: this prefix, then the resource's path. */
export const PROTECTED_RESOURCE_METADATA_PREFIX = '/.well-known/oauth-protected-resource';

/** The RFC 9728 metadata URL of the resource at `resourcePath` (MCP_PATH or AGENT_API_PREFIX). */
export function resourceMetadataUrl(publicUrl: string, resourcePath: string): string {
  return joinUrl(publicUrl, `${PROTECTED_RESOURCE_METADATA_PREFIX}${resourcePath}`);
}

/** The issuer is the public origin (and path, if any) of this Flowport. */
export function issuerOf(config: Config): string {
  return config.publicUrl.replace(/\/+$/, '');
}

/** Flowport's protected resources, by the URL an access token's `resource` (audience) names. */
export function resourcesOf(config: Config): { mcp: string; api: string } {
  return { mcp: joinUrl(config.publicUrl, MCP_PATH), api: joinUrl(config.publicUrl, AGENT_API_PREFIX) };
}

/** The scope values a client may request: every scope, and every tier name (a preset of scopes). */
export const REQUESTABLE_SCOPES: readonly string[] = [...TIERS, ...ALL_SCOPES];

/** RFC 8414 metadata (the MCP SDK clients in tests/auth/oauth.test.ts parse it with their schema). */
export function authorizationServerMetadata(config: Config): Record<string, unknown> {
  const issuer = issuerOf(config);
  return {
    issuer,
    authorization_endpoint: joinUrl(issuer, OAUTH_PATHS.authorize),
    token_endpoint: joinUrl(issuer, OAUTH_PATHS.token),
    registration_endpoint: joinUrl(issuer, OAUTH_PATHS.register),
    revocation_endpoint: joinUrl(issuer, OAUTH_PATHS.revoke),
    scopes_supported: [...REQUESTABLE_SCOPES],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    token_endpoint_auth_methods_supported: ['none'],
    revocation_endpoint_auth_methods_supported: ['none'],
    code_challenge_methods_supported: ['S256'],
    service_documentation: joinUrl(config.publicUrl, DOCS_PATHS.oauthReference),
    client_id_metadata_document_supported: true,
    authorization_response_iss_parameter_supported: true,
  };
}
