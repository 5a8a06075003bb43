// Renders the API reference from the committed OpenAPI contract: an index at
// /reference/api/ and one page per operation (method, path, scope, parameters,
// request body, responses and error codes), each small enough for an agent to read whole.
import { errorDocsPath, operationPagePath } from '../../../api/src/docs-paths.ts';
import { code, table } from './markdown.ts';
import { flattenFields, type JsonSchema, refResolver, typeLabel } from './json-schema.ts';

const METHODS = ['get', 'put', 'post', 'patch', 'delete'] as const;

interface OpenApiParameter {
  name: string;
  in: string;
  required?: boolean;
  description?: string;
  schema?: JsonSchema;
  $ref?: string;
}

interface OpenApiOperation {
  operationId?: string;
  summary?: string;
  description?: string;
  tags?: string[];
  security?: Record<string, string[]>[];
  parameters?: OpenApiParameter[];
  requestBody?: { required?: boolean; content?: Record<string, { schema?: JsonSchema }>; $ref?: string };
  responses?: Record<
    string,
    { description?: string; content?: Record<string, { schema?: JsonSchema }>; $ref?: string }
  >;
  [ext: `x-${string}`]: unknown;
}

export interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string; description?: string };
  paths?: Record<string, Record<string, OpenApiOperation | OpenApiParameter[] | unknown>>;
  components?: Record<string, unknown>;
}

export interface ListedOperation {
  method: string;
  path: string;
  op: OpenApiOperation;
}

/** Every operation in document order (paths as written, methods in a fixed order). */
export function listOperations(doc: OpenApiDocument): ListedOperation[] {
  const out: ListedOperation[] = [];
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const method of METHODS) {
      const op = item[method] as OpenApiOperation | undefined;
      if (op) out.push({ method: method.toUpperCase(), path, op });
    }
  }
  return out;
}

/** The grant scope an operation needs: the extension if present, else its security requirement. */
export function operationScope(op: OpenApiOperation): string | null {
  const ext = op['x-flowport-scope'];
  if (typeof ext === 'string') return ext;
  for (const req of op.security ?? []) {
    for (const scopes of Object.values(req)) if (scopes.length > 0) return scopes.join(', ');
  }
  return null;
}

/** Error codes an operation can return: the extension, else codes named in error response descriptions. */
export function operationErrorCodes(op: OpenApiOperation, knownCodes: readonly string[]): string[] {
  const ext = op['x-flowport-error-codes'];
  if (Array.isArray(ext)) return ext.map(String);
  const found = new Set<string>();
  for (const [status, res] of Object.entries(op.responses ?? {})) {
    if (!/^[45]/.test(status)) continue;
    for (const m of (res.description ?? '').matchAll(/`([a-z][a-z0-9_]*)`/g)) {
      if (knownCodes.includes(m[1] as string)) found.add(m[1] as string);
    }
  }
  return [...found];
}

function fieldTable(schema: JsonSchema | undefined, resolve: ReturnType<typeof refResolver>): string {
  const rows = flattenFields(schema, resolve);
  if (rows.length === 0) return schema ? `Type: ${code(typeLabel(schema, resolve))}.` : 'No body.';
  return table(
    ['Field', 'Type', 'Required', 'Description'],
    rows.map((r) => [code(r.name), r.type, r.required ? 'yes' : 'no', r.description]),
  );
}

/** The page of one operation (one rule, in api/src/docs-paths.ts). */
export { operationPagePath };

export function apiOperationPath(o: ListedOperation): string {
  return operationPagePath(o.op.operationId ?? `${o.method} ${o.path}`);
}

function familyTitle(family: string): string {
  return `${family[0]?.toUpperCase()}${family.slice(1)}`;
}

/** The operation families (OpenAPI tags) in document order, each with its operations. */
export function operationFamilies(doc: OpenApiDocument): { family: string; ops: ListedOperation[] }[] {
  const ops = listOperations(doc);
  const families = [...new Set(ops.map((o) => o.op.tags?.[0] ?? 'other'))];
  return families.map((family) => ({ family, ops: ops.filter((o) => (o.op.tags?.[0] ?? 'other') === family) }));
}

