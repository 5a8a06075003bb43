// What tools/list says about a tool's input and output, compact enough for an agent's context
// (ADR 0510) and taken from the same source as the HTTP contract:
// - input: a path, query or header argument is its OpenAPI parameter (schema and description,
//   `required` included: `idempotency_key` is required on both surfaces); body fields are the
//   request body's JSON Schema. Date-time arguments say `format: date-time`, without the long
//   pattern zod writes next to it (the handler validates with the zod schema either way).
// - output: not in tools/list. The full shape, every field described, is one read away at the URI
//   in the tool's `_meta['flowport/output_schema']`: the public OpenAPI lookup of the operation,
//   also an MCP resource and the answer of `get_open_api_operation`.
import { z } from '@hono/zod-openapi';
import type { AnyOperation } from '../core/types.ts';

type Json = Record<string, unknown>;

/** The parts of the OpenAPI document a tool's input reads. */
export interface OpenApiInputs {
  paths?: Record<string, Record<string, OpenApiOperation | undefined> | undefined>;
  components?: { schemas?: Record<string, Json> };
}
interface OpenApiOperation {
  parameters?: OpenApiParameter[];
  requestBody?: { content?: Record<string, { schema?: unknown } | undefined> };
}
interface OpenApiParameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  description?: string;
  schema?: Json;
}

/** A pattern this long is a format's regex (zod's date-time), not something an agent reads. */
const FORMAT_PATTERN_MIN = 100;

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The schema without the long patterns zod writes beside a `format`, everywhere in it. */
export function withoutFormatPatterns<T>(node: T): T {
  if (Array.isArray(node)) return node.map(withoutFormatPatterns) as T;
  if (!isObject(node)) return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === 'pattern' && typeof v === 'string' && v.length >= FORMAT_PATTERN_MIN && typeof node.format === 'string')
      continue;
    out[k] = withoutFormatPatterns(v);
  }
  return out as T;
}

/** A schema of the contract with its `#/components/schemas/…` reference followed. */
function resolveRef(openApi: OpenApiInputs, schema: unknown): Json | undefined {
  if (!isObject(schema)) return undefined;
  if (typeof schema.$ref !== 'string') return schema;
  return openApi.components?.schemas?.[schema.$ref.split('/').pop() as string];
}

/** The OpenAPI parameter as a JSON Schema property: its schema, with the parameter's description. */
function parameterProperty(p: OpenApiParameter): Json {
  const { example: _example, description: _own, ...schema } = p.schema ?? {};
  return { ...schema, ...(p.description ? { description: p.description } : {}) };
}

/**
 * A tool's advertised input schema: the zod input object's JSON Schema (closed, as validated),
 * each parameter replaced by the OpenAPI parameter of the same operation, header parameters
 * under their snake_case argument names (`idempotency-key` → `idempotency_key`), each body
 * field described as the contract's request body describes it.
 */
export function advertisedInputSchema(
  op: AnyOperation,
  validated: z.ZodObject,
  openApi: OpenApiInputs,
  argumentName: (header: string) => string,
): Json {
  const json = z.toJSONSchema(validated, { io: 'input', unrepresentable: 'any' }) as Json;
  delete json.$schema;
  const schema = withoutFormatPatterns(json);
  const properties = (schema.properties ?? {}) as Record<string, Json>;
  const required = new Set<string>((schema.required ?? []) as string[]);
  const operation = openApi.paths?.[op.path]?.[op.method] ?? {};
  const body = resolveRef(openApi, operation.requestBody?.content?.['application/json']?.schema);
  for (const [name, field] of Object.entries((body?.properties ?? {}) as Record<string, unknown>)) {
    const description = resolveRef(openApi, field)?.description;
    if (name in properties && typeof description === 'string') properties[name] = { ...properties[name], description };
  }
  for (const p of operation.parameters ?? []) {
    if (p.in === 'cookie') continue;
    const name = p.in === 'header' ? argumentName(p.name) : p.name;
    if (!(name in properties)) continue;
    properties[name] = parameterProperty(p);
    if (p.required) required.add(name);
  }
  return { ...schema, properties, ...(required.size ? { required: [...required] } : {}) };
}
