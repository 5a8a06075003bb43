// Every field described (issue 29, point 3): every parameter and every schema property in the
// committed contract has a description, so the API reference (built from the same document with
// the same flattening) has no "—" rows. A property that is a `$ref` counts as described when the
// component it points at carries one (the reference shows the component's description).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { flattenFields, type JsonSchema, refResolver } from '../../scripts/docs/lib/json-schema.ts';

const root = join(import.meta.dirname, '../..');
const doc = JSON.parse(readFileSync(join(root, 'openapi/agent-operations.openapi.json'), 'utf8'));
const resolve = refResolver(doc);
const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

type Param = { name: string; in: string; description?: string; schema?: JsonSchema; $ref?: string };
type Op = {
  parameters?: Param[];
  requestBody?: { content?: Record<string, { schema?: JsonSchema }> };
  responses?: Record<string, { content?: Record<string, { schema?: JsonSchema }>; $ref?: string }>;
};

/** Every undescribed parameter or field, named `METHOD path where field`. */
function undescribed(): string[] {
  const missing: string[] = [];
  const fields = (schema: JsonSchema | undefined, where: string) => {
    for (const row of flattenFields(schema, resolve, 8)) if (!row.described) missing.push(`${where} ${row.name}`);
  };
  for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, Op>>)) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const at = `${method.toUpperCase()} ${path}`;
      for (const raw of op.parameters ?? []) {
        const p = (raw.$ref ? resolve(raw.$ref) : raw) as Param;
        if (!(p.description ?? p.schema?.description)) missing.push(`${at} ${p.in} parameter ${p.name}`);
      }
      for (const [type, media] of Object.entries(op.requestBody?.content ?? {}))
        fields(media.schema, `${at} body (${type})`);
      for (const [status, raw] of Object.entries(op.responses ?? {})) {
        const res = (raw.$ref ? resolve(raw.$ref) : raw) as typeof raw;
        for (const media of Object.values(res.content ?? {})) fields(media.schema, `${at} ${status}`);
      }
    }
  }
  // Components an operation does not reach are still part of the contract.
  for (const [name, schema] of Object.entries((doc.components?.schemas ?? {}) as Record<string, JsonSchema>))
    fields(schema, `#/components/schemas/${name}`);
  return [...new Set(missing)];
}

it('every parameter and schema property in the contract has a description', () => {
  expect(undescribed()).toEqual([]);
});

it('the check sees an undescribed field (it can fail)', () => {
  const rows = flattenFields({ type: 'object', properties: { bare: { type: 'string' } } }, resolve);
  expect(rows.filter((r) => !r.described).map((r) => r.name)).toEqual(['bare']);
});