/** /reference/api/: what the API is, then every operation by family, each linking its own page. */
export function renderApiIndex(doc: OpenApiDocument): string {
  const parts: string[] = [
    `The ${doc.info.title} (contract version ${code(doc.info.version)}) has one page per operation, listed below by family. Each is generated from the OpenAPI contract at [/reference/openapi/agent-operations.openapi.json](/reference/openapi/agent-operations.openapi.json), which is authoritative for exact shapes; the [interactive reference](/reference/openapi/) lets you try requests.`,
    '',
    'Authenticated operations take a grant token: `Authorization: Bearer <GRANT_TOKEN>`. Read [the manifest](/reference/manifest/) first. Errors are `application/problem+json` with a stable `code` and a `docs_url`; see [error codes](/reference/errors/) and [refusals](/agent-access/refusals/).',
  ];
  for (const { family, ops } of operationFamilies(doc)) {
    parts.push(
      '',
      `## ${familyTitle(family)} operations`,
      '',
      table(
        ['Operation', 'Method and path', 'Scope'],
        ops.map((o) => [
          `[${o.op.summary ?? o.op.operationId}](${apiOperationPath(o)})`,
          code(`${o.method} ${o.path}`),
          operationScope(o.op) ? code(operationScope(o.op) as string) : 'public',
        ]),
      ),
    );
  }
  return parts.join('\n');
}

/** One operation's page: method and path, facts, parameters, request body, responses, error codes. */
export function renderApiOperation(
  doc: OpenApiDocument,
  listed: ListedOperation,
  knownCodes: readonly string[],
  /** The operation's recorded examples, rendered (recorded-examples.ts); '' when none. */
  examples = '',
): string {
  const resolve = refResolver(doc);
  const { method, path, op } = listed;
  const scope = operationScope(op);
  const parts: string[] = ['```http', `${method} ${path}`, '```', ''];
  if (op.description) parts.push(op.description, '');
  const facts: [string, string][] = [
    ['Operation ID', op.operationId ? code(op.operationId) : '—'],
    ['Scope', scope ? code(scope) : 'public (no grant needed)'],
  ];
  if (typeof op['x-flowport-kind'] === 'string') facts.push(['Kind', op['x-flowport-kind']]);
  if (typeof op['x-flowport-meter'] === 'string') facts.push(['Meter', op['x-flowport-meter']]);
  if (typeof op['x-flowport-mcp-tool'] === 'string') facts.push(['MCP tool', code(op['x-flowport-mcp-tool'])]);
  parts.push(table(['Fact', 'Value'], facts));

  const params = (op.parameters ?? [])
    .map((p) => (p.$ref ? (resolve(p.$ref) as unknown as OpenApiParameter) : p))
    .filter(Boolean);
  parts.push('', '## Parameters', '');
  parts.push(
    params.length === 0
      ? 'None.'
      : table(
          ['Name', 'In', 'Type', 'Required', 'Description'],
          params.map((p) => [
            code(p.name),
            p.in,
            p.schema ? typeLabel(p.schema, resolve) : '—',
            p.required ? 'yes' : 'no',
            p.description ?? p.schema?.description ?? '',
          ]),
        ),
  );

  parts.push('', '## Request body', '');
  const bodyContent = op.requestBody?.content ?? {};
  const bodyTypes = Object.keys(bodyContent);
  if (bodyTypes.length === 0) parts.push('None.');
  for (const type of bodyTypes) {
    parts.push(
      `Content type ${code(type)}${op.requestBody?.required ? ' (required)' : ''}:`,
      '',
      fieldTable(bodyContent[type]?.schema, resolve),
      '',
    );
  }

  parts.push('', '## Responses', '');
  const responses = Object.entries(op.responses ?? {});
  parts.push(
    table(
      ['Status', 'Content type', 'Description'],
      responses.map(([status, r]) => [
        code(status),
        Object.keys(r.content ?? {})
          .map(code)
          .join(', '),
        r.description ?? '',
      ]),
    ),
  );
  for (const [status, r] of responses.filter(([s]) => /^2/.test(s))) {
    for (const [type, media] of Object.entries(r.content ?? {})) {
      parts.push('', `Response ${code(status)} body (${code(type)}):`, '', fieldTable(media.schema, resolve));
    }
  }

  if (examples) parts.push('', examples);

  const codes = operationErrorCodes(op, knownCodes);
  parts.push('', '## Error codes', '');
  parts.push(
    codes.length === 0
      ? 'None beyond transport errors.'
      : codes.map((c) => `- [${code(c)}](${errorDocsPath(c)})`).join('\n'),
  );
  parts.push(
    '',
    '## See also',
    '',
    `- [All operations](/reference/api/) and the [interactive reference](/reference/openapi/)`,
    `- The exact contract: [/reference/openapi/agent-operations.openapi.json](/reference/openapi/agent-operations.openapi.json)`,
  );
  return parts.join('\n');
}
