// Test-only operations and a small built docs site, so MCP mechanics are tested
// independently of which operations other areas have registered so far.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { z } from '@hono/zod-openapi';
import { defineOperation } from '../../api/src/core/types.ts';
import { SITE_STAMP_FILE } from '../../api/src/docs-paths.ts';
import { tempDir } from '../helpers/runtime.ts';

/** An execute-kind confirmation that needs `replay:execute` (observers lack it). */
export const confirmFixture = defineOperation({
  operationId: 'confirmMcpFixture',
  method: 'post',
  path: '/agent/v1/test-fixtures/{intent_id}/confirm',
  summary: 'Confirm a test fixture intent',
  description: 'Test-only operation.',
  family: 'recovery',
  kind: 'execute',
  scope: 'replay:execute',
  meter: null,
  openWorld: true,
  headers: ['idempotency-key'],
  request: { params: z.object({ intent_id: z.string().regex(/^int_/) }) },
  response: z.object({ intent_id: z.string(), status: z.literal('executed'), idempotency_key: z.string().nullable() }),
  errors: [],
  mcp: { name: 'confirm_test_fixture', title: 'Confirm a test fixture', description: 'Test-only confirmation.' },
  cli: null,
  async run({ ctx, input }) {
    return {
      intent_id: input.intent_id,
      status: 'executed' as const,
      idempotency_key: ctx.headers['idempotency-key'] ?? null,
    };
  },
});

/** A destructive execute operation (annotations must say so). */
export const deleteFixture = defineOperation({
  operationId: 'deleteMcpFixture',
  method: 'delete',
  path: '/agent/v1/test-fixtures/{fixtureId}',
  summary: 'Delete a test fixture',
  description: 'Test-only operation.',
  family: 'setup',
  kind: 'execute',
  scope: 'endpoint_delete:execute',
  meter: null,
  destructive: true,
  request: { params: z.object({ fixtureId: z.string() }) },
  response: z.object({ deleted: z.boolean() }),
  errors: [],
  mcp: { name: 'delete_test_fixture', title: 'Delete a test fixture', description: 'Test-only destructive operation.' },
  cli: null,
  async run() {
    return { deleted: true };
  },
});

export const FIXTURE_OPERATIONS = [confirmFixture, deleteFixture];

/** A minimal built site: Markdown twins, llms.txt, an index.html and the stamp (last), like `npm run build:site` writes. */
export function fixtureSite(publicUrl: string): string {
  const dir = tempDir('flowport-mcp-site-');
  const page = (path: string, title: string, body: string) => {
    const twin = path === '/' ? '/index.md' : `${path.replace(/\/$/, '')}.md`;
    const file = join(dir, twin);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, `# ${title}\n\nCanonical: ${publicUrl}${path}\nMarkdown: ${publicUrl}${twin}\n\n${body}\n`);
  };
  page('/', 'Flowport', 'Get outside events into Shopify Flow.');
  page(
    '/agent-access/refusals/',
    'Refusals',
    'Why Flowport refused an action.\n\n## Missing scope\n\nA grant without the required scope is refused with `missing_scope`.',
  );
  page('/reference/errors/missing_scope/', 'missing_scope', 'Scope not granted. The refusal names the required scope.');
  page(
    '/recover/replay/',
    'Replay an event',
    'Replays start a new Flow run. Preview the replay intent, then confirm it.',
  );
  writeFileSync(join(dir, 'llms.txt'), `# Flowport\n\n- [Refusals](${publicUrl}/agent-access/refusals.md)\n`);
  writeFileSync(join(dir, 'index.html'), '<!doctype html><title>Flowport</title>');
  writeFileSync(join(dir, SITE_STAMP_FILE), '{"inputs":"fixture"}\n');
  return dir;
}
