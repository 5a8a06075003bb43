// Maps AppError (or anything thrown) to an application/problem+json response.
import type { Context } from 'hono';
import type { ErrorCode } from '../errors/catalog.ts';
import { AppError, PROBLEM_CONTENT_TYPE, toProblem } from '../errors/problem.ts';
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
  'missing_scope',
  'rate_limited',
  'plan_limit_reached',
];

export function problemResponse(c: Context<AppEnv>, err: AppError, publicUrl: string): Response {
  const problem = toProblem(err, { publicUrl, requestId: c.get('requestId') ?? 'req_unknown', instance: c.req.path });
  const headers: Record<string, string> = { 'Content-Type': PROBLEM_CONTENT_TYPE };
  const retryAfter = problem.refusal?.retry_after_s;
  if (retryAfter !== undefined) headers['Retry-After'] = String(Math.max(1, Math.ceil(retryAfter)));
  if (
    err.code === 'missing_token' ||
    err.code === 'invalid_token' ||
    err.code === 'grant_expired' ||
    err.code === 'grant_revoked'
  ) {
    headers['WWW-Authenticate'] = `Bearer error="invalid_token"`;
  }
  return new Response(JSON.stringify(problem), { status: problem.status, headers });
}
