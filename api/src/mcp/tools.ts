// MCP tools derived from the operation registry: name, description, input and
// output schema and annotations all come from the operation. Nothing here
// describes a tool by hand; add an operation with `mcp: {...}` and its tool exists.
import { z } from '@hono/zod-openapi';
import { buildOpenApiDocument } from '../http/openapi.ts';
import { getOpenApiOperation } from '../operations/openapi/get-operation.ts';
import { OPERATIONS } from '../operations/registry.ts';
import type { AnyOperation, Family } from '../core/types.ts';
import { advertisedInputSchema } from './tool-schemas.ts';

/** Job-language names of the tool families, in the order docs list them. */
export const TOOL_FAMILIES: Record<Family, { title: string; job: string }> = {
  docs: {
    title: 'Docs and manifest',
    job: 'Find canonical docs, Markdown pages, the OpenAPI contract and edition identity.',
  },
  events: {
    title: 'Event investigation',
    job: 'Read event history, receipts, lifecycle state, retention, replay availability and where a handoff stopped.',
  },
  setup: { title: 'Setup', job: 'Read the shop setup state and endpoint configuration.' },
  recovery: {
    title: 'Recovery previews and confirmations',
    job: 'Preview replays, diagnostics shares and other governed actions; confirm or cancel a previewed intent.',
  },
  account: { title: 'Plan, grant and audit', job: 'Read plan usage, the facts of your own grant and the audit log.' },
};

export interface ToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

/** Tool header names → input field names (`idempotency-key` → `idempotency_key`). */
export function headerInputName(header: string): string {
  return header.toLowerCase().replace(/[^a-z0-9]+/g, '_');
}

export function mcpOperations(operations: readonly AnyOperation[] = OPERATIONS): AnyOperation[] {
  return operations.filter((op) => op.mcp !== null);
}

/**
 * Annotations follow from what the operation does to the world (its kind), never typed twice.
 * `openWorldHint` only where a call can reach Shopify Flow: an execution of an open-world
 * operation (a preview records an intent and reaches nothing outside).
 */
