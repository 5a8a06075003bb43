// Derives the /agent/v1 HTTP routes (and the OpenAPI document) from the registry.
import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { ERROR_CATALOG, ERROR_CODES, type ErrorCode } from '../errors/catalog.ts';
import { AppError } from '../errors/problem.ts';
import { PRODUCT } from '../lib/package-info.ts';
import { WHO_CREATES_GRANTS } from '../entry-points.ts';
import { IDEMPOTENCY_KEY_MAX_LENGTH, IDEMPOTENCY_KEY_PATTERN } from '../intents/idempotency.ts';
import { closestName } from '../lib/suggest.ts';
import { resourcesOf } from '../oauth/metadata.ts';
import { refuseUnknownFields, type UnknownField, unknownFields } from '../operations/closed-input.ts';
import { recordGrantUse } from '../usage/grant-use.ts';
import { authenticateToken, invokeOperation } from '../operations/pipeline.ts';
import type { AnyOperation, Services } from '../core/types.ts';
import { operationErrorCodes, reportUndeclaredError } from './declared-errors.ts';
import type { AppEnv } from './types.ts';
import { polishOpenApiDocument } from './openapi-polish.ts';

export const GRANT_SECURITY_SCHEME = 'grantToken';

/** Enforced, with every route's limit, by the app's input guard (./input-guard.ts) before authentication. */
export { AGENT_API_MAX_BODY_BYTES } from './input-guard.ts';

const RefusalSchema = z
  .object({
    layer: z
      .enum(['capability', 'authority', 'usage', 'target_state', 'safety', 'product_boundary'])
      .describe(
        'Which check refused: `capability` (no such operation here), `authority` (grant lacks the scope), `usage` (rate or plan limit), `target_state` (the target is not in a state that allows it), `safety` (an acknowledgement or guard is missing), `product_boundary` (Flowport never does this).',
      ),
    reason: z.string().describe('Why the call was refused, in one plain sentence.'),
    required_scope: z.string().optional().describe('Scope the grant would need (only for `authority` refusals).'),
    retry_after_s: z
      .number()
      .optional()
      .describe('Seconds to wait before retrying (only for `usage` refusals); also sent as `Retry-After`.'),
    next_steps: z
      .array(
        z.object({
          kind: z
            .enum(['retry_with', 'call', 'merchant_page', 'docs', 'manifest', 'openapi', 'ask_human'])
            .describe(
              "What the step is. First the steps that fix this code (the error catalog names them): `retry_with` (send the request again with `field` set to `value`; the CLI's flag is the field in kebab case), `call` (call `operation_id`: its MCP tool and CLI command have the same name), `merchant_page` (the merchant acts on the merchant page at `url`). Then the generic ones: a docs page, the manifest, the OpenAPI contract, asking the merchant.",
            ),
          description: z.string().describe('What to do, in one sentence.'),
          url: z.string().optional().describe('Absolute URL to follow, when the step has one.'),
          field: z.string().optional().describe('`retry_with`: the request field to send again.'),
          // One schema with a list of types rather than an anyOf of three: Scalar's reference page
          // refuses the document with a described anyOf of primitives in this nested object.
          value: z
            .union([z.string(), z.number(), z.boolean()])
            .optional()
            .openapi({ type: ['string', 'number', 'boolean'] as never, anyOf: undefined })
            .describe('`retry_with`: the value to send the field with (a string, number or boolean).'),
          operation_id: z.string().optional().describe('`call`: the operation to call.'),
        }),
      )
      .describe('What to do next: the steps that fix this code first, then the generic ones.'),
  })
  .openapi('Refusal');

export const ProblemSchema = z
  .object({
    type: z.string().describe('Docs URL for this error code'),
    title: z.string().describe('Short, stable title of the error code.'),
    status: z.number().int().describe('HTTP status code, repeated from the response.'),
    detail: z.string().describe('What went wrong in this request, in plain words (never secrets).'),
    code: z
      .enum(ERROR_CODES as [ErrorCode, ...ErrorCode[]])
      .describe('Stable machine-readable error code; branch on this, not on `title` or `detail`.'),
    docs_url: z.string().describe("Absolute URL of the error code's docs page (cause and fix)."),
    request_id: z.string().describe('Id of this request (also the `X-Request-Id` header); quote it to support.'),
    instance: z.string().optional().describe('Path of the request that failed.'),
    errors: z
      .array(
        z.object({
          path: z.string().describe('Where in the input the problem is (JSON path, query or header name).'),
          message: z.string().describe('What is wrong there.'),
        }),
      )
      .optional()
      .describe('For validation errors: one entry per invalid field.'),
    refusal: RefusalSchema.optional().describe('Present when the call was refused by policy rather than malformed.'),
  })
  .catchall(z.unknown())
  .openapi('Problem');

