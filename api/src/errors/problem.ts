// RFC 9457 problem details, built from the error catalog. The HTTP API and MCP
// both return exactly this object, so a client learns one error shape.
import { DOCS_PATHS, errorDocsPath, joinUrl } from '../docs-paths.ts';
import { MERCHANT_PATH } from '../entry-points.ts';
import { ERROR_CATALOG, type ErrorCode, type ErrorDef, type RefusalLayer } from './catalog.ts';

export interface NextStep {
  kind: 'retry_with' | 'call' | 'merchant_page' | 'docs' | 'manifest' | 'openapi' | 'ask_human';
  description: string;
  url?: string;
  /** retry_with: the request field to send again (its CLI flag is the field in kebab case). */
  field?: string;
  /** retry_with: the value to send it with. */
  value?: string | number | boolean;
  /** call: the operation to call (its MCP tool and CLI command are named from it). */
  operation_id?: string;
}

export interface Refusal {
  layer: RefusalLayer;
  reason: string;
  required_scope?: string;
  retry_after_s?: number;
  next_steps: NextStep[];
}

export interface FieldError {
  path: string;
  message: string;
}

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ErrorCode;
  docs_url: string;
  request_id: string;
  instance?: string;
  errors?: FieldError[];
  refusal?: Refusal;
  [extra: string]: unknown;
}

export interface AppErrorOptions {
  detail?: string;
  /** Refusal reason (short, human-readable); defaults to the detail. */
  reason?: string;
  requiredScope?: string;
  /**
   * `missing_scope` when any one of several scopes would do and which is not known (confirming an
   * intent without any execute scope): named in the `WWW-Authenticate` challenge, not the body.
   */
  anyOfScopes?: readonly string[];
  retryAfterS?: number;
  errors?: FieldError[];
  /** Extra members added to the problem object (must be safe to show). */
  extra?: Record<string, unknown>;
  /** `method_not_allowed`: the methods the resource answers, sent as the `Allow` header (RFC 9110). */
  allow?: readonly string[];
}

/** The one error type services throw. Status and layer come from the catalog. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly options: AppErrorOptions;
  constructor(code: ErrorCode, options: AppErrorOptions = {}) {
    super(options.detail ?? ERROR_CATALOG[code].title);
    this.name = 'AppError';
    this.code = code;
    this.options = options;
  }
  get status(): number {
    return ERROR_CATALOG[this.code].status;
  }
}

export function errorDocsUrl(publicUrl: string, code: ErrorCode): string {
  return joinUrl(publicUrl, errorDocsPath(code));
}

/** What fixes this code (the catalog's steps), then the ordered client behaviour the spec prescribes on refusal. */
export function nextSteps(publicUrl: string, code: ErrorCode): NextStep[] {
  const def: ErrorDef = ERROR_CATALOG[code];
  const specific = (def.steps ?? []).map((step): NextStep => {
    if (step.kind === 'retry_with')
      return { kind: step.kind, description: step.description, field: step.field, value: step.value };
    if (step.kind === 'call') return { kind: step.kind, description: step.description, operation_id: step.operation };
    return { kind: step.kind, description: step.description, url: joinUrl(publicUrl, MERCHANT_PATH) };
  });
  return [
    ...specific,
    { kind: 'docs', description: 'Read the docs page for this code.', url: errorDocsUrl(publicUrl, code) },
    {
      kind: 'manifest',
      description: 'Check the manifest for capabilities and boundaries.',
      url: joinUrl(publicUrl, DOCS_PATHS.manifestApi),
    },
    {
      kind: 'openapi',
      description: 'Inspect the OpenAPI contract for the exact shape.',
      url: joinUrl(publicUrl, DOCS_PATHS.openapiJson),
    },
    {
      kind: 'ask_human',
      description:
        'If the action is still outside your authority, ask the merchant (a human) to act or to widen the grant.',
    },
  ];
}

export function toProblem(err: AppError, ctx: { publicUrl: string; requestId: string; instance?: string }): Problem {
  const def = ERROR_CATALOG[err.code];
  const docsUrl = errorDocsUrl(ctx.publicUrl, err.code);
  const o = err.options;
  const problem: Problem = {
    type: docsUrl,
    title: def.title,
    status: def.status,
    detail: o.detail ?? def.description,
    code: err.code,
    docs_url: docsUrl,
    request_id: ctx.requestId,
  };
  if (ctx.instance) problem.instance = ctx.instance;
  if (o.errors?.length) problem.errors = o.errors;
  if ('layer' in def && def.layer) {
    const refusal: Refusal = {
      layer: def.layer,
      reason: o.reason ?? o.detail ?? def.title,
      next_steps: nextSteps(ctx.publicUrl, err.code),
    };
    if (o.requiredScope) refusal.required_scope = o.requiredScope;
    if (o.retryAfterS !== undefined) refusal.retry_after_s = o.retryAfterS;
    problem.refusal = refusal;
  }
  if (o.extra) {
    for (const [k, v] of Object.entries(o.extra)) if (!(k in problem)) problem[k] = v;
  }
  return problem;
}

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';
