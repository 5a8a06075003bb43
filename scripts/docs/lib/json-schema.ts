// Flattens a JSON Schema (OpenAPI 3.1 or zod's toJSONSchema output) into rows
// of dotted field names so reference pages can show request and response
// shapes as plain tables.

export type JsonSchema = {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  description?: string;
  format?: string;
  default?: unknown;
  additionalProperties?: boolean | JsonSchema;
  minimum?: number;
  maximum?: number;
  maxLength?: number;
  minLength?: number;
  pattern?: string;
  [key: string]: unknown;
};

export interface FieldRow {
  name: string;
  type: string;
  required: boolean;
  /** The description followed by the constraints (max length, default …). */
  description: string;
  /** Whether the schema (or the component it points at) has a description of its own. */
  described: boolean;
}

export type RefResolver = (ref: string) => JsonSchema | undefined;

export function refResolver(root: unknown): RefResolver {
  return (ref) => {
    if (!ref.startsWith('#/')) return undefined;
    let node: unknown = root;
    for (const part of ref.slice(2).split('/')) {
      const key = part.replace(/~1/g, '/').replace(/~0/g, '~');
      if (node === null || typeof node !== 'object') return undefined;
      node = (node as Record<string, unknown>)[key];
    }
    return node as JsonSchema | undefined;
  };
}

function deref(schema: JsonSchema, resolve: RefResolver, seen: Set<string>): JsonSchema {
  let s = schema;
  while (s.$ref && !seen.has(s.$ref)) {
    seen.add(s.$ref);
    const target = resolve(s.$ref);
    if (!target) break;
    const { $ref: _ignored, ...rest } = s;
    s = { ...target, ...rest };
  }
  if (s.allOf && s.allOf.length > 0) {
    const merged: JsonSchema = {
      ...s,
      allOf: undefined,
      properties: { ...(s.properties ?? {}) },
      required: [...(s.required ?? [])],
    };
    for (const part of s.allOf) {
      const p = deref(part, resolve, new Set(seen));
      Object.assign(merged.properties as object, p.properties ?? {});
      merged.required?.push(...(p.required ?? []));
      if (!merged.type && p.type) merged.type = p.type;
      // A `$ref` described at its use comes out as allOf [$ref, {description}]: the use's text wins.
      if (!s.description && p.description) merged.description = p.description;
    }
    return merged;
  }
  return s;
}

/** The non-null branches of a nullable union, and whether null was allowed. */
function splitNull(s: JsonSchema): { branches: JsonSchema[]; nullable: boolean } {
  const union = s.anyOf ?? s.oneOf;
  if (union) {
    const branches = union.filter((b) => b.type !== 'null');
    return { branches, nullable: branches.length !== union.length };
  }
  if (Array.isArray(s.type) && s.type.includes('null')) {
    const rest = s.type.filter((t) => t !== 'null');
    return { branches: [{ ...s, type: rest.length === 1 ? rest[0] : rest }], nullable: true };
  }
  return { branches: [s], nullable: false };
}

/** A short human type label: `string`, `integer`, `"a" \| "b"`, `array of object`, `string or null`. */
export function typeLabel(schema: JsonSchema, resolve: RefResolver, seen = new Set<string>()): string {
  const s = deref(schema, resolve, seen);
  const { branches, nullable } = splitNull(s);
  const labels = branches.map((b) => {
    const d = deref(b, resolve, new Set(seen));
    if (d.const !== undefined) return JSON.stringify(d.const);
    if (d.enum) return d.enum.map((v) => JSON.stringify(v)).join(' | ');
    if (d.type === 'array' && d.items) return `array of ${typeLabel(d.items, resolve, new Set(seen))}`;
    const t = Array.isArray(d.type) ? d.type.join(' or ') : (d.type ?? (d.properties ? 'object' : 'any'));
    return d.format ? `${t} (${d.format})` : t;
  });
  const base = labels.length === 0 ? 'any' : labels.join(' or ');
  return nullable ? `${base} or null` : base;
}

function constraints(s: JsonSchema): string {
  const out: string[] = [];
  if (s.minimum !== undefined) out.push(`min ${s.minimum}`);
  if (s.maximum !== undefined) out.push(`max ${s.maximum}`);
  if (s.minLength !== undefined) out.push(`min length ${s.minLength}`);
  if (s.maxLength !== undefined) out.push(`max length ${s.maxLength}`);
  if (s.default !== undefined) out.push(`default ${JSON.stringify(s.default)}`);
  return out.length ? ` (${out.join(', ')})` : '';
}

/**
 * Rows for every field, depth-first. Nested objects use dots, array items `[]`:
 * `capabilities[].operation_id`. Depth is bounded so recursive schemas terminate.
 */
export function flattenFields(schema: JsonSchema | undefined, resolve: RefResolver, maxDepth = 5): FieldRow[] {
  const rows: FieldRow[] = [];
  if (!schema) return rows;
  const walk = (node: JsonSchema, prefix: string, depth: number, seen: Set<string>) => {
    const s = deref(node, resolve, seen);
    const { branches } = splitNull(s);
    const obj = branches.length === 1 ? deref(branches[0] as JsonSchema, resolve, new Set(seen)) : s;
    if (obj.type === 'array' && obj.items) {
      walk(obj.items, `${prefix}[]`, depth, seen);
      return;
    }
    if (!obj.properties || depth > maxDepth) return;
    const required = new Set(obj.required ?? []);
    for (const [name, child] of Object.entries(obj.properties)) {
      const full = prefix ? `${prefix}.${name}` : name;
      const c = deref(child, resolve, new Set(seen));
      rows.push({
        name: full,
        type: typeLabel(child, resolve, new Set(seen)),
        required: required.has(name),
        description: `${c.description ?? ''}${constraints(c)}`.trim(),
        described: Boolean(c.description?.trim()),
      });
      walk(child, full, depth + 1, new Set(seen));
    }
  };
  walk(schema, '', 0, new Set());
  return rows;
}