export function toolAnnotations(op: AnyOperation): ToolAnnotations {
  if (op.kind === 'read')
    return { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
  // A preview records a new intent each call and changes nothing else.
  if (op.kind === 'preview')
    return { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false };
  // A confirmation keyed by an Idempotency-Key replays its stored answer on a repeat call; an
  // operation marked idempotent (cancel) has no further effect when repeated.
  const idempotent = (op.headers ?? []).includes('idempotency-key') || (op.idempotent ?? false);
  return {
    readOnlyHint: false,
    destructiveHint: op.destructive ?? false,
    idempotentHint: idempotent,
    openWorldHint: op.openWorld ?? false,
  };
}

/**
 * The one input object of a tool: path params, query and body fields merged,
 * plus any request header the operation reads (as snake_case fields).
 */
export function toolInputSchema(op: AnyOperation): z.ZodObject {
  let shape: Record<string, z.ZodType> = {};
  for (const part of [op.request.params, op.request.query, op.request.body]) {
    if (part) shape = { ...shape, ...(part as z.ZodObject).shape };
  }
  for (const h of op.headers ?? []) {
    const name = headerInputName(h);
    if (name in shape) continue;
    // Validated leniently here (no minimum: an empty value means what an empty header means over
    // HTTP, and the operation answers, e.g. idempotency_key_missing, so both surfaces give the same
    // code); advertised as the contract's header parameter (description, `required`, limits: one
    // declaration, see toolInputJsonSchema).
    shape[name] = z.string().max(255).optional().describe(`Value of the \`${h}\` request header.`);
  }
  // Closed like the HTTP request bodies: an argument the tool does not define is refused (unknown_field).
  return z.strictObject(shape);
}

export interface McpToolDefinition {
  name: string;
  title: string;
  description: string;
  family: Family;
  family_title: string;
  operation_id: string;
  method: string;
  path: string;
  kind: AnyOperation['kind'];
  /** Required scope; null = no scope needed (the MCP endpoint itself still needs a grant token). */
  scope: string | null;
  annotations: ToolAnnotations;
  inputSchema: Record<string, unknown>;
  /**
   * The operation's success response schema. Not in tools/list (ADR 0510): a tool names where to
   * read it, `output_schema_path`, the public OpenAPI lookup of the operation (an MCP resource too).
   */
  outputSchema: Record<string, unknown>;
  /** Path of the full output shape: the public OpenAPI lookup of the operation (an MCP resource too). */
  output_schema_path: string;
}

type Json = Record<string, unknown>;
const COMPONENT_REF = '#/components/schemas/';

const openApiDocs = new WeakMap<readonly AnyOperation[], Json>();
function openApiFor(operations: readonly AnyOperation[]): Json {
  let doc = openApiDocs.get(operations);
  if (!doc) {
    // Without the recorded examples: tools need the schemas only (and the server reads no example files).
    doc = JSON.parse(JSON.stringify(buildOpenApiDocument(operations, {}))) as Json;
    openApiDocs.set(operations, doc);
  }
  return doc;
}

/**
 * A tool's output schema is its operation's success response schema in the OpenAPI document,
 * as is: the same openness and the same formats (`date-time`) as the HTTP contract. Component
 * references become `$defs`; the root is the object itself (MCP wants `type: object` there).
 */
export function toolOutputSchema(op: AnyOperation, operations: readonly AnyOperation[] = OPERATIONS): Json {
  const doc = openApiFor(operations) as {
    paths: Record<string, Record<string, { responses: Record<string, { content: Record<string, { schema: Json }> }> }>>;
    components?: { schemas?: Record<string, Json> };
  };
  const components = doc.components?.schemas ?? {};
  const response = doc.paths[op.path]?.[op.method]?.responses[String(op.successStatus ?? 200)];
  const root = response?.content['application/json']?.schema;
  if (!root) throw new Error(`No OpenAPI response schema for ${op.operationId}.`);
  const defs: Record<string, Json> = {};
  const rewrite = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(rewrite);
    if (node === null || typeof node !== 'object') return node;
    const out: Json = {};
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string' && v.startsWith(COMPONENT_REF)) {
        const name = v.slice(COMPONENT_REF.length);
        if (!(name in defs)) {
          defs[name] = {};
          defs[name] = rewrite(components[name] ?? {}) as Json;
        }
        out.$ref = `#/$defs/${name}`;
      } else out[k] = rewrite(v);
    }
    return out;
  };
  const top =
    typeof root.$ref === 'string' && root.$ref.startsWith(COMPONENT_REF)
      ? (components[root.$ref.slice(COMPONENT_REF.length)] ?? {})
      : root;
  const rewritten = rewrite(top) as Json;
  // An object built by composition (allOf) says so at its root, as MCP requires.
  const schema = rewritten.type === undefined ? { type: 'object', ...rewritten } : rewritten;
  return Object.keys(defs).length ? { ...schema, $defs: defs } : schema;
}

/** The input schema tools/list advertises: arguments described as their OpenAPI parameters (ADR 0510). */
export function toolInputJsonSchema(op: AnyOperation, operations: readonly AnyOperation[] = OPERATIONS): Json {
  return advertisedInputSchema(op, toolInputSchema(op), openApiFor(operations), headerInputName);
}

/** Where a tool's full output shape is read: the public lookup of its operation (`get_open_api_operation`). */
export function outputSchemaPath(op: AnyOperation): string {
  return getOpenApiOperation.path.replace('{operation_id}', op.operationId);
}

/** What a tool says about itself beyond the operation's job description. */
export function toolDescription(op: AnyOperation): string {
  const mcp = op.mcp as NonNullable<AnyOperation['mcp']>;
  const scope = op.scopeNote
    ? `Requires ${op.scopeNote}`
    : op.scope
      ? `Requires the \`${op.scope}\` scope.`
      : 'Needs no scope (any grant token opens the MCP endpoint).';
  return `${mcp.description} ${scope}`;
}

/**
 * Every MCP tool as plain data: the docs site renders `/reference/mcp/` and its
 * `.md` twin from this, and tests compare it with `tools/list`.
 */
export function mcpToolDefinitions(operations: readonly AnyOperation[] = OPERATIONS): McpToolDefinition[] {
  return mcpOperations(operations).map((op) => {
    const mcp = op.mcp as NonNullable<AnyOperation['mcp']>;
    return {
      name: mcp.name,
      title: mcp.title,
      description: toolDescription(op),
      family: op.family,
      family_title: TOOL_FAMILIES[op.family].title,
      operation_id: op.operationId,
      method: op.method.toUpperCase(),
      path: op.path,
      kind: op.kind,
      scope: op.scope,
      annotations: toolAnnotations(op),
      inputSchema: toolInputJsonSchema(op, operations),
      outputSchema: toolOutputSchema(op, operations),
      output_schema_path: outputSchemaPath(op),
    };
  });
}
