// Maps AppError (or anything thrown) to an application/problem+json response.
import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { bearerChallenge } from '../oauth/challenge.ts';
import { resourceMetadataUrl } from '../oauth/metadata.ts';
import type { ErrorCode } from '../errors/catalog.ts';
import { AGENT_API_PREFIX } from '../lib/package-info.ts';
import { type AppError, PROBLEM_CONTENT_TYPE, toProblem } from '../errors/problem.ts';
import type { AppEnv } from './types.ts';

/** Codes any public operation can return. */
export const COMMON_ERRORS_PUBLIC: readonly ErrorCode[] = ['invalid_request', 'internal_error'];
/** Codes any grant-scoped operation can return (authentication, scope, usage). */
export const COMMON_ERRORS_SCOPED: readonly ErrorCode[] = [
  ...COMMON_ERRORS_PUBLIC,
  'missing_token',
  'invalid_token',
  'grant_expired',
  'grant_revoked',
  'access_token_expired',
  'token_audience_mismatch',
  'missing_scope',
  'rate_limited',
  'plan_limit_reached',
];

/** Status, headers and JSON body of a problem: shared by Hono routes and the Node intake fast path. */
export function problemParts(
  err: AppError,
  ctx: {
    publicUrl: string;
    requestId: string;
    instance?: string;
    /** The protected resource the bearer challenge names (its path): the Agent Operations API unless said. */
    resourcePath?: string;
  },
): { status: number; headers: Record<string, string>; body: string } {
  const problem = toProblem(err, ctx);
  const headers: Record<string, string> = { 'Content-Type': PROBLEM_CONTENT_TYPE };
  const retryAfter = problem.refusal?.retry_after_s ?? err.options.retryAfterS;
  if (retryAfter !== undefined) headers['Retry-After'] = String(Math.max(1, Math.ceil(retryAfter)));
  if (err.options.allow?.length) headers.Allow = err.options.allow.join(', ');
  // The bearer challenge, built once (oauth/challenge.ts).
  const challenge = bearerChallenge(err, resourceMetadataUrl(ctx.publicUrl, ctx.resourcePath ?? AGENT_API_PREFIX));
  if (challenge !== null) headers['WWW-Authenticate'] = challenge;
  return { status: problem.status, headers, body: JSON.stringify(problem) };
}

/** Keeps headers a route set with `c.header()` before it threw (`Allow` on a 405, `Cache-Control` …). */
export function problemResponse(
  c: Context<AppEnv>,
  err: AppError,
  publicUrl: string,
  resourcePath: string = AGENT_API_PREFIX,
): Response {
  const p = problemParts(err, {
    publicUrl,
    requestId: c.get('requestId') ?? 'req_unknown',
    instance: c.req.path,
    resourcePath,
  });
  return c.newResponse(p.body, p.status as ContentfulStatusCode, p.headers);
}
