// Each auth mode's docs page carries the facts intake verifies with (AUTH_MODE_FACTS):
// its headers, the command that creates the endpoint, the import command where the sender
// makes the secret, and the signing example. The Markdown twin is read, as an LLM would.
import { beforeAll, describe, expect, it } from 'vitest';
import { authModeDocsPath } from '../../api/src/docs-paths.ts';
import { AUTH_MODE_LIST, createCommandFor, importSecretCommandFor } from '../../api/src/intake/auth-modes.ts';
import { ensureSiteBuilt, readDist, twinOf } from './helpers/site.ts';

beforeAll(ensureSiteBuilt, 900_000);

describe('auth mode pages are derived from the facts intake uses', () => {
  it.each(AUTH_MODE_LIST.map((f) => [f.mode, f] as const))('%s', (_mode, f) => {
    const twin = readDist(twinOf(authModeDocsPath(f.mode)));
    for (const h of f.headers) expect(twin, h.name).toContain(`\`${h.name}\``);
    expect(twin).toContain(createCommandFor(f));
    const importCommand = importSecretCommandFor(f);
    if (f.secretEnv) expect(twin).toContain(`${f.secretEnv}='<SIGNING_SECRET>' ${importCommand}`);
    else expect(twin).not.toContain('endpoints import-secret');
    expect(twin).toContain(f.example.code.split('\n')[0] as string);
    for (const n of f.notes) expect(twin).toContain(n);
    // Exactly one facts section and one example: each directive expanded once.
    expect(twin.match(/^## At a glance$/gm)).toHaveLength(1);
    expect(twin.match(/^## Sign a test request yourself$/gm)).toHaveLength(1);
  });
});
