// Issue 23 point 3: one name per action, derived by one rule (api/src/operations/naming.ts,
// ADR 1000). Every operation's MCP tool, operationId and CLI command spell one verb phrase;
// a preview's intent kind, scopes and source file follow from it too.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ACTIONS, executeScope, previewScope } from '../../api/src/auth/scopes.ts';
import { INTENT_KINDS } from '../../api/src/intents/kinds/index.ts';
import { ACTION_VERBS, cliWordsFor, intentKindOf, operationIdFor } from '../../api/src/operations/naming.ts';
import { OPERATIONS } from '../../api/src/operations/registry.ts';

const REPO = join(import.meta.dirname, '../..');

describe('one name per action', () => {
  it.each(OPERATIONS.map((op) => [op.operationId, op] as const))('%s', (_id, op) => {
    const name = op.mcp?.name as string;
    expect(name, 'every operation is an MCP tool').toMatch(/^[a-z]+(_[a-z0-9]+)+$/);
    expect(ACTION_VERBS as readonly string[]).toContain(name.split('_')[0]);
    expect(op.operationId).toBe(operationIdFor(name));
    expect(op.cli).toEqual(cliWordsFor(name));
    const kind = intentKindOf(name);
    if (op.kind === 'preview') {
      expect(kind).not.toBeNull();
      expect(ACTIONS as readonly string[]).toContain(kind);
      expect(Object.keys(INTENT_KINDS)).toContain(kind);
      expect(op.scope).toBe(previewScope(kind as (typeof ACTIONS)[number]));
      expect(executeScope(kind as (typeof ACTIONS)[number])).toBe(`${kind}:execute`);
      const file = join(REPO, 'api/src/operations/intents', `preview-${(kind as string).replace(/_/g, '-')}.ts`);
      expect(existsSync(file), file).toBe(true);
    } else expect(kind).toBeNull();
  });

  it('every governed action has exactly one preview operation', () => {
    const previews = OPERATIONS.filter((op) => op.kind === 'preview').map((op) => intentKindOf(op.mcp?.name ?? ''));
    expect([...previews].sort()).toEqual([...ACTIONS].sort());
  });
});
