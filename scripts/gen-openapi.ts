// `npm run openapi`: write openapi/agent-operations.openapi.json from the registry, and the
// CLI's agent-command table (api/src/cli/agent-commands.json) derived from the same registry.
// `--check` fails (exit 1) when a committed file differs from what the registry produces.
import { readFileSync, writeFileSync, mkdirSync, existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import { agentCommandsJson } from '../api/src/cli/api-commands.ts';
import { buildOpenApiJson } from '../api/src/http/openapi.ts';
import { OPERATIONS } from '../api/src/operations/registry.ts';

const root = join(import.meta.dirname, '..');
export const OPENAPI_FILE = join(root, 'openapi', 'agent-operations.openapi.json');
export const CLI_TABLE_FILE = join(root, 'api', 'src', 'cli', 'agent-commands.json');

const outputs: [file: string, text: string][] = [
  [OPENAPI_FILE, buildOpenApiJson()],
  [CLI_TABLE_FILE, agentCommandsJson(OPERATIONS)],
];

if (process.argv.includes('--check')) {
  let stale = false;
  for (const [file, text] of outputs) {
    const current = existsSync(file) ? readFileSync(file, 'utf8') : '';
    if (current !== text) {
      console.error(`${relative(root, file)} is stale: run \`npm run openapi\` and commit the result.`);
      stale = true;
    } else console.log(`${relative(root, file)} is up to date.`);
  }
  if (stale) process.exit(1);
} else {
  mkdirSync(join(root, 'openapi'), { recursive: true });
  for (const [file, text] of outputs) {
    writeFileSync(file, text);
    console.log(`wrote ${file}`);
  }
}