export { operationErrorCodes } from './declared-errors.ts';

interface HeaderSpec {
  description: string;
  required?: boolean;
  schema: { type: 'string' | 'integer' };
}

/** The response headers a client may need, described once; responseHeaders() says where each is sent. */
export const RESPONSE_HEADERS = {
  'X-Request-Id': {
    description:
      "The id of this request (`req_…`), also in a problem's `request_id`; quote it when asking for support.",
    required: true,
    schema: { type: 'string' },
  },
  'WWW-Authenticate': {
    description:
      'The bearer challenge (RFC 6750, RFC 9728): `Bearer resource_metadata="<protected resource metadata URL>", scope="observer"` when the request carried no credentials (the read-only tier: an OAuth client asks for it first and for more by step-up), `Bearer resource_metadata="…", error="invalid_token", error_description="…"` when the token is invalid, expired or revoked.',
    required: true,
    schema: { type: 'string' },
  },
  'Retry-After': {
    description: 'Seconds to wait before retrying, sent when the refusal says when (`refusal.retry_after_s`).',
    schema: { type: 'integer' },
  },
  Allow: {
    description: 'The methods this path answers (RFC 9110), sent with 405.',
    required: true,
    schema: { type: 'string' },
  },
} as const satisfies Record<string, HeaderSpec>;

export type ResponseHeaderName = keyof typeof RESPONSE_HEADERS;

/** The response headers sent with `status` for these codes (the same rules problemParts() applies). */
export function responseHeaders(status: number, codes: readonly ErrorCode[]): ResponseHeaderName[] {
  const out: ResponseHeaderName[] = ['X-Request-Id'];
  if (status === 401) out.push('WWW-Authenticate');
  if (status === 405) out.push('Allow');
  if (codes.some((c) => RETRY_AFTER_CODES.has(c))) out.push('Retry-After');
  return out;
}

/** Sent with a 403 `missing_scope` (RFC 6750 §3.1), not with the other 403s. */
const INSUFFICIENT_SCOPE_HEADER: HeaderSpec = {
  description:
    'With `missing_scope` only: `Bearer error="insufficient_scope", scope="<required scope>", resource_metadata="<protected resource metadata URL>"`, so an OAuth client can ask the merchant for a grant that covers the call. Confirming an intent with a grant that holds no execute scope names every execute scope (space-separated; the intent kind\'s one is enough).',
  schema: { type: 'string' },
};

/** Codes whose refusal can carry `retry_after_s` (and so a Retry-After header). */
const RETRY_AFTER_CODES = new Set<ErrorCode>([
  'rate_limited',
  'idempotency_key_in_use',
  'service_unavailable',
  'store_full',
]);

function headersObject(names: readonly ResponseHeaderName[]) {
  return Object.fromEntries(names.map((n) => [n, RESPONSE_HEADERS[n]]));
}

