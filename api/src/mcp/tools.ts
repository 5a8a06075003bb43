// MCP tools derived from the operation registry: name, description, input and
// output schema and annotations all come from the operation. Nothing here
// describes a tool by hand; add an operation with `mcp: {...}` and its tool exists.
import { z } from '@hono/zod-openapi';
import { OPERATIONS } from '../operations/registry.ts';
import type { AnyOperation, Family } from '../core/types.ts';

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

/** Annotations follow from what the operation does to the world (its kind), never typed twice. */
export function toolAnnotations(op: AnyOperation): ToolAnnotations {
  const openWorldHint = op.openWorld ?? false;
  if (op.kind === 'read') return { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint };
  // A preview records a new intent each call and changes nothing else.
  if (op.kind === 'preview')
    return { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint };
  // A confirmation keyed by an Idempotency-Key replays its stored answer on a repeat call.
  const idempotent = (op.headers ?? []).includes('idempotency-key');
  return { readOnlyHint: false, destructiveHint: op.destructive ?? false, idempotentHint: idempotent, openWorldHint };
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
    const hint =
      h === 'idempotency-key'
        ? 'Idempotency key for this confirmation. Reuse the same value when you retry the same call; a new value with the same intent is refused.'
        : `Value of the \`${h}\` request header.`;
    // No minimum: an empty value means what an empty header means over HTTP (the operation
    // decides, e.g. idempotency_key_missing), so both surfaces answer with the same code.
    shape[name] = z.string().max(255).optional().describe(hint);
  }
  return z.object(shape);
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
  /** Required scope; null = public operation (the MCP endpoint itself still needs a grant token). */
  scope: string | null;
  annotations: ToolAnnotations;
  inputSchema: Record<string, unknown>;
  outputSchema: Record<string, unknown>;
}

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const json = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>;
  delete json.$schema;
  return json;
}

/** What a tool says about itself beyond the operation's job description. */
export function toolDescription(op: AnyOperation): string {
  const mcp = op.mcp as NonNullable<AnyOperation['mcp']>;
  const scope = op.scopeNote
    ? `Requires ${op.scopeNote}`
    : op.scope
      ? `Requires the \`${op.scope}\` scope.`
      : 'Public (any grant).';
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
      inputSchema: jsonSchema(toolInputSchema(op), 'input'),
      outputSchema: jsonSchema(op.response, 'output'),
    };
  });
}
