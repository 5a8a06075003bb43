// The committed OpenAPI file is exactly what the registry produces, and a schema
// change without regeneration is detected.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from '@hono/zod-openapi';
import { expect, it } from 'vitest';
import { buildOpenApiJson } from '../../api/src/http/openapi.ts';
import { OPERATIONS } from '../../api/src/operations/registry.ts';

const root = join(import.meta.dirname, '../..');
const committed = () => readFileSync(join(root, 'openapi/agent-operations.openapi.json'), 'utf8');

it('the committed file equals the generated document', () => {
  expect(buildOpenApiJson()).toBe(committed());
});

it('npm run check:openapi passes on the committed file', () => {
  const r = spawnSync(process.execPath, ['scripts/gen-openapi.ts', '--check'], { cwd: root, encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
});

it('editing an operation schema without regenerating makes the check fail', () => {
  const [first, ...rest] = OPERATIONS;
  const edited = { ...first!, response: (first!.response as z.ZodObject).extend({ surprise: z.string() }) };
  expect(buildOpenApiJson([edited, ...rest])).not.toBe(committed());
});

it('every operation is in the document with its scope and error codes', () => {
  const doc = JSON.parse(committed());
  for (const op of OPERATIONS) {
    const entry = doc.paths[op.path]?.[op.method];
    expect(entry, `${op.method} ${op.path}`).toBeDefined();
    expect(entry.operationId).toBe(op.operationId);
    expect(entry['x-flowport-scope']).toBe(op.scope);
  }
});