function errorResponses(op: AnyOperation) {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of operationErrorCodes(op)) {
    const status = ERROR_CATALOG[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const out: Record<
    string,
    { description: string; headers: Record<string, HeaderSpec>; content: Record<string, { schema: z.ZodType }> }
  > = {};
  for (const [status, codes] of [...byStatus.entries()].sort((a, b) => a[0] - b[0])) {
    out[String(status)] = {
      description: codes
        .map((c) =>
          c === 'method_not_allowed'
            ? `\`${c}\`: any other method on this path (the \`Allow\` header lists the ones it answers)`
            : `\`${c}\`: ${ERROR_CATALOG[c].title}`,
        )
        .join('; '),
      headers: {
        ...headersObject(responseHeaders(status, codes)),
        ...(status === 403 && codes.includes('missing_scope') ? { 'WWW-Authenticate': INSUFFICIENT_SCOPE_HEADER } : {}),
      },
      content: { 'application/problem+json': { schema: ProblemSchema } },
    };
  }
  return out;
}

/** Query parameters and JSON body fields of an HTTP request that `op` does not define. */
async function unknownHttpInput(op: AnyOperation, c: Context<AppEnv>): Promise<UnknownField[]> {
  const found: UnknownField[] = [];
  const queryNames = Object.keys(op.request.query?.shape ?? {});
  for (const name of Object.keys(c.req.queries())) {
    if (!queryNames.includes(name))
      found.push({ location: 'query', path: name, did_you_mean: closestName(name, queryNames) });
  }
  if (c.req.method !== 'GET' && /json/i.test(c.req.header('content-type') ?? '')) {
    // A body that is not JSON is left to the validator (invalid_json).
    const body: unknown = await c.req.json().catch(() => undefined);
    if (op.request.body) found.push(...unknownFields(op.request.body, body, 'body'));
    else if (typeof body === 'object' && body !== null && !Array.isArray(body))
      for (const name of Object.keys(body)) found.push({ location: 'body', path: name, did_you_mean: null });
  }
  return found;
}

/**
 * A request body the contract marks required is required: a POST with none (no content type, no
 * bytes) is refused, never run with the defaults. `{}` takes them. A body without a content type
 * is left to the media type check (415).
 */
async function refuseMissingBody(c: Context<AppEnv>): Promise<void> {
  if (c.req.header('content-type') || (await c.req.text()) !== '') return;
  throw new AppError('invalid_request', {
    detail:
      'This operation takes a JSON request body. Send `{}` (with `Content-Type: application/json`) for the defaults.',
    errors: [{ path: '(body)', message: 'Required: a JSON object (`{}` for the defaults).' }],
  });
}

function bearerToken(c: Context): string | null {
  const h = c.req.header('authorization');
  if (!h) return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
  return m?.[1] ?? '';
}

/**
 * What runs before an operation's validators and handler: the check that every code the route
 * answers is declared (around everything), authentication first for a grant-scoped call, then
 * closed input (unknown fields, a missing required body).
 */
function routeMiddleware(op: AnyOperation, getServices: () => Services) {
  const closedInput = async (c: Context<AppEnv>, next: () => Promise<void>) => {
    // Unknown query parameters and body fields are refused before validation (unknown_field), never dropped.
    refuseUnknownFields(await unknownHttpInput(op, c));
    if (op.request.body) await refuseMissingBody(c);
    await next();
  };
  const declaredOnly = async (c: Context<AppEnv>, next: () => Promise<void>) => {
    await next();
    if (c.error instanceof AppError) reportUndeclaredError(op, c.error.code, getServices(), 'http');
  };
  return op.scope !== null
    ? [declaredOnly, authenticateBeforeInput(getServices), closedInput]
    : [declaredOnly, closedInput];
}

export function buildAgentRouter(getServices: () => Services, operations: readonly AnyOperation[]) {
  const router = new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      if (!result.success) {
        const issues = result.error.issues.map((i) => ({
          path: i.path.map(String).join('.') || '(root)',
          message: i.message,
        }));
        throw new AppError('invalid_request', {
          detail: `Invalid request: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`,
          errors: issues,
        });
      }
    },
  });
  router.openAPIRegistry.registerComponent('securitySchemes', GRANT_SECURITY_SCHEME, {
    type: 'http',
    scheme: 'bearer',
    description: `A grant token, or an OAuth access token issued for the resource \`/agent/v1\` after the merchant approved (see \`/.well-known/oauth-authorization-server\`). ${WHO_CREATES_GRANTS} Send \`Authorization: Bearer <TOKEN>\`.`,
  });

  for (const op of operations) {
    const request: Record<string, unknown> = {};
    if (op.request.params) request.params = op.request.params;
    if (op.request.query) request.query = op.request.query;
    if (op.headers?.length) {
      // Declared request headers (e.g. Idempotency-Key) appear in the contract; the operation enforces them.
      request.headers = declaredHeaders(op.headers);
    }
    if (op.request.body) {
      request.body = { content: { 'application/json': { schema: op.request.body } }, required: true };
    }
    const successStatus = op.successStatus ?? 200;
    const route = createRoute({
      middleware: routeMiddleware(op, getServices),
      method: op.method,
      path: op.path,
      operationId: op.operationId,
      summary: op.summary,
      description: op.description,
      tags: [op.family],
      // One security requirement per way to hold what the call needs: `scope` and, where the
      // target decides (confirm, cancel), one of `scopeAnyOf` (OpenAPI: alternatives are OR-ed).
      security: op.scope
        ? op.scopeAnyOf?.length
          ? op.scopeAnyOf.map((s) => ({ [GRANT_SECURITY_SCHEME]: [op.scope, s] }))
          : [{ [GRANT_SECURITY_SCHEME]: [op.scope] }]
        : [],
      'x-flowport-scope': op.scope,
      ...(op.scopeAnyOf?.length ? { 'x-flowport-scope-any-of': op.scopeAnyOf } : {}),
      'x-flowport-kind': op.kind,
      'x-flowport-meter': op.meter,
      'x-flowport-mcp-tool': op.mcp?.name ?? null,
      'x-flowport-error-codes': operationErrorCodes(op),
      request,
      responses: {
        [successStatus]: {
          description: op.summary,
          headers: headersObject(responseHeaders(successStatus, [])),
          content: { 'application/json': { schema: op.response } },
        },
        ...errorResponses(op),
      },
    } as Parameters<typeof createRoute>[0]);

    router.openapi(route, async (c) => {
      const valid = c.req as unknown as { valid(t: string): Record<string, unknown> };
      const input: Record<string, unknown> = {
        ...(op.request.params ? valid.valid('param') : {}),
        ...(op.request.query ? valid.valid('query') : {}),
        ...(op.request.body ? valid.valid('json') : {}),
      };
      const headers: Record<string, string | undefined> = {};
      for (const h of op.headers ?? []) headers[h] = c.req.header(h);
      const out = await invokeOperation(op, {
        services: getServices(),
        requestId: c.get('requestId'),
        transport: 'http',
        token: bearerToken(c),
        principal: op.scope !== null ? c.get('principal') : undefined,
        headers,
        input,
      });
      return c.json(out as object, successStatus);
    });
  }
  return router;
}

