// The deployment page names every configuration variable (defined once in
// api/src/config.ts) and every process/store command (api/src/cli/operator/process-commands.ts),
// so a new setting or command cannot ship undocumented.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { CONFIG_VARIABLES, ENV } from '../../api/src/config.ts';
import { DOCS_PATHS } from '../../api/src/docs-paths.ts';
import { PROCESS_OPERATOR_COMMANDS } from '../../api/src/cli/operator/process-commands.ts';

const page = readFileSync(
  join(import.meta.dirname, '../../content', `${DOCS_PATHS.deployment.replace(/\/$/, '')}.md`),
  'utf8',
);

it('documents every configuration variable, with its default, from the one definition in config.ts', () => {
  // The table is generated from CONFIG_VARIABLES (typed by ENV, so no variable can lack a row).
  expect(page).toContain('<!-- generated:config-table -->');
  for (const key of Object.keys(ENV) as (keyof typeof ENV)[]) {
    expect(CONFIG_VARIABLES[key].default.length, key).toBeGreaterThan(0);
    expect(CONFIG_VARIABLES[key].about.length, key).toBeGreaterThan(10);
  }
  // The assembled page (npm test assembles the docs before the tests run) has every row.
  const built = readFileSync(
    join(import.meta.dirname, '../../site/src/content/docs', `${DOCS_PATHS.deployment.replace(/\/$/, '')}.md`),
    'utf8',
  );
  const missing = Object.values(ENV).filter((name) => !built.includes(`| \`${name}\` |`));
  expect(missing).toEqual([]);
  expect(built).toContain(
    `| \`${ENV.workerConcurrencyPerShop}\` | ${CONFIG_VARIABLES.workerConcurrencyPerShop.default} |`,
  );
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
