// Finishing touches on the generated OpenAPI document, so tools that read it (Scalar on
// /reference/openapi/, client generators, agents) show what a user would send:
// - `additionalProperties: {}` (what zod writes for "any value") becomes `true`, and a
//   `anyOf`/`oneOf` whose branches all have one type gets that type too: the same meaning in
//   JSON Schema, and Scalar's document validation rejects the other forms.
// - every tag (an operation family) is declared with a title (`x-displayName`) and a description;
// - every JSON request body gets an `example` made of its required fields (or, when none is
//   required, its first plain text field): no field the product refuses (`payload_override`) and no
//   safety acknowledgement pre-set (`acknowledge_recent_delivery`); choosing those is the user's call.
//   The recorded request (openapi-examples.ts, ADR 0009) replaces it wherever there is one, which
//   is every operation of the registry; this stays for an operation not recorded yet.
import { FAMILY_LABELS } from '../operations/families.ts';
import type { Family } from '../core/types.ts';

type Json = Record<string, unknown>;

const FAMILY_ABOUT: Record<Family, string> = {
  docs: 'The manifest, docs search and pages, and OpenAPI lookups: what agents read first. No grant needed.',
  account: 'The calling grant, plan usage and the audit log.',
  setup: 'Readiness, endpoints, and previews of endpoint changes (create, edit, secret rotation, archive or delete).',
  events: 'Event history, one event with its timeline, receipts and diagnostics.',
  recovery:
    'Previews of replays, diagnostics shares and test events, and the action intents that confirm or cancel them.',
};

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The JSON Schema fixes (in place), everywhere in the document. */
function normalizeSchemas(node: unknown): void {
  if (Array.isArray(node)) {
    for (const v of node) normalizeSchemas(v);
    return;
  }
  if (!isObject(node)) return;
  const ap = node.additionalProperties;
  if (isObject(ap) && Object.keys(ap).length === 0) node.additionalProperties = true;
  for (const key of ['anyOf', 'oneOf'] as const) {
    const branches = node[key];
    if (node.type === undefined && Array.isArray(branches) && branches.length > 0) {
      const types = new Set(branches.map((b) => (isObject(b) && typeof b.type === 'string' ? b.type : null)));
      const [only] = [...types];
      if (types.size === 1 && typeof only === 'string') node.type = only;
    }
  }
  for (const v of Object.values(node)) normalizeSchemas(v);
}

function resolve(doc: Json, schema: unknown): Json | null {
  let s = schema;
  for (let i = 0; i < 10 && isObject(s) && typeof s.$ref === 'string'; i++) {
    const path = (s.$ref as string).replace(/^#\//, '').split('/');
    s = path.reduce<unknown>((n, k) => (isObject(n) ? n[k] : undefined), doc);
  }
  return isObject(s) ? s : null;
}

/** A value for a schema: its example, default or first enum value, else a placeholder by type. */
function exampleValue(doc: Json, schema: unknown, name: string, depth: number): unknown {
  const s = resolve(doc, schema);
  if (!s) return null;
  if (s.example !== undefined) return s.example;
  if (s.default !== undefined) return s.default;
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0];
  if (s.const !== undefined) return s.const;
  const branches = (s.anyOf ?? s.oneOf) as unknown[] | undefined;
  if (Array.isArray(branches) && branches.length > 0) return exampleValue(doc, branches[0], name, depth);
  const type = Array.isArray(s.type) ? s.type.find((t) => t !== 'null') : s.type;
  switch (type) {
    case 'object':
      return depth > 4 ? {} : requiredOnly(doc, s, depth + 1);
    case 'array':
      return [];
    case 'integer':
    case 'number':
      return typeof s.minimum === 'number' ? s.minimum : 1;
    case 'boolean':
      return false;
    case 'string':
      return s.format === 'uri' ? 'https://example.com/' : `<${name.toUpperCase()}>`;
    default:
      return null;
  }
}

/** An object holding the schema's required properties only. */
function requiredOnly(doc: Json, schema: Json, depth = 0): Json {
  const props = isObject(schema.properties) ? schema.properties : {};
  const required = Array.isArray(schema.required) ? (schema.required as string[]) : [];
  const out: Json = {};
  for (const name of required) out[name] = exampleValue(doc, props[name], name, depth);
  // A request body with nothing required may still need something to say (an edit with no field
  // is refused): its first plain text field, such as a name or a note. Never an id (a placeholder
  // id finds nothing), a switch (acknowledgements are the user's choice) or an untyped field (the
  // ones the product refuses, such as payload_override); without one, the body is {}.
  if (depth === 0 && required.length === 0) {
    const first = Object.entries(props).find(([name, p]) => resolve(doc, p)?.type === 'string' && !/_id$/.test(name));
    if (first) out[first[0]] = exampleValue(doc, first[1], first[0], depth + 1);
  }
  return out;
}

export function polishOpenApiDocument<T extends object>(doc: T): T {
  const d = doc as unknown as Json;
  normalizeSchemas(d.components);
  normalizeSchemas(d.paths);
  const used = new Set<string>();
  for (const item of Object.values(isObject(d.paths) ? d.paths : {})) {
    for (const op of Object.values(isObject(item) ? item : {})) {
      if (!isObject(op)) continue;
      for (const t of Array.isArray(op.tags) ? op.tags : []) used.add(String(t));
      const media = isObject(op.requestBody) && isObject(op.requestBody.content) ? op.requestBody.content : {};
      const json = media['application/json'];
      if (isObject(json) && json.example === undefined && json.examples === undefined) {
        const schema = resolve(d, json.schema);
        if (schema) json.example = requiredOnly(d, schema);
      }
    }
  }
  // In the order the operations first use them (the registry's order).
  d.tags = [...used]
    .filter((t): t is Family => t in FAMILY_LABELS)
    .map((f) => ({ name: f, 'x-displayName': FAMILY_LABELS[f], description: FAMILY_ABOUT[f] }));
  return doc;
}
