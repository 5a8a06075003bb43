// The deployment page names every configuration variable (defined once in
// api/src/config.ts) and every process/store command (api/src/process-commands.ts),
// so a new setting or command cannot ship undocumented.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { ENV } from '../../api/src/config.ts';
import { DOCS_PATHS } from '../../api/src/docs-paths.ts';
import { PROCESS_OPERATOR_COMMANDS } from '../../api/src/process-commands.ts';

const page = readFileSync(
  join(import.meta.dirname, '../../content', `${DOCS_PATHS.deployment.replace(/\/$/, '')}.md`),
  'utf8',
);

it('documents every configuration variable', () => {
  const missing = Object.values(ENV).filter((name) => !page.includes(`\`${name}\``));
  expect(missing).toEqual([]);
});

it('documents every process and store command', () => {
  const missing = PROCESS_OPERATOR_COMMANDS.map((c) => `flowport ${c.command.join(' ')}`).filter(
    (cmd) => !page.includes(cmd),
  );
  expect(missing).toEqual([]);
});

it('shows database URLs only as placeholders', () => {
  for (const m of page.matchAll(/postgres(?:ql)?:\/\/[^\s'"`)]+/g)) expect(m[0]).toMatch(/<USER>@<HOST>/);
});