export function openApiDocument(router: OpenAPIHono<AppEnv>) {
  const doc = router.getOpenAPI31Document({
    openapi: '3.1.0',
    info: {
      title: `${PRODUCT.name} Agent Operations API`,
      version: PRODUCT.version,
      description:
        'The scoped contract merchants, support and merchant-authorized agents use to investigate and recover events on their way into Shopify Flow. Read `GET /agent/v1/manifest` first. Errors are RFC 9457 problem+json with a stable `code` and a `docs_url`. Input is closed: a query parameter or body field an operation does not define is refused with 400 `unknown_field` (naming it and the name it probably meant), never ignored. Every response carries `X-Request-Id`.',
    },
    servers: [{ url: '/', description: 'The origin serving this document (the co-deployed API).' }],
  });
  return polishOpenApiDocument(doc);
}

/** Declared request headers (e.g. Idempotency-Key) as they appear in the contract; the operation enforces them. */
function declaredHeaders(names: readonly string[]) {
  return z.object(
    Object.fromEntries(
      names.map((h) => [
        h,
        h === 'idempotency-key'
          ? // Required, with its length: the operation answers idempotency_key_missing without it.
            z
              .string()
              .optional()
              .openapi({
                param: {
                  name: h,
                  in: 'header',
                  required: true,
                  description: `Makes the confirmation safe to retry: 1–${IDEMPOTENCY_KEY_MAX_LENGTH} printable ASCII characters without spaces (e.g. a UUID), unique per action, kept 24 h and scoped to your grant. The same key and request return the stored response; the same key with another request answers 422.`,
                },
                minLength: 1,
                maxLength: IDEMPOTENCY_KEY_MAX_LENGTH,
                pattern: IDEMPOTENCY_KEY_PATTERN,
              })
          : z
              .string()
              .optional()
              .openapi({ param: { name: h, in: 'header' } }),
      ]),
    ),
  );
}

// A grant-scoped call is authenticated before its input is validated, as over MCP: without a
// valid grant the answer is 401 whatever the input (a 400 would describe the contract first).
// The grant's use is counted by the call's admission (in memory, ADR 0310), or here once the
// answer is made if nothing counted it (refused input, wrong audience).
function authenticateBeforeInput(getServices: () => Services) {
  return async (c: Context<AppEnv>, next: () => Promise<void>) => {
    const services = getServices();
    const principal = await authenticateToken(bearerToken(c), services, c.get('requestId'), { deferUse: true });
    try {
      // An OAuth access token names the resource it was issued for (RFC 8707, ADR 1400).
      if (principal.resource !== undefined && principal.resource !== resourcesOf(services.config).api)
        throw new AppError('token_audience_mismatch', {
          reason: `This access token was issued for ${principal.resource}, not the Agent Operations API.`,
        });
      c.set('principal', principal);
      await next();
    } finally {
      recordGrantUse(services.db, principal, services.now());
    }
  };
}
