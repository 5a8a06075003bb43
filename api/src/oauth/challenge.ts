// The bearer challenge (RFC 6750 §3, RFC 9728 §5.1), built here once for every protected resource:
// the Agent Operations API (problem-response.ts) and the MCP endpoint (mcp/http.ts). ADR 1430.
//   no credentials      Bearer resource_metadata="…", scope="observer"
//   a bad token         Bearer resource_metadata="…", error="invalid_token", error_description="…"
//   a scope it lacks    Bearer error="insufficient_scope", scope="<needed>", resource_metadata="…"
// The 401 names the read-only tier: an MCP client picks the challenge's scope before the metadata's
// scopes_supported (the MCP authorization spec's scope selection), so a client that asks for
// nothing in particular is offered observer, and raises it later by step-up (the 403).
import type { ErrorCode } from '../errors/catalog.ts';
import type { AppError } from '../errors/problem.ts';
import { TIERS } from '../auth/scopes.ts';

/** The scope a 401 challenge names: the lowest tier (reads only). */
export const CHALLENGE_SCOPE: string = TIERS[0];

/** Codes answered with `error="invalid_token"` (the token was sent but cannot be used). */
const INVALID_TOKEN_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'invalid_token',
  'grant_expired',
  'grant_revoked',
  'access_token_expired',
  'token_audience_mismatch',
]);

/** A header value is printable ASCII: quotes, backslashes and anything else are dropped. */
const quoted = (value: string) => `"${value.replace(/["\\]|[^\x20-\x7e]/g, '')}"`;

/** The scopes a `missing_scope` refusal names (space-separated), or null. */
export function neededScopes(err: AppError): string | null {
  if (err.code !== 'missing_scope') return null;
  return err.options.requiredScope ?? err.options.anyOfScopes?.join(' ') ?? null;
}

/** The `WWW-Authenticate` value for `err` at the resource whose RFC 9728 metadata is `resourceMetadataUrl`, or null. */
export function bearerChallenge(err: AppError, resourceMetadataUrl: string): string | null {
  const meta = `resource_metadata=${quoted(resourceMetadataUrl)}`;
  // RFC 6750 §3.1: no error code when the request carried no credentials at all.
  if (err.code === 'missing_token') return `Bearer ${meta}, scope=${quoted(CHALLENGE_SCOPE)}`;
  if (INVALID_TOKEN_CODES.has(err.code))
    return `Bearer ${meta}, error="invalid_token", error_description=${quoted(err.options.reason ?? err.message)}`;
  const scope = neededScopes(err);
  if (scope) return `Bearer error="insufficient_scope", scope=${quoted(scope)}, ${meta}`;
  return null;
}
